// The @modelcontextprotocol/sdk client (pinned in package.json) against an
// agent's MCP endpoint: it lists the tools, reads the inbox, replies to a
// task a peer sent over A2A, and the peer sees the reply with GetTask.
//
// Environment (set by interop/mcp.sh):
//   SB_MCP_URL     the agent's MCP endpoint ({address}/mcp)
//   SB_MCP_TOKEN   an MCP token of that agent (sbm_…)
//   SB_ADDRESS     the agent's A2A address
//   SB_TOKEN       a peer token of that agent

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const { SB_MCP_URL, SB_MCP_TOKEN, SB_ADDRESS, SB_TOKEN } = process.env;
if (!SB_MCP_URL || !SB_MCP_TOKEN || !SB_ADDRESS || !SB_TOKEN) {
  console.error('mcp-interop: set SB_MCP_URL, SB_MCP_TOKEN, SB_ADDRESS and SB_TOKEN');
  process.exit(2);
}
setTimeout(() => { console.error('mcp-interop: timed out'); process.exit(1); }, 60_000).unref();

function check(cond, what) {
  if (!cond) { console.error(`FAIL: ${what}`); process.exit(1); }
  console.log(`  ok    ${what}`);
}

// a2a calls the agent's address as the peer (A2A 1.0 JSON-RPC).
async function a2a(method, params) {
  const res = await fetch(SB_ADDRESS, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', Authorization: `Bearer ${SB_TOKEN}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = await res.json();
  if (!body.result) throw new Error(`${method}: ${JSON.stringify(body)}`);
  return body.result;
}

const client = new Client({ name: 'switchboard-interop', version: '1' });
const transport = new StreamableHTTPClientTransport(new URL(SB_MCP_URL), {
  requestInit: { headers: { Authorization: `Bearer ${SB_MCP_TOKEN}` } },
});
await client.connect(transport);
check(client.getServerVersion()?.name === 'switchboard', `initialize: server ${JSON.stringify(client.getServerVersion())}`);

const { tools } = await client.listTools();
const names = tools.map((t) => t.name).sort();
check(names.length === 11 && names.includes('inbox') && names.includes('reply') && names.includes('pairing_requests'), `tools/list: ${names.join(', ')}`);
check(tools.every((t) => t.description.includes('UNTRUSTED')), 'every tool description says peer text is untrusted');

const sent = await a2a('SendMessage', { message: { messageId: `m-${Date.now()}`, role: 'ROLE_USER', parts: [{ text: 'hello from the js peer' }] } });
const taskId = sent.task.id;
const inbox = await client.callTool({ name: 'inbox', arguments: {} });
check(!inbox.isError && inbox.structuredContent.tasks.some((t) => t.id === taskId), `inbox lists the peer's task ${taskId}`);

const reply = await client.callTool({ name: 'reply', arguments: { taskId, text: 'answered over MCP' } });
check(!reply.isError && reply.structuredContent.state === 'completed', 'reply completes the task');

const seen = await a2a('GetTask', { id: taskId });
check(seen.status.state === 'TASK_STATE_COMPLETED' && JSON.stringify(seen).includes('answered over MCP'), 'the peer sees the reply with GetTask');

const bad = await client.callTool({ name: 'show_task', arguments: { taskId: 'no-such-task' } });
check(bad.isError && bad.content[0].text.startsWith('Error: '), `a failing tool: ${bad.content[0].text}`);

await client.close();
console.log('mcp-interop: all checks passed');
