// Small helpers for interop/run.sh, so that the script needs nothing beyond
// bash, coreutils, Go and Node (no curl, jq or python on the CI machine).
//
//   node tools.mjs free-port
//       Prints a TCP port that is free on 127.0.0.1.
//   node tools.mjs wait-http URL SECONDS
//       Polls URL until it answers 200; exits 1 after SECONDS.
//   node tools.mjs get FILE|- PATH
//       Reads JSON and prints the value at PATH (".a.b[0].c", "[-1]"):
//       strings raw, anything else as compact JSON. A file holding several
//       concatenated JSON documents (the a2a CLI's stream output) is read
//       as an array of them. Exits 1 when PATH does not exist.
//   node tools.mjs docs FILE|- PATH
//       Like get, but the input is always read as an array of documents, so
//       "[0]" is the first document even when there is only one.
//   node tools.mjs events FILE|-
//       Summarises a stream as printed by `a2a send --stream -o json` (one
//       StreamResponse per document), one line per event:
//         task TASK_STATE_SUBMITTED <task id>
//         artifactUpdate "<text of the artifact's parts>"
//         statusUpdate TASK_STATE_COMPLETED <task id>
//         message "<text>"
//   node tools.mjs serve-card03 CARD_URL PORT_FILE
//       Serves, at /.well-known/agent-card.json on a free loopback port, the
//       card at CARD_URL with every interface but the 0.3 ones removed, and
//       writes the port to PORT_FILE once listening. The interfaces still
//       point at the original address, so only card discovery goes through
//       this server. Runs until killed.

import { readFileSync, writeFileSync, renameSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';

const [cmd, ...args] = process.argv.slice(2);

function die(msg) {
  process.stderr.write(`tools.mjs ${cmd}: ${msg}\n`);
  process.exit(1);
}

// parseDocuments parses one or more concatenated JSON documents.
function parseDocuments(text) {
  const docs = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    while (i < n && /\s/.test(text[i])) i++;
    if (i >= n) break;
    const start = i;
    let depth = 0;
    let inString = false;
    for (; i < n; i++) {
      const c = text[i];
      if (inString) {
        if (c === '\\') i++;
        else if (c === '"') inString = false;
        continue;
      }
      if (c === '"') inString = true;
      else if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') {
        depth--;
        if (depth === 0) { i++; break; }
      } else if (depth === 0 && /\s/.test(c)) break; // a bare scalar document
    }
    docs.push(JSON.parse(text.slice(start, i)));
  }
  return docs;
}

function readDocuments(file) {
  const text = readFileSync(file === '-' ? 0 : file, 'utf8');
  let docs;
  try {
    docs = parseDocuments(text);
  } catch (e) {
    die(`not JSON (${e.message}): ${text.slice(0, 300)}`);
  }
  if (docs.length === 0) die('no JSON document in the input');
  return docs;
}

function textOf(parts) {
  return (parts || []).map((p) => (typeof p.text === 'string' ? p.text : '')).join('');
}

function lookup(value, path) {
  const re = /\.([A-Za-z_$][\w$-]*)|\[(-?\d+)\]/gy;
  let pos = 0;
  let m;
  while (pos < path.length) {
    re.lastIndex = pos;
    if (!(m = re.exec(path))) die(`bad path ${JSON.stringify(path)} at ${pos}`);
    pos = re.lastIndex;
    if (value === null || value === undefined) return undefined;
    if (m[1] !== undefined) {
      value = value[m[1]];
    } else {
      let k = Number(m[2]);
      if (!Array.isArray(value)) return undefined;
      if (k < 0) k += value.length;
      value = value[k];
    }
  }
  return value;
}

async function main() {
  switch (cmd) {
    case 'free-port': {
      const srv = net.createServer();
      await new Promise((resolve, reject) => srv.once('error', reject).listen(0, '127.0.0.1', resolve));
      const { port } = srv.address();
      await new Promise((resolve) => srv.close(resolve));
      console.log(port);
      return;
    }
    case 'wait-http': {
      const [url, secs] = args;
      const deadline = Date.now() + Number(secs || 30) * 1000;
      let last = '';
      while (Date.now() < deadline) {
        try {
          const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
          if (res.status === 200) return;
          last = `HTTP ${res.status}`;
        } catch (e) {
          last = e.cause?.code || e.message;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      die(`${url} did not answer 200 within ${secs} s (last: ${last})`);
      return;
    }
    case 'get':
    case 'docs': {
      const [file, path] = args;
      if (!file || path === undefined) die(`usage: ${cmd} FILE|- PATH`);
      const docs = readDocuments(file);
      const v = lookup(cmd === 'get' && docs.length === 1 ? docs[0] : docs, path);
      if (v === undefined) die(`no value at ${path}`);
      console.log(typeof v === 'string' ? v : JSON.stringify(v));
      return;
    }
    case 'events': {
      const [file] = args;
      if (!file) die('usage: events FILE|-');
      for (const ev of readDocuments(file)) {
        if (ev.task) console.log(`task ${ev.task.status?.state} ${ev.task.id}`);
        else if (ev.statusUpdate) console.log(`statusUpdate ${ev.statusUpdate.status?.state} ${ev.statusUpdate.taskId}`);
        else if (ev.artifactUpdate) console.log(`artifactUpdate ${JSON.stringify(textOf(ev.artifactUpdate.artifact?.parts))}`);
        else if (ev.message) console.log(`message ${JSON.stringify(textOf(ev.message.parts))}`);
        else console.log(`unknown ${JSON.stringify(ev)}`);
      }
      return;
    }
    case 'serve-card03': {
      const [cardURL, portFile] = args;
      const res = await fetch(cardURL, { signal: AbortSignal.timeout(10000) });
      if (!res.ok) die(`GET ${cardURL}: HTTP ${res.status}`);
      const card = await res.json();
      card.supportedInterfaces = (card.supportedInterfaces || []).filter((i) => i.protocolVersion === '0.3');
      if (card.supportedInterfaces.length === 0) die(`${cardURL} lists no 0.3 interface`);
      const body = JSON.stringify(card);
      const srv = http.createServer((req, res) => {
        if (req.method === 'GET' && req.url.split('?')[0].endsWith('/.well-known/agent-card.json')) {
          res.writeHead(200, { 'Content-Type': 'application/json' });
          res.end(body);
          return;
        }
        res.writeHead(404, { 'Content-Type': 'application/json' });
        res.end('{"error":"not found"}');
      });
      await new Promise((resolve, reject) => srv.once('error', reject).listen(0, '127.0.0.1', resolve));
      writeFileSync(portFile + '.tmp', String(srv.address().port));
      renameSync(portFile + '.tmp', portFile);
      for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => srv.close(() => process.exit(0)));
      return;
    }
    default:
      die('unknown command; see the comment at the top of tools.mjs');
  }
}

main().catch((e) => die(e.stack || String(e)));
