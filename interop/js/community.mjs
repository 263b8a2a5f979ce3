// Runs @a2a-js/sdk 1.3.0 as an outside client against a community's
// address ({base}/c/NAME), over A2A 1.0 and, with the SDK's legacyCompat
// layer, 0.3: a stock client reads the community's card, sends a message
// asking for a skill in its metadata, gets the task of the member that
// discovery chose, follows it with getTask, and gets a JSON-RPC error that
// says no_agent_found for a skill no member offers. Called by
// interop/run.sh; runnable by hand:
//
//   SB_ADDRESS=http://127.0.0.1:PORT/c/NAME SB_TOKEN=sbp_... SB_SKILL=SKILL \
//   SB_ANSWER_PREFIX='reply: ' node community.mjs
//
// The member answers each message with SB_ANSWER_PREFIX and the text.
// Prints one line per check and exits 1 if any failed.

import { randomUUID } from 'node:crypto';
import { Role } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { ADDRESS, TOKEN, start, assert, wire, recordingFetch, expectWire, check, finish } from './harness.mjs';

start('community', 120_000);
const SKILL = process.env.SB_SKILL || '';
const PREFIX = process.env.SB_ANSWER_PREFIX || '';

function textOf(parts) {
  return (parts || [])
    .map((p) => (p.content?.$case === 'text' ? p.content.value : p.text))
    .filter((t) => typeof t === 'string')
    .join('');
}

function answerOf(task) {
  return (task.artifacts || []).map((a) => textOf(a.parts)).join('');
}

function message(text, skill) {
  return {
    message: {
      messageId: randomUUID(),
      role: Role.ROLE_USER,
      parts: [{ content: { $case: 'text', value: text } }],
      metadata: { skill },
    },
  };
}

function factory(compat) {
  const legacyCompat = compat ? { enabled: true } : undefined;
  return new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl: recordingFetch(TOKEN), legacyCompat })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: recordingFetch(null), legacyCompat }),
  });
}

const flavours = [
  { v: '1.0', make: () => factory(false).createFromUrl(`${ADDRESS}/`), send: 'SendMessage', get: 'GetTask', version: '1.0' },
  { v: '0.3', make: () => factory(true).createFromUrl(`${ADDRESS}/.well-known/agent.json`, ''), send: 'message/send', get: 'tasks/get' },
];

for (const f of flavours) {
  let client;
  let taskId;
  await check(`${f.v}: the community's card makes a client`, async () => {
    client = await f.make();
  });
  if (!client) continue;

  await check(`${f.v}: a message asking for skill ${SKILL} goes to a member, whose answer completes the task`, async () => {
    const text = `to the community over ${f.v}`;
    const mark = wire.length;
    const r = await client.sendMessage(message(text, SKILL));
    const task = r.$case === 'task' ? r.value : r.kind === 'task' ? r : r.task || r;
    assert(task && task.id, `no task in the answer: ${JSON.stringify(r)}`);
    taskId = task.id;
    const answer = answerOf(task);
    assert(answer === PREFIX + text, `answer ${JSON.stringify(answer)}, expected ${JSON.stringify(PREFIX + text)}`);
    expectWire(mark, [f.send], f.version);
  });

  await check(`${f.v}: getTask at the community's address follows the task`, async () => {
    assert(taskId, 'no task from the send check');
    const mark = wire.length;
    const t = await client.getTask({ id: taskId, historyLength: 5 });
    assert(t.id === taskId, `getTask returned ${t.id}, expected ${taskId}`);
    expectWire(mark, [f.get], f.version);
  });

  await check(`${f.v}: a skill no member offers is a JSON-RPC error saying no_agent_found, at once`, async () => {
    const started = Date.now();
    let err;
    try {
      await client.sendMessage(message('for nobody', 'no-such-skill'));
    } catch (e) {
      err = e;
    }
    assert(err, 'the send succeeded');
    const said = `${err.message} ${JSON.stringify(err.data ?? err.cause ?? '')}`;
    assert(/no[_ ]agent[_ ]found|no skill/i.test(said), `the error does not say no_agent_found: ${said}`);
    assert(Date.now() - started < 5000, `the error took ${Date.now() - started} ms`);
  });
}

finish('community (@a2a-js/sdk)');
