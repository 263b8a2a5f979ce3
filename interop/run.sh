#!/usr/bin/env bash
# Interoperability test: real outside A2A clients against a live Switchboard
# server, over A2A 1.0 and A2A 0.3.
#
#   interop/run.sh            (from anywhere; CI calls it from .ci/run)
#
# Clients:
#   - the a2a-go CLI (github.com/a2aproject/a2a-go/v2/cmd/a2a, pinned with its
#     dependencies in interop/go/go.mod and go.sum), built once from the Go
#     module proxy and cached under ${XDG_CACHE_HOME:-~/.cache}/switchboard-interop;
#   - @a2a-js/sdk 1.3.0, for 1.0 and, with its legacyCompat layer, 0.3
#     (interop/js/sdk-interop.mjs);
#   - @a2a-js/sdk 0.3.14 (npm alias a2a-js-sdk-v03), a client that only knows
#     0.3 and sends no A2A-Version header (interop/js/sdk03-interop.mjs).
#   Both are pinned in interop/js/package-lock.json and installed with
#   `npm ci` into interop/js/node_modules.
#
# Needs bash, coreutils, Go, Node >= 20 and npm, with access to the Go module
# proxy and the npm registry (both only on a cold cache). Everything else runs
# on 127.0.0.1. Every wait is bounded; background processes are ended on exit.
#
# Environment:
#   A2A_CLI=/path/to/a2a      use this a2a-go CLI binary instead of building one
#   INTEROP_KEEP=1            keep the work directory (server log, outputs)
#   INTEROP_SKIP_NPM_CI=1     use interop/js/node_modules as it is
set -Eeuo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
TOOLS="$HERE/js/tools.mjs"
STARTED=$SECONDS
RPC_TIMEOUT=20s # a2a CLI per-command timeout (also bounds its streams)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/switchboard-interop.XXXXXX")
PASSED=()
SERVER_LOG="$WORK/server.log"

# cleanup ends the background jobs of this script that still run (the
# server, the 0.3 card server, a2a CLI streams), by process id.
cleanup() {
	local rc=$?
	local pids
	pids=$(jobs -pr)
	if [[ -n $pids ]]; then
		# shellcheck disable=SC2086 # one id per word
		kill $pids 2>/dev/null || true
		wait 2>/dev/null || true
	fi
	if [[ -n ${INTEROP_KEEP:-} || $rc -ne 0 ]]; then
		echo "work directory kept: $WORK" >&2
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT

log() { printf '\n==> %s\n' "$*"; }

pass() {
	PASSED+=("$1")
	printf '  ok    %s\n' "$1"
}

fail() {
	trap - ERR
	printf '\nFAIL: %s\n' "$*" >&2
	if [[ $BASHPID != "$$" ]]; then
		exit 1 # in a subshell: the main shell reports the rest
	fi
	if [[ -s $SERVER_LOG ]]; then
		printf '\n--- last lines of the switchboard server log (%s) ---\n' "$SERVER_LOG" >&2
		tail -n 30 "$SERVER_LOG" >&2
	fi
	exit 1
}
# In subshells (command substitutions) a failing command just ends the
# subshell; the main shell then reports the line that used it.
trap 'rc=$?; [[ $BASHPID != "$$" ]] || fail "line $LINENO: command failed (exit $rc): $BASH_COMMAND"' ERR
trap 'fail "interrupted (SIGINT)"' INT
trap 'fail "terminated (SIGTERM)"' TERM

# expect_eq DESCRIPTION ACTUAL EXPECTED
expect_eq() {
	[[ $2 == "$3" ]] || fail "$1: got '$2', expected '$3'"
}

# jget FILE|- PATH: the value at PATH of a JSON document (see tools.mjs).
jget() { node "$TOOLS" get "$@"; }

need() {
	command -v "$1" >/dev/null 2>&1 || fail "$1 is not installed; interop/run.sh needs bash, coreutils, go, node (>= 20) and npm"
}

# ---------------------------------------------------------------------------
log "tools"
need go
need node
need npm
need timeout
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' ||
	fail "node $(node --version) is too old: @a2a-js/sdk needs Node >= 20"
echo "  $(go version), node $(node --version), npm $(npm --version)"

# ---------------------------------------------------------------------------
log "build switchboard"
(cd "$ROOT" && timeout 600 go build -o "$WORK/bin/switchboard" ./cmd/switchboard)
SB="$WORK/bin/switchboard"
pass "switchboard builds"

# ---------------------------------------------------------------------------
log "a2a-go CLI"
A2A_GO_VERSION=$(awk '$1 == "github.com/a2aproject/a2a-go/v2" { print $2 }' "$HERE/go/go.mod")
[[ -n $A2A_GO_VERSION ]] || fail "interop/go/go.mod does not require github.com/a2aproject/a2a-go/v2"
if [[ -n ${A2A_CLI:-} ]]; then
	A2A=$A2A_CLI
	echo "  using A2A_CLI=$A2A"
else
	# The cache key names the a2a-go version and hashes go.sum, so that any
	# change of a pinned dependency builds a fresh binary.
	sum=$(sha256sum "$HERE/go/go.sum" | cut -c1-12)
	cache="${XDG_CACHE_HOME:-${HOME:-$WORK}/.cache}/switchboard-interop/a2a-go-$A2A_GO_VERSION-$(go env GOOS)-$(go env GOARCH)-$sum"
	A2A="$cache/a2a"
	if [[ -x $A2A ]]; then
		echo "  cached: $A2A"
	else
		echo "  building github.com/a2aproject/a2a-go/v2/cmd/a2a@$A2A_GO_VERSION into $cache"
		mkdir -p "$cache"
		(cd "$HERE/go" && timeout 600 go build -mod=readonly -o "$A2A.tmp.$$" github.com/a2aproject/a2a-go/v2/cmd/a2a)
		mv -f "$A2A.tmp.$$" "$A2A"
	fi
fi
"$A2A" --help >/dev/null
pass "a2a-go CLI $A2A_GO_VERSION is ready"

# ---------------------------------------------------------------------------
log "@a2a-js/sdk"
if [[ -n ${INTEROP_SKIP_NPM_CI:-} && -d $HERE/js/node_modules ]]; then
	echo "  INTEROP_SKIP_NPM_CI set: using interop/js/node_modules as it is"
else
	(cd "$HERE/js" && timeout 300 npm ci --no-audit --no-fund --prefer-offline --loglevel=error)
fi
JS_SDK_VERSION=$(cd "$HERE/js" && node -p 'require("./node_modules/@a2a-js/sdk/package.json").version')
JS_SDK03_VERSION=$(cd "$HERE/js" && node -p 'require("./node_modules/a2a-js-sdk-v03/package.json").version')
pass "@a2a-js/sdk $JS_SDK_VERSION and $JS_SDK03_VERSION are installed"

# ---------------------------------------------------------------------------
log "start switchboard"
SERVER_PID=
for attempt in 1 2 3; do
	PORT=$(node "$TOOLS" free-port)
	BASE="http://127.0.0.1:$PORT"
	"$SB" serve --data "$WORK/data" --addr "127.0.0.1:$PORT" >"$SERVER_LOG" 2>&1 &
	SERVER_PID=$!
	if node "$TOOLS" wait-http "$BASE/healthz" 20; then
		break
	fi
	if kill -0 "$SERVER_PID" 2>/dev/null || ! grep -q 'address already in use' "$SERVER_LOG"; then
		fail "switchboard did not become healthy at $BASE/healthz"
	fi
	echo "  port $PORT was taken meanwhile; trying another (attempt $attempt)"
	SERVER_PID=
done
[[ -n $SERVER_PID ]] || fail "could not start switchboard on a free port"
[[ -s $WORK/data/owner-token ]] || fail "switchboard did not write $WORK/data/owner-token"
export SWITCHBOARD_URL=$BASE SWITCHBOARD_DATA=$WORK/data
pass "switchboard serves at $BASE (healthz 200, owner token written)"

# sb runs the switchboard CLI as the operator, bounded in time.
sb() { timeout 30 "$SB" "$@"; }

# ---------------------------------------------------------------------------
log "agent and peer tokens (switchboard CLI)"
HANDLE=interop
sb --json agent create "$HANDLE" --description "Interop test agent" >"$WORK/agent.json"
ADDRESS_SLASH=$(jget "$WORK/agent.json" .address)
expect_eq "address of the new agent" "$ADDRESS_SLASH" "$BASE/a/$HANDLE/"
expect_eq "mode of the new agent" "$(jget "$WORK/agent.json" .mode)" "inbox"
ADDRESS=${ADDRESS_SLASH%/}
GO_TOKEN=$(sb --json token issue --agent "$HANDLE" a2a-go | jget - .token)
JS_TOKEN=$(sb --json token issue --agent "$HANDLE" a2a-js | jget - .token)
JS03_TOKEN=$(sb --json token issue --agent "$HANDLE" a2a-js-v03 | jget - .token)
for t in "$GO_TOKEN" "$JS_TOKEN" "$JS03_TOKEN"; do
	[[ $t == sbp_* ]] || fail "switchboard token issue printed '$t', not an sbp_ peer token"
done
pass "agent $HANDLE at $ADDRESS_SLASH; peer tokens a2a-go, a2a-js, a2a-js-v03"

# ---------------------------------------------------------------------------
# a2a-go CLI checks.
#
# How the CLI authenticates: --auth VALUE is shorthand for
# --svc-param Authorization=VALUE; it is sent as the Authorization header on
# every call and on the card request (internal/cli/client.go).
#
# Limitations of the CLI (a2a-go v2.4.0, internal/cli/client.go), not of
# Switchboard:
#   - It resolves cards with agentcard.DefaultResolver: always
#     {url}/.well-known/agent-card.json, parsed with the 1.0 card parser. It
#     cannot read the pure 0.3 card at /.well-known/agent.json.
#   - From a card listing both versions it always picks the newest (1.0);
#     it has no protocol switch, and --transport jsonrpc skips the card and
#     forces 1.0. It registers the 0.3 (a2av0) transports, though, and uses
#     them when the card lists only 0.3 interfaces. So 0.3 is tested through a
#     discovery-only server (tools.mjs serve-card03) that serves Switchboard's
#     own card minus its 1.0 interface; the 0.3 interface still points at the
#     Switchboard address, so every JSON-RPC call goes straight to Switchboard.
#   - JSON-RPC 0.3 has no tasks/list, so `a2a list tasks` is 1.0 only.

# a2a runs the a2a-go CLI. Its own --timeout bounds every call and stream;
# timeout(1) is a second bound in case a call ignores it.
a2a() { timeout 40 "$A2A" --timeout "$RPC_TIMEOUT" "$@"; }

# protocol_of TASK: the protocol version Switchboard recorded for the task.
protocol_of() { sb --json show "$1" | jget - .protocol; }

# stream_and_reply LABEL OUT ANSWER A2A-ARGS...: runs the a2a CLI command
# (send --stream or subscribe) in the background, waits for its first event,
# answers the task with switchboard reply, waits for the command to end on
# its own and checks that the stream began with the submitted task, carried
# the answer's artifact and ended with the completed status. Sets STREAM_TASK.
stream_and_reply() {
	local label=$1 out=$2 answer=$3
	shift 3
	# Not through the a2a function: $! must be the timeout process itself,
	# which passes a kill from the cleanup on to the CLI.
	timeout 40 "$A2A" --timeout "$RPC_TIMEOUT" "$@" -o json >"$out" 2>"$out.err" &
	local pid=$!
	local deadline=$((SECONDS + 15)) tid=
	until tid=$(node "$TOOLS" docs "$out" '[0].task.id' 2>/dev/null); do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid" || true
			fail "$label: the a2a CLI ended before its first event: $(cat "$out.err" "$out")"
		fi
		((SECONDS < deadline)) || fail "$label: no first stream event within 15 s"
		sleep 0.2
	done
	sb reply "$tid" --text "$answer" >/dev/null
	if ! wait "$pid"; then
		fail "$label: the a2a CLI failed: $(cat "$out.err")"
	fi
	local events
	events=$(node "$TOOLS" events "$out")
	[[ $(head -n 1 <<<"$events") == "task TASK_STATE_SUBMITTED $tid" ]] ||
		fail "$label: the first event is not the submitted task $tid: $events"
	grep -qxF "artifactUpdate \"$answer\"" <<<"$events" ||
		fail "$label: no artifact update with the answer: $events"
	[[ $(tail -n 1 <<<"$events") == "statusUpdate TASK_STATE_COMPLETED $tid" ]] ||
		fail "$label: the stream did not end with the completed status: $events"
	STREAM_TASK=$tid
}

# a2a_go_checks LABEL URL VERSION: the a2a-go CLI against URL, expecting the
# calls to go out as VERSION.
a2a_go_checks() {
	local v=$1 url=$2 version=$3 out="$WORK/a2a-go-$1"
	local auth="Bearer $GO_TOKEN"

	# send: a task in submitted, recorded by the server under this version.
	a2a send "$url" "hello over $v from the a2a-go CLI" --auth "$auth" -o json >"$out.send.json"
	local tid
	tid=$(jget "$out.send.json" .id)
	expect_eq "$v send: task state" "$(jget "$out.send.json" .status.state)" TASK_STATE_SUBMITTED
	expect_eq "$v send: message in the task history" "$(jget "$out.send.json" '.history[0].parts[0].text')" "hello over $v from the a2a-go CLI"
	expect_eq "$v send: protocol recorded by switchboard" "$(protocol_of "$tid")" "$version"
	sb --json inbox --agent "$HANDLE" >"$out.inbox.json"
	grep -q "\"$tid\"" "$out.inbox.json" || fail "$v send: task $tid is not in switchboard inbox --json"
	pass "a2a-go $v: send returns a submitted task, which shows in switchboard inbox"

	# no token: refused.
	if a2a send "$url" "no token" -o json >"$out.anon.json" 2>"$out.anon.err"; then
		fail "$v send without a token succeeded: $(cat "$out.anon.json")"
	fi
	grep -qiE '401|unauthori[sz]ed' "$out.anon.err" || fail "$v send without a token: unexpected error: $(cat "$out.anon.err")"
	pass "a2a-go $v: send without a token is refused"

	# send --stream: the stream carries the owner's answer and ends.
	stream_and_reply "$v send --stream" "$out.stream.json" "streamed answer over $v" \
		send "$url" "stream over $v from the a2a-go CLI" --stream --auth "$auth"
	expect_eq "$v send --stream: protocol recorded by switchboard" "$(protocol_of "$STREAM_TASK")" "$version"
	pass "a2a-go $v: send --stream receives the owner's answer and ends"

	# subscribe to the task from send, still submitted.
	stream_and_reply "$v subscribe" "$out.subscribe.json" "subscribed answer over $v" \
		subscribe "$url" "$tid" --auth "$auth"
	expect_eq "$v subscribe: task" "$STREAM_TASK" "$tid"
	pass "a2a-go $v: subscribe follows a submitted task to its answer"

	# get task: completed, with the answer as artifact.
	a2a get task "$url" "$tid" --auth "$auth" -o json >"$out.get.json"
	expect_eq "$v get task: state" "$(jget "$out.get.json" .status.state)" TASK_STATE_COMPLETED
	expect_eq "$v get task: artifact" "$(jget "$out.get.json" '.artifacts[0].parts[0].text')" "subscribed answer over $v"
	expect_eq "$v get task: artifacts" "$(jget "$out.get.json" '.artifacts.length')" 1
	pass "a2a-go $v: get task shows the task completed with the answer as artifact"

	# cancel a fresh task.
	a2a send "$url" "to be canceled over $v" --auth "$auth" -o json >"$out.send2.json"
	local tid2
	tid2=$(jget "$out.send2.json" .id)
	a2a cancel "$url" "$tid2" --auth "$auth" -o json >"$out.cancel.json"
	expect_eq "$v cancel: state" "$(jget "$out.cancel.json" .status.state)" TASK_STATE_CANCELED
	expect_eq "$v cancel: state seen by switchboard" "$(sb --json show "$tid2" | jget - .state)" canceled
	pass "a2a-go $v: cancel cancels a submitted task"

	# input-required, then a follow-up message (send --task --context
	# --stream) that continues the same task to its answer.
	a2a send "$url" "multi-turn over $v" --auth "$auth" -o json >"$out.send3.json"
	local tid3 ctx3
	tid3=$(jget "$out.send3.json" .id)
	ctx3=$(jget "$out.send3.json" .contextId)
	sb reply "$tid3" --text "which one? (over $v)" --state input-required >/dev/null
	a2a get task "$url" "$tid3" --auth "$auth" -o json >"$out.get3.json"
	expect_eq "$v input-required: state" "$(jget "$out.get3.json" .status.state)" TASK_STATE_INPUT_REQUIRED
	expect_eq "$v input-required: question" "$(jget "$out.get3.json" '.status.message.parts[0].text')" "which one? (over $v)"
	stream_and_reply "$v follow-up" "$out.followup.json" "the blue one it is (over $v)" \
		send "$url" "the blue one" --task "$tid3" --context "$ctx3" --stream --auth "$auth"
	expect_eq "$v follow-up: task" "$STREAM_TASK" "$tid3"
	pass "a2a-go $v: input-required, then send --task continues the task to its answer"

	if [[ $version == 1.0 ]]; then
		a2a list tasks "$url" --auth "$auth" -o json >"$out.list.json"
		local t
		for t in "$tid" "$STREAM_TASK" "$tid2"; do
			grep -q "\"$t\"" "$out.list.json" || fail "$v list tasks: task $t is missing: $(cat "$out.list.json")"
		done
		pass "a2a-go $v: list tasks lists the peer's tasks"
	fi
}

log "a2a-go CLI $A2A_GO_VERSION, A2A 1.0"
for url in "$ADDRESS" "$ADDRESS_SLASH"; do
	a2a discover "$url" -o json >"$WORK/discover.json"
	expect_eq "discover $url: name" "$(jget "$WORK/discover.json" .name)" "$HANDLE"
	expect_eq "discover $url: interfaces" \
		"$(jget "$WORK/discover.json" '.supportedInterfaces[0].protocolVersion') $(jget "$WORK/discover.json" '.supportedInterfaces[1].protocolVersion')" "1.0 0.3"
	expect_eq "discover $url: 1.0 interface" "$(jget "$WORK/discover.json" '.supportedInterfaces[0].url')" "$ADDRESS"
	expect_eq "discover $url: 0.3 interface" "$(jget "$WORK/discover.json" '.supportedInterfaces[1].url')" "$ADDRESS"
	expect_eq "discover $url: streaming" "$(jget "$WORK/discover.json" .capabilities.streaming)" true
done
pass "a2a-go 1.0: discover parses the card (address with and without trailing slash)"
a2a_go_checks 1.0 "$ADDRESS" 1.0

log "a2a-go CLI $A2A_GO_VERSION, A2A 0.3"
node "$TOOLS" serve-card03 "$ADDRESS/.well-known/agent-card.json" "$WORK/card03.port" 2>"$WORK/card03.err" &
deadline=$((SECONDS + 10))
until [[ -s $WORK/card03.port ]]; do
	((SECONDS < deadline)) || fail "the 0.3 card server did not start: $(cat "$WORK/card03.err")"
	sleep 0.1
done
CARD03_URL="http://127.0.0.1:$(cat "$WORK/card03.port")"
a2a discover "$CARD03_URL" -o json >"$WORK/discover03.json"
expect_eq "0.3-only card: interfaces" "$(jget "$WORK/discover03.json" '.supportedInterfaces.length')" 1
expect_eq "0.3-only card: version" "$(jget "$WORK/discover03.json" '.supportedInterfaces[0].protocolVersion')" 0.3
expect_eq "0.3-only card: url" "$(jget "$WORK/discover03.json" '.supportedInterfaces[0].url')" "$ADDRESS"
pass "a2a-go 0.3: discover parses the card reduced to its 0.3 interface"
a2a_go_checks 0.3 "$CARD03_URL" 0.3

# ---------------------------------------------------------------------------
log "@a2a-js/sdk $JS_SDK_VERSION, A2A 1.0 and 0.3 (legacyCompat)"
if ! (cd "$HERE/js" && SB_ADDRESS="$ADDRESS" SB_TOKEN="$JS_TOKEN" SWITCHBOARD_BIN="$SB" \
	timeout 150 node sdk-interop.mjs); then
	fail "@a2a-js/sdk checks failed (see the FAIL lines above)"
fi
pass "@a2a-js/sdk $JS_SDK_VERSION: all checks (listed above)"

log "@a2a-js/sdk $JS_SDK03_VERSION, a client for A2A 0.3 only"
if ! (cd "$HERE/js" && SB_ADDRESS="$ADDRESS" SB_TOKEN="$JS03_TOKEN" SWITCHBOARD_BIN="$SB" \
	timeout 120 node sdk03-interop.mjs); then
	fail "@a2a-js/sdk $JS_SDK03_VERSION checks failed (see the FAIL lines above)"
fi
pass "@a2a-js/sdk $JS_SDK03_VERSION: all checks (listed above)"

# ---------------------------------------------------------------------------
kill -TERM "$SERVER_PID"
deadline=$((SECONDS + 15))
while kill -0 "$SERVER_PID" 2>/dev/null; do
	((SECONDS < deadline)) || fail "switchboard did not stop within 15 s of SIGTERM"
	sleep 0.1
done
server_rc=0
wait "$SERVER_PID" || server_rc=$?
expect_eq "exit status of switchboard after SIGTERM" "$server_rc" 0
pass "switchboard shuts down cleanly on SIGTERM"

log "summary"
printf '  %d checks passed in %d s:\n' "${#PASSED[@]}" "$((SECONDS - STARTED))"
printf '    - %s\n' "${PASSED[@]}"
echo "PASS: a2a-go CLI $A2A_GO_VERSION, @a2a-js/sdk $JS_SDK_VERSION and @a2a-js/sdk $JS_SDK03_VERSION interoperate with switchboard over A2A 1.0 and 0.3"
