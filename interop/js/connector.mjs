// The checks of a connector agent (SB_MODE=connector), shared by
// sdk-interop.mjs and sdk03-interop.mjs. The agent is `switchboard connect
// --exec` running the command of interop/run.sh, which, for a message text
// TEXT:
//   - prints "reply: TEXT" (the answer);
//   - when TEXT holds FAIL, prints "boom: TEXT" on stderr and exits 3;
//   - when TEXT holds SLEEP, writes its process id to $SB_MARKS/TASK_ID.pid
//     and sleeps 30 s (a task to cancel).
//
// A script hands connectorChecks one flavour per protocol its SDK speaks:
//   label        prefixes the check names
//   version      the protocol switchboard must record for the tasks
//   wireVersion  the A2A-Version header every call must carry; null: none
//                (the 0.3-only SDK sends none, which means 0.3)
//   m            the JSON-RPC method names: send, stream, get, cancel
//   client       the SDK's client (sendMessage, sendMessageStream, getTask,
//                cancelTask)
//   request(text, immediate)  the params of a send; immediate asks it to
//                return at once (returnImmediately, or 0.3 blocking: false)
//   streamOptions()  the options of sendMessageStream
//   consume, checkStream(events, taskID, answer), taskIdOf(event)  the
//                script's stream reader, its check of a stream that carried
//                answer and ended completed, and the task id of an event
//   reduce(task) the task as these checks read it: {id, state, artifacts,
//                status}, state as 0.3 names it ("submitted", "completed",
//                "failed", "canceled"...), artifacts the text of each
//                artifact, status the text of the status message

import { readFileSync } from 'node:fs';
import { MARKS, assert, wire, expectWire, serverProtocol, check, poll } from './harness.mjs';

const answerTo = (text) => `reply: ${text}`;

// expectTask asserts the task's state and, when given, its artifacts' texts.
function expectTask(t, state, artifacts) {
  assert(t.state === state, `task ${t.id} is ${t.state} (status ${JSON.stringify(t.status)}), expected ${state}`);
  if (artifacts === undefined) return;
  assert(JSON.stringify(t.artifacts) === JSON.stringify(artifacts), `task ${t.id} has the artifacts ${JSON.stringify(t.artifacts)}, expected ${JSON.stringify(artifacts)}`);
}

// commandPid waits until the long-running command of task id has noted its
// process id, and returns it.
function commandPid(id) {
  return poll(`the command of task ${id} did not start`, () => {
    try {
      return Number(readFileSync(`${MARKS}/${id}.pid`, 'utf8'));
    } catch {
      return undefined;
    }
  });
}

// running: the process pid still runs.
function running(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

// connectorChecks runs the checks for the flavour f (see the top of this
// file): blocking send, stream, a failing command, get, and cancel of a
// running command.
export async function connectorChecks(f) {
  const v = `${f.label}, connector agent`;
  const send = async (text, immediate) => f.reduce(await f.client.sendMessage(f.request(text, immediate)));
  const get = async (id) => f.reduce(await f.client.getTask({ id }));
  const cancel = async (id) => f.reduce(await f.client.cancelTask({ id }));
  let answered; // {id, text}: the task of the blocking send

  await check(`${v}: sendMessage blocks until the command answers: completed, its output as artifact`, async () => {
    const text = `hello over ${f.label}`;
    const mark = wire.length;
    const t = await send(text, false);
    expectTask(t, 'completed', [answerTo(text)]);
    expectWire(mark, [f.m.send], f.wireVersion);
    const proto = await serverProtocol(t.id);
    assert(proto === f.version, `switchboard recorded the task as protocol ${proto}, expected ${f.version}`);
    answered = { id: t.id, text };
  });

  await check(`${v}: sendMessageStream carries the command's answer and ends completed`, async () => {
    const text = `stream over ${f.label}`;
    const mark = wire.length;
    let taskID;
    const events = await f.consume(f.client.sendMessageStream(f.request(text, false), f.streamOptions()), async (ev) => {
      taskID = f.taskIdOf(ev);
    });
    f.checkStream(events, taskID, answerTo(text));
    expectWire(mark, [f.m.stream], f.wireVersion);
  });

  await check(`${v}: a command that exits non-zero fails the task with its stderr`, async () => {
    const text = `please FAIL over ${f.label}`;
    const t = await send(text, false);
    expectTask(t, 'failed');
    assert(t.status.includes(`boom: ${text}`), `status message ${JSON.stringify(t.status)} does not hold the command's stderr ${JSON.stringify(`boom: ${text}`)}`);
  });

  await check(`${v}: getTask reads the answered task back`, async () => {
    assert(answered, 'no task from the sendMessage check');
    const mark = wire.length;
    expectTask(await get(answered.id), 'completed', [answerTo(answered.text)]);
    expectWire(mark, [f.m.get], f.wireVersion);
  });

  await check(`${v}: cancelTask on a running command cancels at once and kills the command`, async () => {
    const mark = wire.length;
    const t = await send(`please SLEEP over ${f.label}`, true);
    assert(t.state === 'submitted' || t.state === 'working', `a send that returns at once: task state ${t.state}, expected submitted or working`);
    const pid = await commandPid(t.id);
    const started = Date.now();
    expectTask(await cancel(t.id), 'canceled');
    const took = Date.now() - started;
    assert(took < 2000, `cancelTask took ${took} ms`);
    await poll(`the command (process ${pid}) was not killed`, () => !running(pid), 5000);
    expectTask(await get(t.id), 'canceled');
    expectWire(mark, [f.m.send, f.m.cancel, f.m.get], f.wireVersion);
  });
}
