#!/usr/bin/env bash
# MCP interoperability: the @modelcontextprotocol/sdk client (interop/js,
# pinned in package-lock.json) against a live Switchboard server's MCP
# endpoint (interop/js/mcp-interop.mjs). It builds switchboard, starts it on
# a free loopback port with a fresh data directory, creates an inbox agent,
# a peer token and an MCP token with the CLI, and runs the client.
#
#   interop/mcp.sh            (from anywhere)
#
# Needs Go, Node >= 20 and npm (the npm registry on a cold cache).
# INTEROP_SKIP_NPM_CI=1 uses interop/js/node_modules as it is.
set -Eeuo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
TOOLS="$HERE/js/tools.mjs"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/switchboard-mcp-interop.XXXXXX")

cleanup() {
	local rc=$?
	local pids
	pids=$(jobs -pr)
	if [[ -n $pids ]]; then
		# shellcheck disable=SC2086 # one id per word
		kill $pids 2>/dev/null || true
		wait 2>/dev/null || true
	fi
	if [[ $rc -ne 0 ]]; then
		echo "work directory kept: $WORK" >&2
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT

if [[ -z ${INTEROP_SKIP_NPM_CI:-} || ! -d $HERE/js/node_modules ]]; then
	(cd "$HERE/js" && timeout 300 npm ci --no-audit --no-fund --prefer-offline --loglevel=error)
fi
(cd "$ROOT" && go build -o "$WORK/switchboard" ./cmd/switchboard)
SB=$WORK/switchboard

PORT=$(node "$TOOLS" free-port)
BASE="http://127.0.0.1:$PORT"
"$SB" serve --data "$WORK/data" --addr "127.0.0.1:$PORT" >"$WORK/server.log" 2>&1 &
node "$TOOLS" wait-http "$BASE/readyz" 20 || { cat "$WORK/server.log" >&2; exit 1; }
export SWITCHBOARD_URL=$BASE SWITCHBOARD_DATA=$WORK/data

"$SB" agent create desk --mode inbox >/dev/null
PEER=$("$SB" --json token issue --agent desk js-peer | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).token))')
MCP=$("$SB" --json mcp token create --agent desk --label js | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).token))')

SB_MCP_URL="$BASE/a/desk/mcp" SB_MCP_TOKEN=$MCP SB_ADDRESS="$BASE/a/desk" SB_TOKEN=$PEER \
	node "$HERE/js/mcp-interop.mjs"
