// Runs @a2a-js/sdk 0.3.14 (installed under the alias a2a-js-sdk-v03), a
// client written for A2A 0.3 only, against a live Switchboard agent address.
// Unlike the legacyCompat layer of the 1.x SDK (sdk-interop.mjs), this is the
// code 0.3-era peers actually run: it reads `url` and `preferredTransport`
// from the card at /.well-known/agent-card.json (the 0.3 well-known path,
// where Switchboard serves its union card), speaks the 0.3 JSON-RPC methods
// with `kind` discriminators, and sends no A2A-Version header at all, which
// a server must treat as 0.3.
//
// Same environment as sdk-interop.mjs (SB_ADDRESS, SB_TOKEN, SWITCHBOARD_BIN,
// SWITCHBOARD_URL, SWITCHBOARD_DATA), and the same scaffolding, from
// harness.mjs. Exits 1 if any check failed. With SB_MODE=connector (and
// SB_MARKS) the address is a connector agent's: the card checks run as they
// are, and the client from agent-card.json runs the checks of connector.mjs
// instead of the inbox ones.

import { randomUUID } from 'node:crypto';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } from 'a2a-js-sdk-v03/client';
import { ADDRESS, TOKEN, MODE, start, assert, wire, recordingFetch, expectWire, expectRefused, serverProtocol, reply, streamReader, check, finish } from './harness.mjs';
import { connectorChecks } from './connector.mjs';

start('sdk03-interop', 90_000);

// 0.3 parts, messages and events carry a `kind` discriminator.
function textOf(parts) {
  return (parts || []).map((p) => (p.kind === 'text' ? p.text : '')).join('');
}

function userMessage(text) {
  return { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }] } };
}

function describe(events) {
  return JSON.stringify(
    events.map((ev) => {
      if (ev.kind === 'task') return `task:${ev.status?.state}`;
      if (ev.kind === 'status-update') return `status-update:${ev.status?.state}${ev.final ? ':final' : ''}`;
      if (ev.kind === 'artifact-update') return `artifact-update:${textOf(ev.artifact?.parts)}`;
      return ev.kind || '?';
    }),
  );
}

const consume = streamReader(describe);

// checkAnsweredStream: the task first, the answer's artifact, and last the
// completed status update marked final (the 0.3 end-of-stream marker).
function checkAnsweredStream(events, taskID, answer) {
  const seen = describe(events);
  assert(events[0]?.kind === 'task' && events[0].id === taskID, `first event should be task ${taskID}, got ${seen}`);
  const art = events.find((ev) => ev.kind === 'artifact-update');
  assert(art && textOf(art.artifact?.parts) === answer, `no artifact update with ${JSON.stringify(answer)} in ${seen}`);
  const last = events[events.length - 1];
  assert(last.kind === 'status-update' && last.status?.state === 'completed', `last event should be the completed status, got ${seen}`);
  assert(last.final === true, `the last status update is not marked final: ${seen}`);
  assert(last.taskId === taskID, `status update is for task ${last.taskId}, expected ${taskID}`);
}

// connectorFlavour is this SDK's client as connector.mjs takes it: 0.3
// calls without an A2A-Version header (wireVersion null), and no stream
// options (the SDK takes no AbortSignal; consume bounds the wait).
function connectorFlavour(label, client) {
  return {
    label,
    version: '0.3',
    wireVersion: null,
    m: { send: 'message/send', stream: 'message/stream', get: 'tasks/get', cancel: 'tasks/cancel' },
    client,
    consume,
    checkStream: checkAnsweredStream,
    request: (text, immediate) => ({ ...userMessage(text), configuration: { blocking: !immediate } }),
    streamOptions: () => undefined,
    taskIdOf: (ev) => ev.id,
    reduce: (t) => {
      assert(t?.kind === 'task', `expected a task, got ${JSON.stringify(t).slice(0, 300)}`);
      return { id: t.id, state: t.status?.state, artifacts: (t.artifacts || []).map((a) => textOf(a.parts)), status: textOf(t.status?.message?.parts) };
    },
  };
}

console.log(`@a2a-js/sdk 0.3.14 (a 0.3-only client) against ${ADDRESS} (${MODE} agent)`);

const resolver = new DefaultAgentCardResolver({ fetchImpl: recordingFetch(null) });
const sources = [
  // What a 0.3 client fetches by default: the union card at agent-card.json.
  { label: 'agent-card.json', base: `${ADDRESS}/`, path: undefined },
  // The pure 0.3 card.
  { label: 'agent.json', base: `${ADDRESS}/.well-known/agent.json`, path: '' },
];

for (const src of sources) {
  await check(`0.3 card from ${src.label}: url, transport and version for 0.3 clients`, async () => {
    const card = await resolver.resolve(src.base, src.path);
    assert(card.url === ADDRESS, `card url ${card.url}, expected ${ADDRESS}`);
    assert(card.preferredTransport === 'JSONRPC', `preferredTransport ${card.preferredTransport}, expected JSONRPC`);
    assert(String(card.protocolVersion).startsWith('0.3'), `protocolVersion ${card.protocolVersion}, expected 0.3.x`);
    assert(card.capabilities?.streaming === true, 'capabilities.streaming is not true');
  });
}

function factory(token) {
  return new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl: recordingFetch(token) })],
    cardResolver: resolver,
  });
}

for (const src of sources) {
  const v = `0.3 via ${src.label}`;
  const full = src.label === 'agent-card.json';
  let client;
  let sentTask;
  let streamTask;
  const answers = { stream: `streamed answer, ${v}`, subscribe: `subscribed answer, ${v}` };

  await check(`${v}: client from card`, async () => {
    client = await factory(TOKEN).createFromUrl(src.base, src.path);
  });
  if (!client) continue;
  if (MODE === 'connector') {
    if (full) await connectorChecks(connectorFlavour(v, client));
    continue;
  }

  await check(`${v}: message/send without A2A-Version returns a submitted task`, async () => {
    const mark = wire.length;
    const text = `hello from @a2a-js/sdk 0.3.14, ${v}`;
    const r = await client.sendMessage(userMessage(text));
    assert(r.kind === 'task', `expected a task, got ${JSON.stringify(r)}`);
    assert(r.status?.state === 'submitted', `task state ${r.status?.state}, expected submitted`);
    assert((r.history || []).some((m) => textOf(m.parts) === text), 'task history does not hold the message sent');
    expectWire(mark, ['message/send']);
    assert(wire[mark].version === null, `the 0.3 SDK sent A2A-Version ${wire[mark].version}; this check needs it absent`);
    const proto = await serverProtocol(r.id);
    assert(proto === '0.3', `switchboard recorded the task as protocol ${proto}, expected 0.3`);
    sentTask = r;
  });

  if (!full) {
    await check(`${v}: tasks/get reads the task back`, async () => {
      assert(sentTask, 'no task from the send check');
      const t = await client.getTask({ id: sentTask.id });
      assert(t.kind === 'task' && t.id === sentTask.id && t.status?.state === 'submitted', `unexpected task ${JSON.stringify(t)}`);
    });
    continue;
  }

  await check(`${v}: message/send without a token is refused`, async () => {
    const anon = await factory(null).createFromUrl(src.base, src.path);
    await expectRefused(() => anon.sendMessage(userMessage('no token')));
  });

  await check(`${v}: message/stream receives the owner's answer, final, and ends`, async () => {
    const mark = wire.length;
    let taskID;
    const events = await consume(client.sendMessageStream(userMessage(`stream, ${v}`)), async (ev) => {
      assert(ev.kind === 'task' && ev.status?.state === 'submitted', `first stream event ${describe([ev])}, expected the submitted task`);
      taskID = ev.id;
      await reply(taskID, answers.stream);
    });
    checkAnsweredStream(events, taskID, answers.stream);
    expectWire(mark, ['message/stream']);
    streamTask = taskID;
  });

  await check(`${v}: tasks/resubscribe follows a submitted task to its answer`, async () => {
    assert(sentTask, 'no task from the send check');
    const mark = wire.length;
    const events = await consume(client.resubscribeTask({ id: sentTask.id }), async (ev) => {
      assert(ev.kind === 'task', `first event ${describe([ev])}, expected the task snapshot`);
      await reply(sentTask.id, answers.subscribe);
    });
    checkAnsweredStream(events, sentTask.id, answers.subscribe);
    expectWire(mark, ['tasks/resubscribe']);
  });

  await check(`${v}: tasks/get shows the completed tasks with their artifacts`, async () => {
    assert(sentTask && streamTask, 'no tasks from the earlier checks');
    for (const [id, answer] of [[sentTask.id, answers.subscribe], [streamTask, answers.stream]]) {
      const t = await client.getTask({ id, historyLength: 10 });
      assert(t.kind === 'task' && t.id === id, `tasks/get returned ${JSON.stringify(t).slice(0, 200)}`);
      assert(t.status?.state === 'completed', `task ${id} is ${t.status?.state}, expected completed`);
      assert((t.artifacts || []).length === 1, `task ${id} has ${(t.artifacts || []).length} artifacts, expected 1`);
      assert(textOf(t.artifacts[0].parts) === answer, `artifact text ${JSON.stringify(textOf(t.artifacts[0].parts))}, expected ${JSON.stringify(answer)}`);
    }
  });

  await check(`${v}: tasks/cancel cancels a submitted task`, async () => {
    const r = await client.sendMessage(userMessage(`to be canceled, ${v}`));
    const t = await client.cancelTask({ id: r.id });
    assert(t.kind === 'task' && t.id === r.id && t.status?.state === 'canceled', `unexpected answer ${JSON.stringify(t).slice(0, 200)}`);
  });
}

finish(`@a2a-js/sdk 0.3.14 (${MODE} agent)`);
