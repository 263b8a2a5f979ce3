#!/usr/bin/env bash
# Runs the A2A 1.0 conformance suite (a2a-tck) over gRPC against a
# Switchboard address whose agent is the scripted test agent, as tck.sh
# runs it over JSON-RPC and tck_rest.sh over HTTP+JSON.
#
# The suite ships gRPC stubs generated for protobuf 5.29, which Debian 12's
# python3-protobuf (4.21) refuses to load, so this script generates them
# again with Debian's protoc (protobuf-compiler 3.21) and gRPC plugin
# (protobuf-compiler-grpc 1.51) from the suite's own current_spec/a2a.proto.
# Debian has no googleapis protos, so the google.api annotations (HTTP
# routes, field behaviour, method signatures: options, nothing on the wire)
# are taken out of that copy of the proto first.
#
# The suite's gRPC client sends no tenant and needs a scheme in the gRPC
# interface's URL; interop/tckgrpcproxy sets the agent's handle as every
# request's tenant and points the card's gRPC interface at itself.
# docs/conformance.md has the results.
#
#   apt-get install -y protobuf-compiler protobuf-compiler-grpc libprotobuf-dev \
#     python3-grpcio python3-protobuf   (and the suite's other packages: docs/conformance.md)
#   A2A_TCK_REPO=/path/to/a2a-tck (a clone or a bare mirror) interop/tck_grpc.sh
set -euo pipefail
cd "$(dirname "$0")/.."
: "${A2A_TCK_REPO:?set A2A_TCK_REPO to a clone or mirror of github.com/a2aproject/a2a-tck}"
PY=${PYTHON:-/usr/bin/python3}
for tool in protoc grpc_python_plugin; do
	command -v "$tool" >/dev/null || { echo "$tool is missing: apt-get install protobuf-compiler protobuf-compiler-grpc libprotobuf-dev" >&2; exit 1; }
done
[[ -f /usr/include/google/protobuf/struct.proto ]] || { echo "google/protobuf/*.proto are missing: apt-get install libprotobuf-dev" >&2; exit 1; }
WORK=$(mktemp -d)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

git clone -q "$A2A_TCK_REPO" "$WORK/tck-1.0"
TCK="$WORK/tck-1.0"
echo "== a2a-tck $(git -C "$TCK" rev-parse --short HEAD); $(protoc --version); grpcio $("$PY" -c 'import grpc; print(grpc.__version__)'), protobuf $("$PY" -c 'import google.protobuf as p; print(p.__version__)')"

# The stubs: the suite's proto without the google.api options.
mkdir -p "$WORK/proto"
perl -0pe '
	s/^import "google\/api\/[^"]+";\n//mg;
	s/ \[\(google\.api\.field_behavior\) = [A-Z_]+\]//g;
	s/^[ \t]*option \(google\.api\.method_signature\) = "[^"]*";\n//mg;
	s/^[ \t]*option \(google\.api\.http\) = \{\n.*?\n[ \t]*\};\n//msg;
' "$TCK/current_spec/a2a.proto" >"$WORK/proto/a2a.proto"
if grep -q 'google\.api' "$WORK/proto/a2a.proto"; then
	echo "the suite's a2a.proto uses google.api in a way this script does not take out:" >&2
	grep -n 'google\.api' "$WORK/proto/a2a.proto" >&2
	exit 1
fi
rm -f "$TCK"/tck/grpc_stubs/a2a_pb2*.py*
protoc -I"$WORK/proto" -I/usr/include --python_out="$TCK/tck/grpc_stubs" --grpc_python_out="$TCK/tck/grpc_stubs" \
	--plugin=protoc-gen-grpc_python="$(command -v grpc_python_plugin)" "$WORK/proto/a2a.proto"
(cd "$TCK/tck/grpc_stubs" && "$PY" -c 'import a2a_pb2, a2a_pb2_grpc; a2a_pb2_grpc.A2AServiceStub')

go build -o "$WORK/switchboard" ./cmd/switchboard
go build -o "$WORK/tckagent" ./interop/tckagent
go build -o "$WORK/tckgrpcproxy" ./interop/tckgrpcproxy

PORT=${TCK_PORT:-18390}
PROXY_PORT=$((PORT + 2))
SB="$WORK/switchboard"
export SWITCHBOARD_URL="http://127.0.0.1:$PORT" SWITCHBOARD_DATA="$WORK/data"
"$SB" serve --addr "127.0.0.1:$PORT" --rate-per-minute 0 --default-agent tck \
	--public-url "http://127.0.0.1:$PROXY_PORT" --blocking-timeout 1s >"$WORK/server.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
AGENT_TOKEN=$("$SB" --json agent create tck --description "A2A TCK scripted agent" | sed -n 's/.*"agent_token": *"\([^"]*\)".*/\1/p')
PEER_TOKEN=$("$SB" --json token issue --agent tck tck | sed -n 's/.*"token": *"\([^"]*\)".*/\1/p')
"$WORK/tckagent" -server "http://127.0.0.1:$PORT" -token "$AGENT_TOKEN" >"$WORK/agent.log" 2>&1 &
PIDS+=($!)
"$WORK/tckgrpcproxy" -listen "127.0.0.1:$PROXY_PORT" -target "http://127.0.0.1:$PORT" -tenant tck >"$WORK/proxy.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do
	curl -sf "http://127.0.0.1:$PROXY_PORT/.well-known/agent-card.json" 2>/dev/null | grep -q "\"http://127.0.0.1:$PROXY_PORT\"" && break
	sleep 0.1
done

pytest() { (cd "$1" && shift && A2A_AUTH_TYPE=bearer A2A_AUTH_TOKEN=$PEER_TOKEN "$PY" -m pytest "$@" \
	--sut-url="http://127.0.0.1:$PROXY_PORT" --test-scope=all --transports grpc -q --tb=line -p no:cacheprovider \
	${TCK_PYTEST_ARGS:-} 2>&1 | tail -n "${TCK_TAIL:-25}") || true; }

echo "== A2A 1.0 (a2a-tck main) over gRPC: mandatory"
pytest "$TCK" tests/mandatory/ -m "mandatory or mandatory_protocol"
for dir in capabilities quality features; do
	echo "== A2A 1.0 (a2a-tck main) over gRPC: optional $dir"
	pytest "$TCK" "tests/optional/$dir/"
done
