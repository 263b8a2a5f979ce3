#!/usr/bin/env bash
# Runs the official A2A conformance suite (a2a-tck) against a Switchboard
# address whose agent is a scripted test agent (interop/tckagent) connected
# through the connector protocol. docs/conformance.md explains the setup and
# the results.
#
#   A2A_TCK_REPO=/path/to/a2a-tck (a clone or a bare mirror) interop/tck.sh
#
# Needs Go, git and Debian's python3-* packages for the suite (see
# docs/conformance.md); prints pytest's summary line for each run.
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
git clone -q "$A2A_TCK_REPO" "$WORK/tck-0.3" && git -C "$WORK/tck-0.3" checkout -q 0.3.0.beta4
go build -o "$WORK/switchboard" ./cmd/switchboard
go build -o "$WORK/tckagent" ./interop/tckagent
go build -o "$WORK/tckproxy" ./interop/tckproxy

PORT=${TCK_PORT:-18290}
PROXY_PORT=$((PORT + 1))
SB="$WORK/switchboard"
export SWITCHBOARD_URL="http://127.0.0.1:$PORT" SWITCHBOARD_DATA="$WORK/data"

# serve PUBLIC_URL: (re)start the server with the test agent at the root.
# The suite reads the card at the root of the host; --blocking-timeout 1s
# lets a blocking SendMessage return while the agent is still working, which
# is what the suite's tests of cancel, follow-ups and listing expect (see
# docs/conformance.md).
serve() {
	[ -n "${SERVER_PID:-}" ] && { kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; }
	"$SB" serve --addr "127.0.0.1:$PORT" --rate-per-minute 0 --default-agent tck \
		--public-url "$1" --blocking-timeout 1s >>"$WORK/server.log" 2>&1 &
	SERVER_PID=$!
	PIDS+=("$SERVER_PID")
	for _ in $(seq 100); do
		curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "switchboard did not start"; cat "$WORK/server.log"; exit 1
}

serve "http://localhost:$PORT"
AGENT_TOKEN=$("$SB" --json agent create tck --description "A2A TCK scripted agent" | sed -n 's/.*"agent_token": *"\([^"]*\)".*/\1/p')
PEER_TOKEN=$("$SB" --json token issue --agent tck tck | sed -n 's/.*"token": *"\([^"]*\)".*/\1/p')
"$WORK/tckagent" -server "http://127.0.0.1:$PORT" -token "$AGENT_TOKEN" >"$WORK/agent.log" 2>&1 &
PIDS+=($!)
sleep 1

# TCK_PYTEST_ARGS adds pytest arguments to every run, to look closer at some
# tests: TCK_PYTEST_ARGS="-k push --tb=short".
pytest() { (cd "$1" && shift && "$PY" -m pytest "$@" --test-scope=all --transports jsonrpc -q --tb=line -p no:cacheprovider ${TCK_PYTEST_ARGS:-} 2>&1 | tail -n "${TCK_TAIL:-25}") || true; }

echo "== A2A 1.0 (a2a-tck main): mandatory"
A2A_AUTH_TYPE=bearer A2A_AUTH_TOKEN=$PEER_TOKEN pytest "$WORK/tck-1.0" tests/mandatory/ \
	--sut-url="http://localhost:$PORT" -m "mandatory or mandatory_protocol or mandatory_jsonrpc"
for dir in capabilities quality features; do
	echo "== A2A 1.0 (a2a-tck main): optional $dir"
	A2A_AUTH_TYPE=bearer A2A_AUTH_TOKEN=$PEER_TOKEN pytest "$WORK/tck-1.0" "tests/optional/$dir/" \
		--sut-url="http://localhost:$PORT"
done

# The 0.3 suite cannot send credentials: it goes through a proxy that adds
# the peer token, and the card points at the proxy.
"$WORK/tckproxy" -listen "127.0.0.1:$PROXY_PORT" -target "http://127.0.0.1:$PORT" -token "$PEER_TOKEN" >"$WORK/proxy.log" 2>&1 &
PIDS+=($!)
serve "http://localhost:$PROXY_PORT"
sleep 1
echo "== A2A 0.3 (a2a-tck 0.3.0.beta4): mandatory"
pytest "$WORK/tck-0.3" tests/mandatory/ --sut-url="http://localhost:$PROXY_PORT" -m "mandatory_jsonrpc or mandatory_protocol"
for dir in capabilities quality features; do
	echo "== A2A 0.3 (a2a-tck 0.3.0.beta4): optional $dir"
	pytest "$WORK/tck-0.3" "tests/optional/$dir/" --sut-url="http://localhost:$PROXY_PORT"
done
