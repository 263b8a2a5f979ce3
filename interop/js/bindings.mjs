// Runs @a2a-js/sdk 1.3.0 over the two other A2A bindings a Switchboard
// address serves, each the only transport its client knows, so the client
// must pick that binding's interface from the card:
//
//   - HTTP+JSON, A2A 1.0 (RestTransportFactory, from the card at the
//     address), and A2A 0.3 (the same with legacyCompat, from the pure 0.3
//     card at /.well-known/agent.json, whose 0.3 clients add /v1 to paths);
//   - gRPC, A2A 1.0 (GrpcTransportFactory from @a2a-js/sdk/client/grpc,
//     with @grpc/grpc-js, plaintext h2c to the address's host and port): the
//     card names the agent by its tenant, which the SDK sets on every
//     request itself; the peer token goes as "authorization" metadata.
//
// For each, at an inbox agent (the owner answers with switchboard reply):
// the client picks the binding; a call without a token is refused;
// sendMessage returns a submitted task, recorded by the server under the
// version; sendMessageStream receives the owner's answer and ends;
// resubscribeTask follows a submitted task to its answer; getTask shows the
// tasks completed with their answers; cancelTask cancels. Over HTTP+JSON
// every request's method and path is checked as well.
//
//   SB_ADDRESS=http://127.0.0.1:PORT/a/HANDLE SB_TOKEN=sbp_... \
//   SWITCHBOARD_BIN=… SWITCHBOARD_URL=… SWITCHBOARD_DATA=… node bindings.mjs

import { randomUUID } from 'node:crypto';
import { TaskState, Role, taskStateToJSON } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, RestTransportFactory } from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import { ADDRESS, TOKEN, STREAM_TIMEOUT_MS, start, assert, serverProtocol, reply, switchboard, streamReader, check, finish } from './harness.mjs';

start('bindings', 120_000);

const stateName = (s) => (typeof s === 'number' ? taskStateToJSON(s) : String(s));

function textOf(parts) {
  return (parts || [])
    .map((p) => (p.content?.$case === 'text' ? p.content.value : p.text))
    .filter((t) => typeof t === 'string')
    .join('');
}

// userMessage is a SendMessageRequest with one text part. The gRPC
// transport's encoder needs every field of the message given: it encodes a
// missing string as "undefined" and fails on a missing list.
function userMessage(text) {
  const parts = [{ content: { $case: 'text', value: text } }];
  return { message: { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts, extensions: [], referenceTaskIds: [] } };
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

function checkAnsweredStream(events, taskID, answer) {
  const seen = describe(events);
  assert(events[0]?.payload?.$case === 'task' && events[0].payload.value.id === taskID, `the stream did not begin with task ${taskID}: ${seen}`);
  const art = events.find((ev) => ev.payload?.$case === 'artifactUpdate');
  assert(art && textOf(art.payload.value.artifact?.parts) === answer, `no artifact update with ${JSON.stringify(answer)}: ${seen}`);
  const last = events[events.length - 1].payload;
  assert(last?.$case === 'statusUpdate' && last.value.status?.state === TaskState.TASK_STATE_COMPLETED && last.value.taskId === taskID,
    `the stream did not end with task ${taskID} completed: ${seen}`);
}

// routes records "METHOD PATH" of every request the HTTP+JSON transports
// send (card requests too), and adds the peer token when given one.
const routes = [];
function routingFetch(token) {
  return (input, init = {}) => {
    const headers = new Headers(init.headers || {});
    if (token) headers.set('Authorization', `Bearer ${token}`);
    routes.push(`${(init.method || 'GET').toUpperCase()} ${new URL(String(input)).pathname}`);
    return fetch(input, { ...init, headers });
  };
}

// expectRoutes asserts that the HTTP+JSON requests since mark went to
// these paths (relative to the agent's address path).
function expectRoutes(f, mark, want) {
  if (!f.rest) return;
  const base = new URL(ADDRESS).pathname;
  const got = routes.slice(mark).map((r) => r.replace(` ${base}`, ' '));
  const expected = want.map((w) => w.replace(' /', ` ${f.rest}`));
  assert(JSON.stringify(got) === JSON.stringify(expected), `expected requests ${JSON.stringify(expected)}, the SDK sent ${JSON.stringify(got)}`);
}

const BASE = `${ADDRESS}/`;
const resolver = (compat) => new DefaultAgentCardResolver({ fetchImpl: routingFetch(null), legacyCompat: compat ? { enabled: true } : undefined });

const flavours = [
  {
    label: 'HTTP+JSON 1.0',
    binding: 'HTTP+JSON',
    version: '1.0',
    rest: '/', // the 1.0 routes are at the address
    subscribe: 'POST', // (the proto's route is a GET; Switchboard takes both)
    make: (token) =>
      new ClientFactory({ transports: [new RestTransportFactory({ fetchImpl: routingFetch(token) })], cardResolver: resolver(false) }).createFromUrl(BASE),
    opts: () => ({}),
  },
  {
    label: 'HTTP+JSON 0.3',
    binding: 'HTTP+JSON',
    version: '0.3',
    rest: '/v1/', // 0.3 clients add /v1
    subscribe: 'GET', // (0.3's route is a POST; Switchboard takes both)
    make: (token) =>
      new ClientFactory({
        transports: [new RestTransportFactory({ fetchImpl: routingFetch(token), legacyCompat: { enabled: true } })],
        cardResolver: resolver(true),
      }).createFromUrl(`${ADDRESS}/.well-known/agent.json`, ''),
    opts: () => ({}),
  },
  {
    label: 'gRPC 1.0',
    binding: 'GRPC',
    version: '1.0',
    make: () => new ClientFactory({ transports: [new GrpcTransportFactory()], cardResolver: resolver(false) }).createFromUrl(BASE),
    opts: (token = TOKEN) => (token ? { serviceParameters: { authorization: `Bearer ${token}` } } : {}),
  },
];

console.log(`@a2a-js/sdk over HTTP+JSON and gRPC against ${ADDRESS}`);

for (const f of flavours) {
  const v = f.label;
  let client, anon, sent, streamed;
  const answers = { stream: `streamed answer over ${v}`, subscribe: `subscribed answer over ${v}` };
  const withTimeout = () => ({ ...f.opts(), signal: AbortSignal.timeout(STREAM_TIMEOUT_MS) });

  await check(`${v}: the client picks the ${f.binding} interface from the card`, async () => {
    client = await f.make(TOKEN);
    anon = await f.make(null);
    assert(client.transport.protocolName === f.binding, `the client's transport is ${client.transport.protocolName}, expected ${f.binding}`);
    assert(String(client.protocolVersion).startsWith(f.version), `the client speaks ${client.protocolVersion}, expected ${f.version}`);
  });
  if (!client) continue;

  await check(`${v}: sendMessage without a token is refused`, async () => {
    let err;
    try {
      await anon.sendMessage(userMessage('no token'), f.opts(null));
    } catch (e) {
      err = e;
    }
    assert(err, 'sendMessage without a token succeeded');
    // The HTTP+JSON transports' errors carry the HTTP status (the 0.3
    // one's in its message), the gRPC transport's the gRPC status
    // (16, UNAUTHENTICATED).
    const refused = f.binding === 'GRPC' ? err.status === 16 : err.statusCode === 401 || /Status: 401\b/.test(String(err.message));
    assert(refused, `unexpected error: ${err.message}`);
  });

  await check(`${v}: sendMessage returns a submitted task, recorded as ${f.version}`, async () => {
    const mark = routes.length;
    const text = `hello over ${v} from @a2a-js/sdk`;
    const r = await client.sendMessage(userMessage(text), f.opts());
    assert(r && typeof r.id === 'string' && r.status, `expected a task, got ${JSON.stringify(r)}`);
    assert(r.status.state === TaskState.TASK_STATE_SUBMITTED, `task state ${stateName(r.status.state)}, expected TASK_STATE_SUBMITTED`);
    assert((r.history || []).some((m) => textOf(m.parts) === text), 'the task history does not hold the message sent');
    expectRoutes(f, mark, ['POST /message:send']);
    const proto = await serverProtocol(r.id);
    assert(proto === f.version, `switchboard recorded the task as protocol ${proto}, expected ${f.version}`);
    sent = r;
  });

  await check(`${v}: sendMessageStream receives the owner's answer and ends`, async () => {
    const mark = routes.length;
    let id;
    const events = await consume(client.sendMessageStream(userMessage(`stream over ${v}`), withTimeout()), async (ev) => {
      id = ev.payload?.value?.id;
      await reply(id, answers.stream);
    });
    checkAnsweredStream(events, id, answers.stream);
    expectRoutes(f, mark, ['POST /message:stream']);
    streamed = id;
  });

  await check(`${v}: resubscribeTask follows a submitted task to its answer`, async () => {
    assert(sent, 'no task from the sendMessage check');
    const mark = routes.length;
    const events = await consume(client.resubscribeTask({ id: sent.id }, withTimeout()), async () => {
      await reply(sent.id, answers.subscribe);
    });
    checkAnsweredStream(events, sent.id, answers.subscribe);
    expectRoutes(f, mark, [`${f.subscribe} /tasks/${sent.id}:subscribe`]);
  });

  await check(`${v}: getTask shows the tasks completed with their answers`, async () => {
    assert(sent && streamed, 'no tasks from the earlier checks');
    const mark = routes.length;
    for (const [id, answer] of [[sent.id, answers.subscribe], [streamed, answers.stream]]) {
      const t = await client.getTask({ id, historyLength: 10 }, f.opts());
      assert(t.id === id && t.status.state === TaskState.TASK_STATE_COMPLETED, `task ${id} is ${stateName(t.status?.state)}, expected TASK_STATE_COMPLETED`);
      const arts = (t.artifacts || []).map((a) => textOf(a.parts));
      assert(JSON.stringify(arts) === JSON.stringify([answer]), `task ${id} artifacts ${JSON.stringify(arts)}, expected ${JSON.stringify([answer])}`);
    }
    expectRoutes(f, mark, [`GET /tasks/${sent.id}`, `GET /tasks/${streamed}`]);
  });

  await check(`${v}: cancelTask cancels a submitted task`, async () => {
    const r = await client.sendMessage(userMessage(`to be canceled over ${v}`), f.opts());
    const mark = routes.length;
    const t = await client.cancelTask({ id: r.id }, f.opts());
    assert(t.id === r.id && t.status.state === TaskState.TASK_STATE_CANCELED, `task ${t.id} is ${stateName(t.status?.state)}, expected ${r.id} TASK_STATE_CANCELED`);
    expectRoutes(f, mark, [`POST /tasks/${r.id}:cancel`]);
    const seen = JSON.parse(await switchboard('--json', 'show', r.id)).state;
    assert(seen === 'canceled', `switchboard show says ${seen}, expected canceled`);
  });
}

finish('@a2a-js/sdk over HTTP+JSON and gRPC');
