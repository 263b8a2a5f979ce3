#!/usr/bin/env bash
# Runs the A2A 1.0 conformance suite (a2a-tck) over HTTP+JSON against a
# Switchboard address whose agent is the scripted test agent, as tck.sh runs
# it over JSON-RPC. The suite's REST client reaches the binding only at the
# root of a host, so it goes through interop/tckrestproxy, and the server's
# public URL points at the proxy. docs/conformance.md has the results.
#
#   A2A_TCK_REPO=/path/to/a2a-tck (a clone or a bare mirror) interop/tck_rest.sh
set -euo pipefail
cd "$(dirname "$0")/.."
: "${A2A_TCK_REPO:?set A2A_TCK_REPO to a clone or mirror of github.com/a2aproject/a2a-tck}"
PY=${PYTHON:-/usr/bin/python3}
WORK=$(mktemp -d)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

git clone -q "$A2A_TCK_REPO" "$WORK/tck-1.0"
go build -o "$WORK/switchboard" ./cmd/switchboard
go build -o "$WORK/tckagent" ./interop/tckagent
go build -o "$WORK/tckrestproxy" ./interop/tckrestproxy

PORT=${TCK_PORT:-18390}
PROXY_PORT=$((PORT + 1))
SB="$WORK/switchboard"
export SWITCHBOARD_URL="http://127.0.0.1:$PORT" SWITCHBOARD_DATA="$WORK/data"
"$SB" serve --addr "127.0.0.1:$PORT" --rate-per-minute 0 --default-agent tck \
	--public-url "http://localhost:$PROXY_PORT" --blocking-timeout 1s >"$WORK/server.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
AGENT_TOKEN=$("$SB" --json agent create tck --description "A2A TCK scripted agent" | sed -n 's/.*"agent_token": *"\([^"]*\)".*/\1/p')
PEER_TOKEN=$("$SB" --json token issue --agent tck tck | sed -n 's/.*"token": *"\([^"]*\)".*/\1/p')
"$WORK/tckagent" -server "http://127.0.0.1:$PORT" -token "$AGENT_TOKEN" >"$WORK/agent.log" 2>&1 &
PIDS+=($!)
"$WORK/tckrestproxy" -listen "127.0.0.1:$PROXY_PORT" -target "http://127.0.0.1:$PORT" -prefix /a/tck >"$WORK/proxy.log" 2>&1 &
PIDS+=($!)
sleep 1

pytest() { (cd "$1" && shift && A2A_AUTH_TYPE=bearer A2A_AUTH_TOKEN=$PEER_TOKEN "$PY" -m pytest "$@" \
	--sut-url="http://localhost:$PROXY_PORT" --test-scope=all --transports rest -q --tb=line -p no:cacheprovider \
	${TCK_PYTEST_ARGS:-} 2>&1 | tail -n "${TCK_TAIL:-25}") || true; }

echo "== A2A 1.0 (a2a-tck main) over HTTP+JSON: mandatory"
pytest "$WORK/tck-1.0" tests/mandatory/ -m "mandatory or mandatory_protocol"
for dir in capabilities quality features; do
	echo "== A2A 1.0 (a2a-tck main) over HTTP+JSON: optional $dir"
	pytest "$WORK/tck-1.0" "tests/optional/$dir/"
done
