// The scaffolding that sdk-interop.mjs (@a2a-js/sdk 1.3.0) and
// sdk03-interop.mjs (@a2a-js/sdk 0.3.14) share: the environment set by
// interop/run.sh, the overall watchdog, assertions, the recording fetch with
// its wire log, the switchboard CLI for the owner's side of each task, the
// stream reader and the check runner with its summary line. What depends on
// the SDK (message and event shapes, textOf, describe, the stream checks)
// stays in each script.
//
// Environment (see the scripts' headers):
//   SB_ADDRESS        the agent address (a trailing slash is dropped)
//   SB_TOKEN          a peer token for that agent
//   SWITCHBOARD_BIN   the switchboard CLI (default: switchboard on PATH), which
//                     reads SWITCHBOARD_URL and SWITCHBOARD_DATA itself
//   SB_MODE           inbox (default): an inbox agent, whose tasks the owner
//                     answers with switchboard reply; connector: a connector
//                     agent, run by `switchboard connect --exec` (connector.mjs)
//   SB_MARKS          connector mode: the directory where the agent's command
//                     notes the process id of a long-running task

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const ADDRESS = (process.env.SB_ADDRESS || '').replace(/\/+$/, '');
export const TOKEN = process.env.SB_TOKEN || '';
export const MODE = process.env.SB_MODE || 'inbox';
export const MARKS = process.env.SB_MARKS || '';
const SWITCHBOARD = process.env.SWITCHBOARD_BIN || 'switchboard';
export const STREAM_TIMEOUT_MS = 20_000;

// start checks the environment and arms the watchdog that ends the script
// (exit 1) when its checks do not finish within totalTimeoutMs. name
// prefixes the messages ("sdk-interop", "sdk03-interop").
export function start(name, totalTimeoutMs) {
  if (!ADDRESS || !TOKEN) {
    console.error(`${name}: set SB_ADDRESS (the agent address) and SB_TOKEN (a peer token)`);
    process.exit(2);
  }
  if (!(MODE === 'inbox' || (MODE === 'connector' && MARKS))) {
    console.error(`${name}: SB_MODE is inbox (the default) or connector, which needs SB_MARKS`);
    process.exit(2);
  }
  setTimeout(() => {
    console.error(`${name}: FAIL: the checks did not finish within ${totalTimeoutMs / 1000} s`);
    process.exit(1);
  }, totalTimeoutMs).unref();
}

// ---- assertions -----------------------------------------------------------

// CheckError is a failed assertion: the check runner prints its message
// alone, and the stack of anything else.
export class CheckError extends Error {}

export function assert(cond, msg) {
  if (!cond) throw new CheckError(msg);
}

// poll calls fn every 100 ms until it returns something other than undefined
// or false, and returns that; after timeoutMs it throws a CheckError saying
// what did not happen.
export async function poll(what, fn, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new CheckError(`${what} within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// ---- the wire log ---------------------------------------------------------

// wire records every JSON-RPC call the SDK makes: method and A2A-Version
// header (null when absent, as it is for the 0.3-only SDK).
export const wire = [];

// recordingFetch is the fetchImpl given to the SDK's resolvers and
// transports. It records each JSON-RPC call in wire and, with a token, adds
// "Authorization: Bearer <token>" to every request.
export function recordingFetch(token) {
  return async (input, init = {}) => {
    const headers = new Headers(init.headers || {});
    if (token) headers.set('Authorization', `Bearer ${token}`);
    if ((init.method || 'GET').toUpperCase() === 'POST' && typeof init.body === 'string') {
      let method = '?';
      try {
        method = JSON.parse(init.body).method;
      } catch {}
      wire.push({ method, version: headers.get('A2A-Version') });
    }
    return fetch(input, { ...init, headers });
  };
}

// expectWire asserts that the calls made since mark (a wire.length taken
// before them) used exactly these JSON-RPC methods and, when version is
// given, that each went out with that A2A-Version header. Without version
// the headers are not checked (the 0.3-only SDK sends none; its script
// checks the absence where it matters).
export function expectWire(mark, methods, version) {
  const calls = wire.slice(mark);
  const got = calls.map((c) => c.method);
  assert(JSON.stringify(got) === JSON.stringify(methods), `expected JSON-RPC calls ${JSON.stringify(methods)}, the SDK sent ${JSON.stringify(got)}`);
  if (version === undefined) return;
  for (const c of calls) {
    assert(c.version === version, `${c.method} went out with A2A-Version ${JSON.stringify(c.version)}, expected ${version}`);
  }
}

// expectRefused asserts that send (a call made without a token) fails with
// a 401 / unauthorized error.
export async function expectRefused(send) {
  let err;
  try {
    await send();
  } catch (e) {
    err = e;
  }
  assert(err, 'sendMessage without Authorization succeeded');
  assert(/401|nauthori[sz]ed/i.test(String(err.message)), `unexpected error: ${err.message}`);
}

// ---- the owner's side: the switchboard CLI --------------------------------

export async function switchboard(...args) {
  const { stdout } = await run(SWITCHBOARD, args, { timeout: 15_000, env: process.env });
  return stdout;
}

// serverProtocol is the protocol version Switchboard recorded for a task.
export async function serverProtocol(taskID) {
  return JSON.parse(await switchboard('--json', 'show', taskID)).protocol;
}

// reply answers a task as the owner; completed is also the CLI's default.
export async function reply(taskID, text, state = 'completed') {
  await switchboard('reply', taskID, '--text', text, '--state', state);
}

// ---- streams ---------------------------------------------------------------

// streamReader returns consume(stream, onFirst), which reads a stream to its
// end. After its first event it calls onFirst, which is the owner answering
// the task. It returns the events, or throws a CheckError naming them (as
// describe(events) puts them) when the stream does not end within
// STREAM_TIMEOUT_MS. The 1.x SDK takes an AbortSignal.timeout of that length
// and the aborted stream throws; the 0.3 SDK takes none, so a timer of the
// same length bounds the wait as well.
export function streamReader(describe) {
  return async function consume(stream, onFirst) {
    const events = [];
    const timedOut = () => new CheckError(`stream did not end within ${STREAM_TIMEOUT_MS / 1000} s; got ${describe(events)}`);
    let timer;
    const deadline = new Promise((_, reject) => {
      timer = setTimeout(() => reject(timedOut()), STREAM_TIMEOUT_MS);
      timer.unref();
    });
    const reader = (async () => {
      try {
        for await (const ev of stream) {
          events.push(ev);
          if (events.length === 1) await onFirst(ev);
        }
      } catch (e) {
        if (e.name === 'AbortError' || e.name === 'TimeoutError') throw timedOut();
        throw e;
      }
    })();
    try {
      await Promise.race([reader, deadline]);
    } finally {
      clearTimeout(timer);
    }
    return events;
  };
}

// ---- the check runner ------------------------------------------------------

const results = [];

// check runs one named check and prints one line for it: "  ok    NAME (N ms)"
// or "  FAIL  NAME: why". A failed check does not stop the later ones.
export async function check(name, fn) {
  const started = Date.now();
  try {
    await fn();
    results.push({ name, ok: true });
    console.log(`  ok    ${name} (${Date.now() - started} ms)`);
  } catch (e) {
    results.push({ name, ok: false });
    const msg = e instanceof CheckError ? e.message : e.stack || String(e);
    console.log(`  FAIL  ${name}: ${msg}`);
  }
}

// finish prints "LABEL: P/N checks passed" and exits 1 if any check failed.
export function finish(label) {
  const failed = results.filter((r) => !r.ok);
  console.log(`${label}: ${results.length - failed.length}/${results.length} checks passed`);
  process.exit(failed.length ? 1 : 0);
}
