// Runs @a2a-js/sdk (the official JavaScript A2A SDK) as an outside client
// against a live Switchboard agent address, over A2A 1.0 and over A2A 0.3
// (the SDK's legacyCompat layer). Called by interop/run.sh; runnable by hand:
//
//   SB_ADDRESS=http://127.0.0.1:PORT/a/HANDLE SB_TOKEN=sbp_... \
//   SWITCHBOARD_BIN=/path/to/switchboard SWITCHBOARD_URL=http://127.0.0.1:PORT \
//   SWITCHBOARD_DATA=DIR node sdk-interop.mjs
//
// The owner's side of each task (switchboard reply, switchboard show) runs
// through the switchboard CLI, as an operator would run it. With
// SB_MODE=connector (and SB_MARKS) the address is a connector agent's,
// answered by `switchboard connect --exec`: the card checks run as they
// are, and each protocol runs the checks of connector.mjs instead of the
// inbox ones.
//
// Every JSON-RPC request the SDK sends goes through a recording fetch, so
// each check can assert which wire methods the SDK actually used (e.g.
// "message/stream" for 0.3, "SendStreamingMessage" for 1.0), and the server's
// own record of each task's protocol is checked with `switchboard show`.
//
// Prints one line per check and exits 1 if any failed. The scaffolding it
// shares with sdk03-interop.mjs (environment, wire log, switchboard CLI,
// stream reader, check runner) is in harness.mjs.

import { randomUUID } from 'node:crypto';
import { TaskState, Role, taskStateToJSON } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { ADDRESS, TOKEN, MODE, STREAM_TIMEOUT_MS, start, assert, wire, recordingFetch, expectWire, expectRefused, serverProtocol, reply, streamReader, check, finish } from './harness.mjs';
import { connectorChecks } from './connector.mjs';

start('sdk-interop', 120_000);

// ---- small helpers (the 1.x SDK's shapes) --------------------------------

function stateName(s) {
  return typeof s === 'number' ? taskStateToJSON(s) : String(s);
}

function textOf(parts) {
  return (parts || [])
    .map((p) => (p.content?.$case === 'text' ? p.content.value : p.text))
    .filter((t) => typeof t === 'string')
    .join('');
}

// userMessage is a SendMessageRequest with one text part; extra sets
// taskId and contextId for a follow-up message.
function userMessage(text, extra = {}) {
  return {
    message: {
      messageId: randomUUID(),
      role: Role.ROLE_USER,
      parts: [{ content: { $case: 'text', value: text } }],
      ...extra,
    },
  };
}

function isTask(r) {
  return r && typeof r.id === 'string' && r.status !== undefined;
}

function describe(events) {
  return JSON.stringify(
    events.map((ev) => {
      const { $case, value } = ev.payload || {};
      if ($case === 'task') return `task:${stateName(value.status?.state)}`;
      if ($case === 'statusUpdate') return `statusUpdate:${stateName(value.status?.state)}`;
      if ($case === 'artifactUpdate') return `artifactUpdate:${textOf(value.artifact?.parts)}`;
      return $case || '?';
    }),
  );
}

const consume = streamReader(describe);

// checkAnsweredStream checks the events of a stream whose task the owner
// completed with answer: the task snapshot first, the artifact with the
// answer, and the completed status last.
function checkAnsweredStream(events, taskID, answer) {
  const seen = describe(events);
  assert(events.length >= 2, `expected at least a task and a status update, got ${seen}`);
  const first = events[0].payload;
  assert(first?.$case === 'task', `first event should be the task, got ${seen}`);
  assert(first.value.id === taskID, `first event is task ${first.value.id}, expected ${taskID}`);
  const art = events.find((ev) => ev.payload?.$case === 'artifactUpdate');
  assert(art, `no artifact update in ${seen}`);
  assert(textOf(art.payload.value.artifact?.parts) === answer, `artifact text ${JSON.stringify(textOf(art.payload.value.artifact?.parts))}, expected ${JSON.stringify(answer)}`);
  const last = events[events.length - 1].payload;
  assert(last?.$case === 'statusUpdate', `last event should be a status update, got ${seen}`);
  assert(last.value.status?.state === TaskState.TASK_STATE_COMPLETED, `last status is ${stateName(last.value.status?.state)}, expected TASK_STATE_COMPLETED`);
  assert(last.value.taskId === taskID, `status update is for task ${last.value.taskId}, expected ${taskID}`);
}

// connectorFlavour is the flavour f, with its client, as connector.mjs
// takes it.
function connectorFlavour(f, client) {
  return {
    ...f,
    wireVersion: f.version,
    client,
    consume,
    checkStream: checkAnsweredStream,
    request: (text, immediate) => ({ ...userMessage(text), configuration: { returnImmediately: immediate } }),
    streamOptions: () => ({ signal: AbortSignal.timeout(STREAM_TIMEOUT_MS) }),
    taskIdOf: (ev) => ev.payload?.value?.id,
    reduce: (t) => {
      assert(isTask(t), `expected a task, got ${JSON.stringify(t)}`);
      const state = stateName(t.status.state).replace(/^TASK_STATE_/, '').toLowerCase().replace(/_/g, '-');
      return { id: t.id, state, artifacts: (t.artifacts || []).map((a) => textOf(a.parts)), status: textOf(t.status.message?.parts) };
    },
  };
}

// ---- card resolution ------------------------------------------------------

// The SDK resolves the well-known path against the base URL as a relative
// URL (new URL(path, base)), so "…/a/alice" would become
// "…/a/.well-known/agent-card.json". Base URLs therefore carry a trailing
// slash, which is also the form Switchboard prints for addresses; the full
// card URL with an empty path works as well.
const BASE = `${ADDRESS}/`;
const defaultResolver = new DefaultAgentCardResolver({ fetchImpl: recordingFetch(null) });
const compatResolver = new DefaultAgentCardResolver({ fetchImpl: recordingFetch(null), legacyCompat: { enabled: true } });

function interfacesOf(card) {
  return (card.supportedInterfaces || []).map((i) => `${i.protocolBinding} ${i.protocolVersion} ${i.url}`);
}

function expectUnionCard(card) {
  const ifs = interfacesOf(card);
  assert(ifs.includes(`JSONRPC 1.0 ${ADDRESS}`), `no JSONRPC 1.0 interface at ${ADDRESS}: ${JSON.stringify(ifs)}`);
  assert(ifs.includes(`JSONRPC 0.3 ${ADDRESS}`), `no JSONRPC 0.3 interface at ${ADDRESS}: ${JSON.stringify(ifs)}`);
  assert(card.capabilities?.streaming === true, 'capabilities.streaming is not true');
  assert(typeof card.name === 'string' && card.name !== '', 'card has no name');
}

console.log(`@a2a-js/sdk against ${ADDRESS} (${MODE} agent)`);

await check('card: default (1.0) resolver, address with trailing slash', async () => {
  expectUnionCard(await defaultResolver.resolve(BASE));
});

await check('card: default (1.0) resolver, full agent-card.json URL', async () => {
  expectUnionCard(await defaultResolver.resolve(`${ADDRESS}/.well-known/agent-card.json`, ''));
});

await check('card: legacyCompat resolver reads the union card as a 1.0 card', async () => {
  expectUnionCard(await compatResolver.resolve(BASE));
});

// A client that asks for 1.0 gets, beside bearer, the pairing scheme: an
// OAuth 2.0 scheme with the device code flow (docs/protocol.md).
const v1Fetch = (input, init = {}) => {
  const headers = new Headers(init.headers || {});
  headers.set('A2A-Version', '1.0');
  return recordingFetch(null)(input, { ...init, headers });
};
await check('card: asked for 1.0, the card with the pairing scheme (device code flow) parses', async () => {
  const card = await new DefaultAgentCardResolver({ fetchImpl: v1Fetch }).resolve(BASE);
  expectUnionCard(card);
  const schemes = JSON.stringify(card.securitySchemes || {});
  assert(schemes.includes(`${ADDRESS}/oauth/device_authorization`), `no pairing scheme with the device code flow: ${schemes}`);
});

await check('card: legacyCompat resolver reads the pure 0.3 card at /.well-known/agent.json', async () => {
  const card = await compatResolver.resolve(`${ADDRESS}/.well-known/agent.json`, '');
  const ifs = card.supportedInterfaces || [];
  assert(ifs.length > 0, 'the 0.3 card became a card without interfaces');
  // JSON-RPC at the address, and HTTP+JSON (0.3's /v1 routes) under it.
  const want = { JSONRPC: ADDRESS, 'HTTP+JSON': `${ADDRESS}/` };
  for (const i of ifs) {
    assert(i.protocolBinding in want, `interface binding ${i.protocolBinding}, expected JSONRPC or HTTP+JSON`);
    assert(String(i.protocolVersion).startsWith('0.3'), `interface version ${i.protocolVersion}, expected 0.3`);
    assert(i.url === want[i.protocolBinding], `${i.protocolBinding} interface url ${i.url}, expected ${want[i.protocolBinding]}`);
  }
  assert(ifs.some((i) => i.protocolBinding === 'JSONRPC'), 'the 0.3 card lost its JSON-RPC interface');
});

// ---- clients --------------------------------------------------------------

// Authentication: the SDK's transports call fetchImpl for every request, so
// a fetch that adds "Authorization: Bearer <peer token>" is all it takes
// (createAuthenticatingFetchWithRetry does the same plus retries on 401).
function factory({ compat, token = TOKEN }) {
  const legacyCompat = compat ? { enabled: true } : undefined;
  return new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl: recordingFetch(token), legacyCompat })],
    cardResolver: compat ? compatResolver : defaultResolver,
  });
}

const flavours = [
  {
    label: '1.0',
    version: '1.0',
    make: (token) => factory({ compat: false, token }).createFromUrl(BASE),
    m: { send: 'SendMessage', stream: 'SendStreamingMessage', get: 'GetTask', cancel: 'CancelTask', subscribe: 'SubscribeToTask' },
  },
  {
    label: '0.3',
    version: '0.3',
    // A legacyCompat client that found the pure 0.3 card: its interfaces
    // are stamped 0.3, so the factory picks the SDK's v0.3 JSON-RPC transport.
    make: (token) => factory({ compat: true, token }).createFromUrl(`${ADDRESS}/.well-known/agent.json`, ''),
    m: { send: 'message/send', stream: 'message/stream', get: 'tasks/get', cancel: 'tasks/cancel', subscribe: 'tasks/resubscribe' },
  },
];

for (const f of flavours) {
  const v = f.label;
  let client;
  let sentTask; // a task created by a plain send, still submitted
  let streamTask;
  const answers = { stream: `streamed answer over ${v}`, subscribe: `subscribed answer over ${v}` };

  await check(`${v}: client from card speaks ${f.version}`, async () => {
    client = await f.make(TOKEN);
    assert(String(client.protocolVersion).startsWith(f.version), `client negotiated protocol ${client.protocolVersion}, expected ${f.version}`);
  });
  if (!client) continue;
  if (MODE === 'connector') {
    await connectorChecks(connectorFlavour(f, client));
    continue;
  }

  await check(`${v}: sendMessage without a token is refused`, async () => {
    const anon = await f.make(null);
    await expectRefused(() => anon.sendMessage(userMessage('no token')));
  });

  await check(`${v}: sendMessage returns a submitted task`, async () => {
    const mark = wire.length;
    const text = `hello over ${v} from @a2a-js/sdk`;
    const r = await client.sendMessage(userMessage(text));
    assert(isTask(r), `expected a task, got ${JSON.stringify(r)}`);
    assert(r.status.state === TaskState.TASK_STATE_SUBMITTED, `task state ${stateName(r.status.state)}, expected TASK_STATE_SUBMITTED`);
    assert(r.contextId, 'task has no contextId');
    assert((r.history || []).some((m) => textOf(m.parts) === text), 'task history does not hold the message sent');
    expectWire(mark, [f.m.send], f.version);
    const proto = await serverProtocol(r.id);
    assert(proto === f.version, `switchboard recorded the task as protocol ${proto}, expected ${f.version}`);
    sentTask = r;
  });

  await check(`${v}: sendMessageStream receives the owner's answer and ends`, async () => {
    const mark = wire.length;
    const signal = AbortSignal.timeout(STREAM_TIMEOUT_MS);
    let taskID;
    const events = await consume(client.sendMessageStream(userMessage(`stream over ${v}`), { signal }), async (ev) => {
      assert(ev.payload?.$case === 'task', `first stream event is ${ev.payload?.$case}, expected task`);
      assert(ev.payload.value.status.state === TaskState.TASK_STATE_SUBMITTED, `first event state ${stateName(ev.payload.value.status.state)}`);
      taskID = ev.payload.value.id;
      await reply(taskID, answers.stream);
    });
    checkAnsweredStream(events, taskID, answers.stream);
    expectWire(mark, [f.m.stream], f.version);
    const proto = await serverProtocol(taskID);
    assert(proto === f.version, `switchboard recorded the task as protocol ${proto}, expected ${f.version}`);
    streamTask = taskID;
  });

  await check(`${v}: resubscribeTask follows a submitted task to its answer`, async () => {
    assert(sentTask, 'no task from the sendMessage check');
    const mark = wire.length;
    const signal = AbortSignal.timeout(STREAM_TIMEOUT_MS);
    const events = await consume(client.resubscribeTask({ id: sentTask.id }, { signal }), async (ev) => {
      assert(ev.payload?.$case === 'task', `first event is ${ev.payload?.$case}, expected the task snapshot`);
      await reply(sentTask.id, answers.subscribe);
    });
    checkAnsweredStream(events, sentTask.id, answers.subscribe);
    expectWire(mark, [f.m.subscribe], f.version);
  });

  await check(`${v}: getTask shows the completed tasks with their artifacts`, async () => {
    assert(sentTask && streamTask, 'no tasks from the earlier checks');
    const mark = wire.length;
    for (const [id, answer] of [[sentTask.id, answers.subscribe], [streamTask, answers.stream]]) {
      const t = await client.getTask({ id, historyLength: 10 });
      assert(t.id === id, `getTask returned task ${t.id}, expected ${id}`);
      assert(t.status.state === TaskState.TASK_STATE_COMPLETED, `task ${id} is ${stateName(t.status.state)}, expected TASK_STATE_COMPLETED`);
      const arts = t.artifacts || [];
      assert(arts.length === 1, `task ${id} has ${arts.length} artifacts, expected 1`);
      assert(textOf(arts[0].parts) === answer, `artifact text ${JSON.stringify(textOf(arts[0].parts))}, expected ${JSON.stringify(answer)}`);
      const agentMsgs = (t.history || []).filter((m) => m.role === Role.ROLE_AGENT);
      assert(agentMsgs.some((m) => textOf(m.parts) === answer), `task ${id} history has no agent message with the answer`);
    }
    expectWire(mark, [f.m.get, f.m.get], f.version);
  });

  await check(`${v}: cancelTask cancels a submitted task`, async () => {
    const r = await client.sendMessage(userMessage(`to be canceled over ${v}`));
    assert(isTask(r), `expected a task, got ${JSON.stringify(r)}`);
    const mark = wire.length;
    const t = await client.cancelTask({ id: r.id });
    assert(t.id === r.id, `cancelTask returned task ${t.id}, expected ${r.id}`);
    assert(t.status.state === TaskState.TASK_STATE_CANCELED, `task state ${stateName(t.status.state)}, expected TASK_STATE_CANCELED`);
    expectWire(mark, [f.m.cancel], f.version);
  });

  await check(`${v}: input-required, then a follow-up message continues the task`, async () => {
    const question = `which one? (over ${v})`;
    const answer = `the blue one it is (over ${v})`;
    let taskID, contextID;
    // Turn 1: the owner asks back; the stream ends at the interrupted state.
    const turn1 = await consume(client.sendMessageStream(userMessage(`multi-turn over ${v}`), { signal: AbortSignal.timeout(STREAM_TIMEOUT_MS) }), async (ev) => {
      taskID = ev.payload?.value?.id;
      contextID = ev.payload?.value?.contextId;
      await reply(taskID, question, 'input-required');
    });
    const last = turn1[turn1.length - 1].payload;
    assert(last?.$case === 'statusUpdate' && last.value.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED, `turn 1 did not end at input-required: ${describe(turn1)}`);
    assert(textOf(last.value.status.message?.parts) === question, `input-required status message ${JSON.stringify(textOf(last.value.status.message?.parts))}, expected ${JSON.stringify(question)}`);
    // Turn 2: a message with the task's id continues the same task.
    const mark = wire.length;
    const turn2 = await consume(client.sendMessageStream(userMessage('the blue one', { taskId: taskID, contextId: contextID }), { signal: AbortSignal.timeout(STREAM_TIMEOUT_MS) }), async (ev) => {
      assert(ev.payload?.$case === 'task' && ev.payload.value.id === taskID, `the follow-up went to another task: ${describe([ev])}`);
      assert(ev.payload.value.status.state === TaskState.TASK_STATE_SUBMITTED, `after the follow-up the task is ${stateName(ev.payload.value.status.state)}, expected TASK_STATE_SUBMITTED`);
      await reply(taskID, answer);
    });
    checkAnsweredStream(turn2, taskID, answer);
    expectWire(mark, [f.m.stream], f.version);
    const t = await client.getTask({ id: taskID, historyLength: 10 });
    const roles = (t.history || []).map((m) => (m.role === Role.ROLE_USER ? 'user' : m.role === Role.ROLE_AGENT ? 'agent' : String(m.role)));
    assert(JSON.stringify(roles) === '["user","agent","user","agent"]', `task history roles ${JSON.stringify(roles)}, expected user, agent, user, agent`);
  });

  if (f.version === '1.0') {
    await check('1.0: listTasks lists the tasks sent with this token', async () => {
      assert(sentTask && streamTask, 'no tasks from the earlier checks');
      const mark = wire.length;
      // Every field of the SDK's ListTasksRequest type is given: a missing
      // status enum would be serialised as "UNRECOGNIZED".
      const page = await client.listTasks({
        tenant: '',
        contextId: '',
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageSize: 100,
        pageToken: '',
        statusTimestampAfter: undefined,
      });
      const ids = (page.tasks || []).map((t) => t.id);
      for (const id of [sentTask.id, streamTask]) assert(ids.includes(id), `task ${id} is missing from ListTasks: ${JSON.stringify(ids)}`);
      expectWire(mark, ['ListTasks'], '1.0');
    });
  }
}

if (MODE === 'inbox') await check('legacyCompat client on the union card prefers 1.0', async () => {
  const client = await factory({ compat: true }).createFromUrl(BASE);
  assert(client.protocolVersion === '1.0', `client negotiated protocol ${client.protocolVersion}, expected 1.0`);
  const mark = wire.length;
  const r = await client.sendMessage(userMessage('hello from a legacyCompat client'));
  assert(isTask(r) && r.status.state === TaskState.TASK_STATE_SUBMITTED, `expected a submitted task, got ${JSON.stringify(r)}`);
  expectWire(mark, ['SendMessage'], '1.0');
});

finish(`@a2a-js/sdk (${MODE} agent)`);
