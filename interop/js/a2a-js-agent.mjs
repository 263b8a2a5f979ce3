// A plain @a2a-js/sdk A2A server (no Switchboard in it), for interop/run.sh
// to check that `switchboard send` talks to a2a-js servers.
//
//   node a2a-js-agent.mjs 1.0|0.3 PORT_FILE
//
// With TLS_CERT and TLS_KEY set (PEM files), it serves https with them (a
// front's upstream must be https).
//
// 1.0 runs @a2a-js/sdk 1.3.0 (A2A 1.0 only: no legacyCompat); 0.3 runs
// @a2a-js/sdk 0.3.14 (npm alias a2a-js-sdk-v03, A2A 0.3 only). Each is the
// SDK's own DefaultRequestHandler, InMemoryTaskStore and
// JsonRpcTransportHandler, served with node:http (the SDK's Express
// adapters need express, which interop/js does not install) on a free port
// of 127.0.0.1:
//   GET  /.well-known/agent-card.json   the agent card (0.3 also at
//                                       /.well-known/agent.json, the path
//                                       of 0.3 before 0.3.0)
//   POST /a2a/jsonrpc                   JSON-RPC (the card's URL)
// It writes the port to PORT_FILE once listening, prints one line per
// JSON-RPC call to stdout ("rpc METHOD a2a-version=HEADER peer=X-A2A-PEER
// auth=AUTHORIZATION"; "-" when a header is absent) and runs until killed.
//
// Its executor answers every message: the task goes submitted, then working,
// and after ANSWER_DELAY_MS completes with one artifact "js got: TEXT". A
// text starting with "ask:" instead stops the task in input-required, with
// the status message "js asks: which one?"; the next message on that task
// completes it as above. The server takes push notification configs and
// pushes every change of their tasks (the SDK's
// DefaultPushNotificationSender: 1.0 StreamResponse or 0.3 task, with the
// config's token in X-A2A-Notification-Token).

import { readFileSync, writeFileSync, renameSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';

const [version, portFile] = process.argv.slice(2);
if (!['1.0', '0.3'].includes(version) || !portFile) {
  process.stderr.write('usage: node a2a-js-agent.mjs 1.0|0.3 PORT_FILE\n');
  process.exit(2);
}

const RPC_PATH = '/a2a/jsonrpc';
const ANSWER_DELAY_MS = 300; // so that a send that returns at once sees the task unfinished
const MAX_BODY = 1 << 20;
const answerTo = (text) => `js got: ${text}`;
const QUESTION = 'js asks: which one?';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The agent card as JSON, in the shape of the version, for the server at base.
function cardJSON(base) {
  const common = {
    name: `a2a-js ${version} echo`,
    description: `A plain @a2a-js/sdk server (A2A ${version}) that echoes each message.`,
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: true },
    skills: [{ id: 'echo', name: 'echo', description: 'Answers "js got: TEXT".', tags: ['echo'] }],
  };
  if (version === '1.0') {
    return {
      ...common,
      supportedInterfaces: [{ url: base + RPC_PATH, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
    };
  }
  return {
    ...common,
    protocolVersion: '0.3.0',
    url: base + RPC_PATH,
    preferredTransport: 'JSONRPC',
    defaultInputModes: ['text'],
    defaultOutputModes: ['text'],
  };
}

// textOf joins the text parts of a message (either version's shape).
function textOf(parts) {
  return (parts || [])
    .map((p) => (p.content?.$case === 'text' ? p.content.value : typeof p.text === 'string' ? p.text : ''))
    .join('');
}

// Executor of A2A 1.0 (@a2a-js/sdk 1.3.0): events are the SDK's proto
// objects, built from their JSON form.
async function executor10(sdk, server) {
  const { Task, TaskStatusUpdateEvent, TaskArtifactUpdateEvent } = sdk;
  const { AgentEvent } = server;
  const status = (ctx, state, message) =>
    AgentEvent.statusUpdate(TaskStatusUpdateEvent.fromJSON({
      taskId: ctx.taskId,
      contextId: ctx.contextId,
      status: { state, timestamp: new Date().toISOString(), ...(message && { message }) },
    }));
  return {
    async execute(ctx, bus) {
      const text = textOf(ctx.userMessage.parts);
      const followUp = ctx.task !== undefined;
      // The first event is always the task, also on a follow-up turn.
      bus.publish(AgentEvent.task(ctx.task ?? Task.fromJSON({
        id: ctx.taskId,
        contextId: ctx.contextId,
        status: { state: 'TASK_STATE_SUBMITTED', timestamp: new Date().toISOString() },
      })));
      bus.publish(status(ctx, 'TASK_STATE_WORKING'));
      await sleep(ANSWER_DELAY_MS);
      if (!followUp && text.startsWith('ask:')) {
        bus.publish(status(ctx, 'TASK_STATE_INPUT_REQUIRED', {
          messageId: `q-${ctx.taskId}`, role: 'ROLE_AGENT', taskId: ctx.taskId, contextId: ctx.contextId,
          parts: [{ text: QUESTION }],
        }));
      } else {
        bus.publish(AgentEvent.artifactUpdate(TaskArtifactUpdateEvent.fromJSON({
          taskId: ctx.taskId,
          contextId: ctx.contextId,
          artifact: { artifactId: `answer-${ctx.userMessage.messageId}`, name: 'answer', parts: [{ text: answerTo(text) }] },
        })));
        bus.publish(status(ctx, 'TASK_STATE_COMPLETED'));
      }
      bus.finished();
    },
    async cancelTask(taskId, bus) {
      bus.publish(AgentEvent.statusUpdate(TaskStatusUpdateEvent.fromJSON({
        taskId, status: { state: 'TASK_STATE_CANCELED', timestamp: new Date().toISOString() },
      })));
      bus.finished();
    },
  };
}

// Executor of A2A 0.3 (@a2a-js/sdk 0.3.14): events are plain 0.3 objects.
function executor03() {
  const status = (ctx, state, final, message) => ({
    kind: 'status-update',
    taskId: ctx.taskId,
    contextId: ctx.contextId,
    status: { state, timestamp: new Date().toISOString(), ...(message && { message }) },
    final,
  });
  return {
    async execute(ctx, bus) {
      const text = textOf(ctx.userMessage.parts);
      const followUp = ctx.task !== undefined;
      if (!followUp) {
        bus.publish({
          kind: 'task',
          id: ctx.taskId,
          contextId: ctx.contextId,
          status: { state: 'submitted', timestamp: new Date().toISOString() },
          history: [ctx.userMessage],
        });
      }
      bus.publish(status(ctx, 'working', false));
      await sleep(ANSWER_DELAY_MS);
      if (!followUp && text.startsWith('ask:')) {
        bus.publish(status(ctx, 'input-required', true, {
          kind: 'message', messageId: `q-${ctx.taskId}`, role: 'agent', taskId: ctx.taskId, contextId: ctx.contextId,
          parts: [{ kind: 'text', text: QUESTION }],
        }));
      } else {
        bus.publish({
          kind: 'artifact-update',
          taskId: ctx.taskId,
          contextId: ctx.contextId,
          artifact: { artifactId: `answer-${ctx.userMessage.messageId}`, name: 'answer', parts: [{ kind: 'text', text: answerTo(text) }] },
        });
        bus.publish(status(ctx, 'completed', true));
      }
      bus.finished();
    },
    async cancelTask(taskId, bus) {
      bus.publish({ kind: 'status-update', taskId, contextId: '', status: { state: 'canceled' }, final: true });
      bus.finished();
    },
  };
}

// setup returns the JSON-RPC handler and how to build a call's context.
async function setup(card) {
  if (version === '1.0') {
    const sdk = await import('@a2a-js/sdk');
    const server = await import('@a2a-js/sdk/server');
    const pushes = new server.InMemoryPushNotificationStore();
    const handler = new server.DefaultRequestHandler(sdk.AgentCard.fromJSON(card), new server.InMemoryTaskStore(),
      await executor10(sdk, server), undefined, pushes, new server.DefaultPushNotificationSender(pushes));
    return {
      rpc: new server.JsonRpcTransportHandler(handler),
      async context(req) {
        const requestedVersion = req.headers['a2a-version'] || undefined;
        const ctx = server.defaultServerCallContextBuilder({
          extensions: undefined, user: new server.UnauthenticatedUser(), headers: req.headers, requestedVersion,
        });
        // As the SDK's Express adapter does: a version the card does not
        // declare is refused (no header means 0.3, which this card lacks).
        server.validateVersion(ctx.requestedVersion, await handler.getAgentCard(), 'JSONRPC');
        return ctx;
      },
      errorOf: (e) => server.JsonRpcTransportHandler.mapToJSONRPCError(e),
    };
  }
  const server = await import('a2a-js-sdk-v03/server');
  const pushes = new server.InMemoryPushNotificationStore();
  const handler = new server.DefaultRequestHandler(card, new server.InMemoryTaskStore(), executor03(), undefined, pushes,
    new server.DefaultPushNotificationSender(pushes));
  return {
    rpc: new server.JsonRpcTransportHandler(handler),
    context: async () => new server.ServerCallContext(undefined, new server.UnauthenticatedUser()),
    errorOf: (e) => (e instanceof server.A2AError ? e : server.A2AError.internalError(String(e?.message || e))).toJSONRPCError(),
  };
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let n = 0;
    req.on('data', (c) => {
      n += c.length;
      if (n > MAX_BODY) {
        reject(new Error('request body too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJSON(res, status, value) {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

async function main() {
  let card; // set once the port is known
  let api;
  const tls = process.env.TLS_CERT && process.env.TLS_KEY;
  const handler = async (req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    try {
      if (req.method === 'GET' && (path === '/.well-known/agent-card.json' || (version === '0.3' && path === '/.well-known/agent.json'))) {
        sendJSON(res, 200, card);
        return;
      }
      if (path !== RPC_PATH) {
        sendJSON(res, 404, { error: 'not found' });
        return;
      }
      if (req.method !== 'POST') {
        sendJSON(res, 405, { error: 'POST only' });
        return;
      }
      const text = await readBody(req);
      let body;
      try {
        body = JSON.parse(text);
      } catch {
        body = text; // the transport handler answers with a parse error
      }
      console.log(`rpc ${body?.method ?? '?'} a2a-version=${req.headers['a2a-version'] || '-'} peer=${req.headers['x-a2a-peer'] || '-'} auth=${req.headers.authorization || '-'}`);
      let out;
      try {
        out = await api.rpc.handle(body, await api.context(req));
      } catch (e) {
        out = { jsonrpc: '2.0', id: body?.id ?? null, error: api.errorOf(e) };
      }
      if (typeof out?.[Symbol.asyncIterator] === 'function') {
        res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
        try {
          for await (const ev of out) res.write(`data: ${JSON.stringify(ev)}\n\n`);
        } catch (e) {
          res.write(`event: error\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: body?.id ?? null, error: api.errorOf(e) })}\n\n`);
        }
        res.end();
        return;
      }
      sendJSON(res, 200, out);
    } catch (e) {
      process.stderr.write(`a2a-js-agent: ${req.method} ${path}: ${e?.stack || e}\n`);
      if (!res.headersSent) sendJSON(res, 500, { error: String(e?.message || e) });
      else res.end();
    }
  };
  const srv = tls
    ? https.createServer({ cert: readFileSync(process.env.TLS_CERT), key: readFileSync(process.env.TLS_KEY) }, handler)
    : http.createServer(handler);
  srv.requestTimeout = 30_000;
  srv.headersTimeout = 10_000;
  await new Promise((resolve, reject) => srv.once('error', reject).listen(0, '127.0.0.1', resolve));
  const base = `${tls ? 'https' : 'http'}://127.0.0.1:${srv.address().port}`;
  card = cardJSON(base);
  api = await setup(card);
  // Written whole, then renamed: a reader never sees a partial port.
  writeFileSync(`${portFile}.tmp`, `${srv.address().port}\n`);
  renameSync(`${portFile}.tmp`, portFile);
  console.log(`a2a-js ${version} agent listening at ${base} (card ${base}/.well-known/agent-card.json, JSON-RPC ${base}${RPC_PATH})`);
  for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
}

main().catch((e) => {
  process.stderr.write(`a2a-js-agent: ${e?.stack || e}\n`);
  process.exit(1);
});
