#!/usr/bin/env bash
# Interoperability test: real outside A2A clients against a live Switchboard
# server, over A2A 1.0 and A2A 0.3, first at an inbox agent (the owner
# answers with switchboard reply), then at a connector agent (the default
# mode: its tasks go over a WebSocket to `switchboard connect --exec`,
# which runs a small shell command per task), then at a community's address
# ({base}/c/NAME, routed by discovery to that agent). Then the other direction:
# `switchboard send` from a Switchboard agent to plain @a2a-js/sdk servers.
# JSON-RPC throughout; at the inbox agent also HTTP+JSON and gRPC.
#
# Groups of checks that do not depend on each other run at the same time
# (see group), each with peer tokens of its own; each group's output is
# printed, in order, once they have ended, with the time it took.
#
#   interop/run.sh            (from anywhere; CI calls it from .ci/run)
#
# Clients:
#   - the a2a-go CLI (github.com/a2aproject/a2a-go/v2/cmd/a2a, pinned with its
#     dependencies in interop/go/go.mod and go.sum), built once from the Go
#     module proxy and cached under ${XDG_CACHE_HOME:-~/.cache}/switchboard-interop;
#   - @a2a-js/sdk 1.3.0, for 1.0 and, with its legacyCompat layer, 0.3
#     (interop/js/sdk-interop.mjs), and over HTTP+JSON and gRPC (with
#     @grpc/grpc-js; interop/js/bindings.mjs);
#   - @a2a-js/sdk 0.3.14 (npm alias a2a-js-sdk-v03), a client that only knows
#     0.3 and sends no A2A-Version header (interop/js/sdk03-interop.mjs).
#   All are pinned in interop/js/package-lock.json and installed with
#   `npm ci` into interop/js/node_modules.
#
# Fronts: front agents on a second server, before the same @a2a-js/sdk
# servers over https (openssl makes the test certificate).
#
# Servers (for switchboard send, outbox, poll and history): plain
# @a2a-js/sdk servers with an echo executor (interop/js/a2a-js-agent.mjs,
# served with node:http): 1.3.0 speaking only A2A 1.0, and 0.3.14 speaking
# only A2A 0.3.
#
# Needs bash, coreutils, Go, Node >= 20 and npm, with access to the Go module
# proxy and the npm registry (both only on a cold cache). Everything else runs
# on 127.0.0.1. Every wait is on a condition and bounded; background
# processes are ended on exit. interop/jsontool (built with Switchboard)
# reads the JSON values the checks compare.
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
PASSED_FILE="$WORK/passed" # one line per check passed, from every group
: >"$PASSED_FILE"
SERVER_LOG="$WORK/server.log"

# end_jobs ends the background jobs of the current shell that still run,
# by process id, and waits for them.
end_jobs() {
	local pids
	pids=$(jobs -pr)
	if [[ -n $pids ]]; then
		# shellcheck disable=SC2086 # one id per word
		kill $pids 2>/dev/null || true
	fi
	wait 2>/dev/null || true
}

# cleanup ends the background jobs of this script that still run (the
# servers, the groups of checks, which end their own: switchboard connect,
# the 0.3 card servers, the @a2a-js/sdk servers, a2a CLI streams).
cleanup() {
	local rc=$?
	end_jobs
	if [[ -n ${INTEROP_KEEP:-} || $rc -ne 0 ]]; then
		echo "work directory kept: $WORK" >&2
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT

log() { printf '\n==> %s (%d s)\n' "$*" "$((SECONDS - STARTED))"; }

pass() {
	printf '%s\n' "$1" >>"$PASSED_FILE"
	printf '  ok    %s\n' "$1"
}

# GROUP_SHELL is the process id of the shell that runs the current group of
# checks (see group), or of the script itself.
GROUP_SHELL=$$

fail() {
	trap - ERR
	printf '\nFAIL: %s\n' "$*" >&2
	if [[ $BASHPID != "$$" ]]; then
		exit 1 # in a subshell: the main shell reports the rest
	fi
	local log
	for log in "$SERVER_LOG" "$WORK/connect.log"; do
		if [[ -s $log ]]; then
			printf '\n--- last lines of %s ---\n' "$log" >&2
			tail -n 30 "$log" >&2
		fi
	done
	exit 1
}
# A failing command fails the script, or the group of checks it is in. In
# other subshells (command substitutions) it just ends the subshell; the
# shell that used it then reports the line.
trap 'rc=$?; [[ $BASHPID != "$GROUP_SHELL" ]] || fail "line $LINENO: command failed (exit $rc): $BASH_COMMAND"' ERR
trap 'fail "interrupted (SIGINT)"' INT
trap 'fail "terminated (SIGTERM)"' TERM

# Groups of checks that do not depend on each other run at the same time,
# each in a subshell of its own with its own peer tokens, and its output
# goes to a file that is printed, in the order the groups were started,
# once they have all ended.
GROUP_PIDS=()
GROUP_NAMES=()

# group NAME COMMAND [ARGS...]: runs COMMAND in the background as the group
# of checks NAME. The group ends the background jobs it started when it
# ends, and when it is terminated.
group() {
	local name=$1
	shift
	(
		GROUP_SHELL=$BASHPID GROUP_PIDS=() GROUP_NAMES=()
		trap end_jobs EXIT
		trap 'exit 143' TERM
		trap 'exit 130' INT
		started=$SECONDS
		"$@"
		printf '  (%s: %d s)\n' "$name" "$((SECONDS - started))"
	) >"$WORK/group-${name//[^A-Za-z0-9.-]/_}.log" 2>&1 &
	GROUP_PIDS+=($!)
	GROUP_NAMES+=("$name")
}

# wait_groups waits for the groups started since the last wait_groups,
# prints their output and fails if any of them failed.
wait_groups() {
	local i failed=()
	for i in "${!GROUP_PIDS[@]}"; do
		wait "${GROUP_PIDS[$i]}" || failed+=("${GROUP_NAMES[$i]}")
	done
	for i in "${!GROUP_NAMES[@]}"; do
		printf '\n==> %s\n' "${GROUP_NAMES[$i]}"
		cat "$WORK/group-${GROUP_NAMES[$i]//[^A-Za-z0-9.-]/_}.log"
	done
	GROUP_PIDS=() GROUP_NAMES=()
	((${#failed[@]} == 0)) || fail "failed: ${failed[*]} (see above)"
}

# expect_eq DESCRIPTION ACTUAL EXPECTED
expect_eq() {
	[[ $2 == "$3" ]] || fail "$1: got '$2', expected '$3'"
}

# wait_for SECONDS WHAT COMMAND...: runs COMMAND every 0.1 s until it
# succeeds; fails with "WHAT within SECONDS s" if it has not by then.
wait_for() {
	local secs=$1 what=$2 deadline=$((SECONDS + $1))
	shift 2
	until "$@"; do
		((SECONDS < deadline)) || fail "$what within $secs s"
		sleep 0.1
	done
}

# gone PID: the process PID has ended.
gone() { ! kill -0 "$1" 2>/dev/null; }

# stop PID WHAT: sends SIGTERM to PID, a background job of this script,
# waits at most 15 s for it to end, and sets STOPPED_RC to its exit status.
stop() {
	kill -TERM "$1"
	wait_for 15 "$2 did not stop after SIGTERM" gone "$1"
	STOPPED_RC=0
	wait "$1" || STOPPED_RC=$?
}

# jget FILE|- PATH: the value at PATH of a JSON document, and jdocs and
# jevents likewise: interop/jsontool, which does what js/tools.mjs get, docs
# and events do, and starts in milliseconds rather than Node's tens.
jget() { "$JSONTOOL" get "$@"; }
jdocs() { "$JSONTOOL" docs "$@"; }
jevents() { "$JSONTOOL" events "$@"; }

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
# Switchboard, the a2a-go CLI and the npm packages are built and installed
# at the same time.
SB="$WORK/bin/switchboard"
JSONTOOL="$WORK/bin/jsontool"
build_switchboard() {
	(cd "$ROOT" && timeout 600 go build -o "$WORK/bin/" ./cmd/switchboard ./interop/jsontool)
	pass "switchboard builds"
}

A2A_GO_VERSION=$(awk '$1 == "github.com/a2aproject/a2a-go/v2" { print $2 }' "$HERE/go/go.mod")
[[ -n $A2A_GO_VERSION ]] || fail "interop/go/go.mod does not require github.com/a2aproject/a2a-go/v2"
if [[ -n ${A2A_CLI:-} ]]; then
	A2A=$A2A_CLI
else
	# The cache key names the a2a-go version and hashes go.sum, so that any
	# change of a pinned dependency builds a fresh binary.
	sum=$(sha256sum "$HERE/go/go.sum" | cut -c1-12)
	cache="${XDG_CACHE_HOME:-${HOME:-$WORK}/.cache}/switchboard-interop/a2a-go-$A2A_GO_VERSION-$(go env GOOS)-$(go env GOARCH)-$sum"
	A2A="$cache/a2a"
fi
build_a2a_cli() {
	if [[ -n ${A2A_CLI:-} ]]; then
		echo "  using A2A_CLI=$A2A"
	elif [[ -x $A2A ]]; then
		echo "  cached: $A2A"
	else
		echo "  building github.com/a2aproject/a2a-go/v2/cmd/a2a@$A2A_GO_VERSION into $cache"
		mkdir -p "$cache"
		(cd "$HERE/go" && timeout 600 go build -mod=readonly -o "$A2A.tmp.$$" github.com/a2aproject/a2a-go/v2/cmd/a2a)
		mv -f "$A2A.tmp.$$" "$A2A"
	fi
	"$A2A" --help >/dev/null
	pass "a2a-go CLI $A2A_GO_VERSION is ready"
}

install_js() {
	if [[ -n ${INTEROP_SKIP_NPM_CI:-} && -d $HERE/js/node_modules ]]; then
		echo "  INTEROP_SKIP_NPM_CI set: using interop/js/node_modules as it is"
	else
		(cd "$HERE/js" && timeout 300 npm ci --no-audit --no-fund --prefer-offline --loglevel=error)
	fi
}

# npm ci goes on beside the server's start and the checks that need no npm
# package (Node's own modules do for js/tools.mjs); the others wait for it.
install_js >"$WORK/npm-ci.log" 2>&1 &
NPM_PID=$!
group "build switchboard" build_switchboard
group "a2a-go CLI" build_a2a_cli
wait_groups

# ---------------------------------------------------------------------------
log "start switchboard"
SERVER_PID=
for attempt in 1 2 3; do
	PORT=$(node "$TOOLS" free-port)
	BASE="http://127.0.0.1:$PORT"
	"$SB" serve --data "$WORK/data" --addr "127.0.0.1:$PORT" >"$SERVER_LOG" 2>&1 &
	SERVER_PID=$!
	if node "$TOOLS" wait-http "$BASE/readyz" 20; then
		break
	fi
	if kill -0 "$SERVER_PID" 2>/dev/null || ! grep -q 'address already in use' "$SERVER_LOG"; then
		fail "switchboard did not become ready at $BASE/readyz"
	fi
	echo "  port $PORT was taken meanwhile; trying another (attempt $attempt)"
	SERVER_PID=
done
[[ -n $SERVER_PID ]] || fail "could not start switchboard on a free port"
[[ -s $WORK/data/owner-token ]] || fail "switchboard did not write $WORK/data/owner-token"
export SWITCHBOARD_URL=$BASE SWITCHBOARD_DATA=$WORK/data
pass "switchboard serves at $BASE (readyz 200, owner token written)"

# sb runs the switchboard CLI as the operator, bounded in time.
sb() { timeout 30 "$SB" "$@"; }

# create_agent HANDLE MODE [ARGS...]: creates the agent HANDLE with
# switchboard agent create ARGS into $WORK/agent-HANDLE.json and checks its
# address and that its mode is MODE.
create_agent() {
	local handle=$1 mode=$2 file="$WORK/agent-$1.json"
	shift 2
	sb --json agent create "$handle" --description "Interop test agent ($mode)" "$@" >"$file"
	expect_eq "address of the new agent $handle" "$(jget "$file" .address)" "$BASE/a/$handle/"
	expect_eq "mode of the new agent $handle" "$(jget "$file" .mode)" "$mode"
}

# peer_token AGENT LABEL: issues a peer token for AGENT and prints it.
peer_token() {
	local t
	t=$(sb --json token issue --agent "$1" "$2" | jget - .token)
	[[ $t == sbp_* ]] || fail "switchboard token issue printed '$t', not an sbp_ peer token"
	printf '%s\n' "$t"
}

# ---------------------------------------------------------------------------
log "agent and peer tokens (switchboard CLI)"
HANDLE=interop
create_agent "$HANDLE" inbox --mode inbox
ADDRESS_SLASH="$BASE/a/$HANDLE/"
ADDRESS=${ADDRESS_SLASH%/}
# (a token for each group of checks that runs beside the others: each
# stays within the per-peer rate limit, 60 requests a minute)
GO_TOKEN=$(peer_token "$HANDLE" a2a-go)
GO03_TOKEN=$(peer_token "$HANDLE" a2a-go-v03)
GO_REST_TOKEN=$(peer_token "$HANDLE" a2a-go-rest)
GO_GRPC_TOKEN=$(peer_token "$HANDLE" a2a-go-grpc)
JS_TOKEN=$(peer_token "$HANDLE" a2a-js)
JS03_TOKEN=$(peer_token "$HANDLE" a2a-js-v03)
JS_BINDINGS_TOKEN=$(peer_token "$HANDLE" a2a-js-bindings)
pass "agent $HANDLE at $ADDRESS_SLASH; peer tokens a2a-go (JSON-RPC 1.0 and 0.3, HTTP+JSON, gRPC), a2a-js, a2a-js-v03, a2a-js-bindings"

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
#   - With --transport rest or grpc it skips the card and connects to the
#     URL given: the address for HTTP+JSON; for gRPC the host and port of
#     the URL, plaintext with --insecure, the agent named by --tenant.

# A2A_ARGS: the a2a CLI's options for the group's binding (--transport …).
A2A_ARGS=()

# a2a runs the a2a-go CLI. Its own --timeout bounds every call and stream;
# timeout(1) is a second bound in case a call ignores it.
a2a() { timeout 40 "$A2A" --timeout "$RPC_TIMEOUT" "$@" "${A2A_ARGS[@]}"; }

# protocol_of TASK: the protocol version Switchboard recorded for the task.
protocol_of() { sb --json show "$1" | jget - .protocol; }

# check_stream LABEL OUT TASK ANSWER: checks that the stream the a2a CLI
# printed to OUT began with TASK submitted, carried an artifact with ANSWER
# and ended with the completed status.
check_stream() {
	local label=$1 out=$2 tid=$3 answer=$4 events
	events=$(jevents "$out")
	[[ $(head -n 1 <<<"$events") == "task TASK_STATE_SUBMITTED $tid" ]] ||
		fail "$label: the first event is not the submitted task $tid: $events"
	grep -qxF "artifactUpdate \"$answer\"" <<<"$events" ||
		fail "$label: no artifact update with the answer: $events"
	[[ $(tail -n 1 <<<"$events") == "statusUpdate TASK_STATE_COMPLETED $tid" ]] ||
		fail "$label: the stream did not end with the completed status: $events"
}

# expect_answered LABEL FILE ANSWER: FILE holds a task (a2a CLI -o json)
# completed with ANSWER as its only artifact.
expect_answered() {
	expect_eq "$1: state" "$(jget "$2" .status.state)" TASK_STATE_COMPLETED
	expect_eq "$1: artifact" "$(jget "$2" '.artifacts[0].parts[0].text')" "$3"
	expect_eq "$1: artifacts" "$(jget "$2" '.artifacts.length')" 1
}

# stream_and_reply LABEL OUT ANSWER A2A-ARGS...: runs the a2a CLI command
# (send --stream or subscribe) in the background, waits for its first event,
# answers the task with switchboard reply, waits for the command to end on
# its own and checks the stream (check_stream). Sets STREAM_TASK.
stream_and_reply() {
	local label=$1 out=$2 answer=$3
	shift 3
	# Not through the a2a function: $! must be the timeout process itself,
	# which passes a kill from the cleanup on to the CLI.
	timeout 40 "$A2A" --timeout "$RPC_TIMEOUT" "$@" "${A2A_ARGS[@]}" -o json >"$out" 2>"$out.err" &
	local pid=$!
	local deadline=$((SECONDS + 20)) tid=
	until tid=$(jdocs "$out" '[0].task.id' 2>/dev/null); do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid" || true
			fail "$label: the a2a CLI ended before its first event: $(cat "$out.err" "$out")"
		fi
		((SECONDS < deadline)) || fail "$label: no first stream event within 20 s"
		sleep 0.2
	done
	sb reply "$tid" --text "$answer" >/dev/null
	if ! wait "$pid"; then
		fail "$label: the a2a CLI failed: $(cat "$out.err")"
	fi
	check_stream "$label" "$out" "$tid" "$answer"
	STREAM_TASK=$tid
}

# a2a_go_checks LABEL URL VERSION TOKEN: the a2a-go CLI (with A2A_ARGS)
# against URL with the peer token TOKEN, expecting the calls to go out as
# VERSION.
a2a_go_checks() {
	local v=$1 url=$2 version=$3 out="$WORK/a2a-go-$1"
	local auth="Bearer $4"

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
	# (over HTTP+JSON and gRPC the CLI prints only the server's message)
	grep -qiE '401|unauthori[sz]ed|send Authorization: Bearer' "$out.anon.err" || fail "$v send without a token: unexpected error: $(cat "$out.anon.err")"
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
	expect_answered "$v get task" "$out.get.json" "subscribed answer over $v"
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

# go_inbox_v1: the a2a-go CLI at the inbox agent over A2A 1.0, JSON-RPC
# (the first 1.0 interface of the card).
go_inbox_v1() {
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
a2a_go_checks 1.0 "$ADDRESS" 1.0 "$GO_TOKEN"
}

# go_inbox_bindings BINDING: the a2a-go CLI at the inbox agent over A2A 1.0,
# HTTP+JSON (rest) or gRPC (grpc).
go_inbox_bindings() {
	if [[ $1 == rest ]]; then
		A2A_ARGS=(--transport rest)
		a2a_go_checks 1.0-HTTP+JSON "$ADDRESS" 1.0 "$GO_REST_TOKEN"
	else
		A2A_ARGS=(--transport grpc --insecure --tenant "$HANDLE")
		a2a_go_checks 1.0-gRPC "$BASE" 1.0 "$GO_GRPC_TOKEN"
	fi
}

# serve_card03 AGENT_ADDRESS NAME: starts tools.mjs serve-card03 for the
# agent's card in the background, waits until it listens and sets
# CARD03_URL to its base URL.
serve_card03() {
	local port="$WORK/$2.port"
	node "$TOOLS" serve-card03 "$1/.well-known/agent-card.json" "$port" 2>"$WORK/$2.err" &
	wait_for 30 "the 0.3 card server for $1 did not start (see $WORK/$2.err)" test -s "$port"
	CARD03_URL="http://127.0.0.1:$(cat "$port")"
}

# go_inbox_v03: the a2a-go CLI at the inbox agent over A2A 0.3.
go_inbox_v03() {
serve_card03 "$ADDRESS" card03
a2a discover "$CARD03_URL" -o json >"$WORK/discover03.json"
# The 0.3 card names JSON-RPC at the address and HTTP+JSON (0.3's /v1
# routes) under it, in additionalInterfaces.
expect_eq "0.3-only card: interfaces" "$(jget "$WORK/discover03.json" '.supportedInterfaces.length')" 2
expect_eq "0.3-only card: bindings" \
	"$(jget "$WORK/discover03.json" '.supportedInterfaces[0].protocolBinding') $(jget "$WORK/discover03.json" '.supportedInterfaces[1].protocolBinding')" "JSONRPC HTTP+JSON"
expect_eq "0.3-only card: version" "$(jget "$WORK/discover03.json" '.supportedInterfaces[0].protocolVersion')" 0.3
expect_eq "0.3-only card: url" "$(jget "$WORK/discover03.json" '.supportedInterfaces[0].url')" "$ADDRESS"
pass "a2a-go 0.3: discover parses the card reduced to its 0.3 interfaces (JSON-RPC, HTTP+JSON)"
a2a_go_checks 0.3 "$CARD03_URL" 0.3 "$GO03_TOKEN"
}

# ---------------------------------------------------------------------------
# js_checks LABEL SCRIPT ADDRESS TOKEN [NAME=VALUE...]: runs the JS client
# script (which prints its checks) against ADDRESS with the peer token
# TOKEN and the extra environment, bounded in time.
js_checks() {
	local label=$1 script=$2 address=$3 token=$4
	shift 4
	if ! (cd "$HERE/js" && env SB_ADDRESS="$address" SB_TOKEN="$token" SWITCHBOARD_BIN="$SB" "$@" \
		timeout 150 node "$script"); then
		fail "$label checks failed (see the FAIL lines above)"
	fi
	pass "$label: all checks (listed above)"
}

# ---------------------------------------------------------------------------
# A connector agent (the default mode): its tasks are pushed over a
# WebSocket to `switchboard connect --exec CONN_EXEC`, which runs the
# command below with sh -c for each task, the message text on stdin. It
# answers "reply: TEXT"; a text holding FAIL makes it print "boom: TEXT" on
# stderr and exit 3 (the task must fail with that reason); a text holding
# SLEEP makes it note its process id in $SB_MARKS/TASK_ID.pid and sleep 30 s
# (a task to cancel: the cancel must kill it).
CONN_EXEC='in=$(cat)
case $in in
*FAIL*) printf "boom: %s\n" "$in" >&2; exit 3 ;;
*SLEEP*) echo $$ >"$SB_MARKS/$SWITCHBOARD_TASK_ID.pid"; exec sleep 30 ;;
esac
printf "reply: %s\n" "$in"'
CONN_HANDLE=conn
CONN_ADDRESS="$BASE/a/$CONN_HANDLE"
MARKS="$WORK/marks"
mkdir -p "$MARKS"

# connected_is true|false: switchboard agent show says the agent is (not)
# connected.
connected_is() {
	[[ $(sb --json agent show "$CONN_HANDLE" | jget - .connected) == "$1" ]]
}

# connect_agent: starts switchboard connect for the connector agent in the
# background (CONNECT_PID; the cleanup ends it) and waits until the server
# says the agent is connected.
connect_agent() {
	SB_MARKS=$MARKS "$SB" connect --server "$BASE" --token "$CONN_AGENT_TOKEN" --exec "$CONN_EXEC" \
		>>"$WORK/connect.log" 2>&1 &
	CONNECT_PID=$!
	wait_for 30 "switchboard connect did not connect (see $WORK/connect.log)" connected_is true
}

# create_connector_agent creates the connector agent and its peer tokens
# (one for each group of checks).
create_connector_agent() {
	create_agent "$CONN_HANDLE" connector
	CONN_AGENT_TOKEN=$(jget "$WORK/agent-$CONN_HANDLE.json" .agent_token)
	[[ $CONN_AGENT_TOKEN == sba_* ]] || fail "switchboard agent create printed the agent token '$CONN_AGENT_TOKEN', not an sba_ agent token"
	CONN_GO_TOKEN=$(peer_token "$CONN_HANDLE" a2a-go)
	CONN_GO03_TOKEN=$(peer_token "$CONN_HANDLE" a2a-go-v03)
	CONN_AWAY_TOKEN=$(peer_token "$CONN_HANDLE" a2a-go-away)
	CONN_JS_TOKEN=$(peer_token "$CONN_HANDLE" a2a-js)
	CONN_JS03_TOKEN=$(peer_token "$CONN_HANDLE" a2a-js-v03)
}

# a2a_go_connector_checks LABEL URL VERSION TOKEN: the a2a-go CLI against
# the connector agent, from the card at URL, with the peer token TOKEN,
# expecting the calls to go out as VERSION.
a2a_go_connector_checks() {
	local v=$1 url=$2 version=$3 out="$WORK/a2a-go-conn-$1"
	local auth="Bearer $4" text="hello over $v from the a2a-go CLI"

	# send blocks (the default) until the command has answered.
	a2a send "$url" "$text" --auth "$auth" -o json >"$out.send.json"
	local tid
	tid=$(jget "$out.send.json" .id)
	expect_answered "$v connector send" "$out.send.json" "reply: $text"
	expect_eq "$v connector send: protocol recorded by switchboard" "$(protocol_of "$tid")" "$version"
	pass "a2a-go $v, connector agent: send blocks until the command answers (completed, its output as artifact)"

	a2a send "$url" "stream over $v" --stream --auth "$auth" -o json >"$out.stream.json"
	check_stream "$v connector send --stream" "$out.stream.json" \
		"$(jdocs "$out.stream.json" '[0].task.id')" "reply: stream over $v"
	pass "a2a-go $v, connector agent: send --stream carries the command's answer and ends completed"

	a2a send "$url" "please FAIL over $v" --auth "$auth" -o json >"$out.fail.json"
	expect_eq "$v connector failing command: state" "$(jget "$out.fail.json" .status.state)" TASK_STATE_FAILED
	local reason
	reason=$(jget "$out.fail.json" '.status.message.parts[0].text')
	[[ $reason == *"boom: please FAIL over $v"* ]] ||
		fail "$v connector failing command: the status message '$reason' does not hold the command's stderr"
	pass "a2a-go $v, connector agent: a command that exits non-zero fails the task with its stderr ($reason)"

	a2a get task "$url" "$tid" --auth "$auth" -o json >"$out.get.json"
	expect_answered "$v connector get task" "$out.get.json" "reply: $text"
	pass "a2a-go $v, connector agent: get task shows the answered task"
}

# connector_away: while switchboard connect is down, a task waits
# (submitted, not failed); once it is back, the task is delivered and
# answered.
connector_away() {
echo "  tasks wait while switchboard connect is down"
# (stderr off: bash would report the job as Killed)
{ kill -KILL "$CONNECT_PID" && wait "$CONNECT_PID"; } 2>/dev/null || true
wait_for 30 "switchboard agent show did not say the agent is disconnected" connected_is false
declare -A AWAY_TASK
for v in 1.0 0.3; do
	out="$WORK/a2a-go-away-$v"
	a2a send "${CONN_URL[$v]}" "while away over $v" --immediate --auth "Bearer $CONN_AWAY_TOKEN" -o json >"$out.send.json"
	expect_eq "$v send --immediate to an agent that is away: state" "$(jget "$out.send.json" .status.state)" TASK_STATE_SUBMITTED
	AWAY_TASK[$v]=$(jget "$out.send.json" .id)
done
pass "a2a-go 1.0 and 0.3, connector agent away (switchboard connect killed): send --immediate returns the task submitted"

# delivered V: the task sent over V while the agent was away is no longer
# submitted or working (a2a get task into $WORK/a2a-go-away-V.get.json).
delivered() {
	a2a get task "${CONN_URL[$1]}" "${AWAY_TASK[$1]}" --auth "Bearer $CONN_AWAY_TOKEN" -o json >"$WORK/a2a-go-away-$1.get.json"
	[[ ! $(jget "$WORK/a2a-go-away-$1.get.json" .status.state) =~ ^TASK_STATE_(SUBMITTED|WORKING)$ ]]
}
connect_agent
for v in 1.0 0.3; do
	wait_for 30 "$v: the task sent while the agent was away was not answered after it reconnected" delivered "$v"
	expect_answered "$v task sent while the agent was away" "$WORK/a2a-go-away-$v.get.json" "reply: while away over $v"
done
pass "a2a-go 1.0 and 0.3, connector agent back (switchboard connect restarted): get task shows those tasks answered"
}

# ---------------------------------------------------------------------------
# A community's address ({base}/c/NAME): the connector agent joins the
# community with a skill; stock clients, given only the community's address
# and a peer token of it, reach the agent that discovery chooses.
community_checks() {
COMMUNITY=interop
COMMUNITY_ADDRESS="$BASE/c/$COMMUNITY"
sb agent update "$CONN_HANDLE" --skills '[{"id":"shout","name":"Shout","tags":["echo"]}]' >/dev/null
sb agent join "$CONN_HANDLE" "$COMMUNITY" >/dev/null
COMMUNITY_TOKEN=$(sb --json community token "$COMMUNITY" a2a-clients | jget - .token)
[[ $COMMUNITY_TOKEN == sbp_* ]] || fail "switchboard community token printed '$COMMUNITY_TOKEN', not an sbp_ peer token"
a2a discover "$COMMUNITY_ADDRESS" -o json >"$WORK/community-discover.json"
expect_eq "community card: 1.0 interface" "$(jget "$WORK/community-discover.json" '.supportedInterfaces[0].url')" "$COMMUNITY_ADDRESS"
expect_eq "community card: the members' skills" "$(jget "$WORK/community-discover.json" '.skills[0].id')" shout
serve_card03 "$COMMUNITY_ADDRESS" community-card03
declare -A COMMUNITY_URL=([1.0]=$COMMUNITY_ADDRESS [0.3]=$CARD03_URL)
for v in 1.0 0.3; do
	out="$WORK/community-$v"
	a2a send "${COMMUNITY_URL[$v]}" "to the community over $v" --auth "Bearer $COMMUNITY_TOKEN" -o json >"$out.send.json"
	expect_answered "$v community send" "$out.send.json" "reply: to the community over $v"
	tid=$(jget "$out.send.json" .id)
	expect_eq "$v community send: protocol recorded by switchboard" "$(protocol_of "$tid")" "$v"
	a2a get task "${COMMUNITY_URL[$v]}" "$tid" --auth "Bearer $COMMUNITY_TOKEN" -o json >"$out.get.json"
	expect_answered "$v community get task" "$out.get.json" "reply: to the community over $v"
done
pass "a2a-go 1.0 and 0.3, community address: discover reads the community's card; send reaches the member; get task follows it"
(cd "$HERE/js" && env SB_ADDRESS="$COMMUNITY_ADDRESS" SB_TOKEN="$COMMUNITY_TOKEN" SB_SKILL=echo SB_ANSWER_PREFIX='reply: ' \
	timeout 150 node community.mjs) || fail "@a2a-js/sdk community checks failed (see the FAIL lines above)"
pass "@a2a-js/sdk $JS_SDK_VERSION, community address: send by skill, getTask, no_agent_found (1.0 and 0.3)"
}

# connector_group: the connector agent's checks. The clients' checks and the
# community's run beside each other while switchboard connect is up; the
# reconnect check, which takes it down, runs after them.
connector_group() {
	connect_agent
	pass "connector agent $CONN_HANDLE (the default mode, agent token sba_...) is connected through switchboard connect --exec"
	serve_card03 "$CONN_ADDRESS" conn-card03
	declare -gA CONN_URL=([1.0]=$CONN_ADDRESS [0.3]=$CARD03_URL)
	group "a2a-go CLI $A2A_GO_VERSION, connector agent, A2A 1.0" a2a_go_connector_checks 1.0 "$CONN_ADDRESS" 1.0 "$CONN_GO_TOKEN"
	group "a2a-go CLI $A2A_GO_VERSION, connector agent, A2A 0.3" a2a_go_connector_checks 0.3 "${CONN_URL[0.3]}" 0.3 "$CONN_GO03_TOKEN"
	group "@a2a-js/sdk $JS_SDK_VERSION, connector agent, A2A 1.0 and 0.3 (legacyCompat)" \
		js_checks "@a2a-js/sdk $JS_SDK_VERSION, connector agent" sdk-interop.mjs "$CONN_ADDRESS" "$CONN_JS_TOKEN" \
		SB_MODE=connector SB_MARKS="$MARKS"
	group "@a2a-js/sdk $JS_SDK03_VERSION, connector agent, A2A 0.3" \
		js_checks "@a2a-js/sdk $JS_SDK03_VERSION, connector agent" sdk03-interop.mjs "$CONN_ADDRESS" "$CONN_JS03_TOKEN" \
		SB_MODE=connector SB_MARKS="$MARKS"
	group "community address: a2a-go CLI and @a2a-js/sdk, A2A 1.0 and 0.3" community_checks
	wait_groups
	connector_away
	stop "$CONNECT_PID" "switchboard connect"
	expect_eq "exit status of switchboard connect after SIGTERM" "$STOPPED_RC" 0
	pass "switchboard connect stops cleanly on SIGTERM"
}

# ---------------------------------------------------------------------------
# switchboard send to plain @a2a-js/sdk servers (interop/js/a2a-js-agent.mjs,
# no Switchboard in them): @a2a-js/sdk 1.3.0 speaking only A2A 1.0 and
# @a2a-js/sdk 0.3.14 speaking only A2A 0.3. An inbox agent sends; the
# servers take no token and are on loopback (hence --allow-private). They
# answer each message "js got: TEXT" after a moment; a text starting with
# "ask:" gets the task to input-required ("js asks: which one?") instead.
# They take push notification configs and push to Switchboard's loopback
# address (the SDK's sender has no network guard).

# start_js_agent VERSION: starts a2a-js-agent.mjs for VERSION in the
# background (the cleanup ends it), waits until it listens and sets
# JS_AGENT_URL and JS_AGENT_LOG (one line per JSON-RPC call it took).
start_js_agent() {
	local port="$WORK/js-agent-$1.port"
	JS_AGENT_LOG="$WORK/js-agent-$1.log"
	node "$HERE/js/a2a-js-agent.mjs" "$1" "$port" >"$JS_AGENT_LOG" 2>&1 &
	wait_for 30 "the a2a-js $1 server did not start (see $JS_AGENT_LOG)" test -s "$port"
	JS_AGENT_URL="http://127.0.0.1:$(cat "$port")"
}

# js_send VERSION URL OUT TEXT [ARGS...]: switchboard --json send from the
# inbox agent to URL, waiting for the answer, into OUT.
js_send() {
	local v=$1 url=$2 out=$3 text=$4
	shift 4
	sb --json send "$url" --agent "$SENDER" --text "$text" --wait --timeout 20s --allow-private "$@" >"$out" ||
		fail "switchboard send to the a2a-js $v server failed (see $JS_AGENT_LOG)"
}

# js_send_checks VERSION SDK_VERSION: switchboard send, outbox and poll
# against the a2a-js server of VERSION.
js_send_checks() {
	local v=$1 sdk=$2 out="$WORK/send-js-$1"
	start_js_agent "$v"
	local url=$JS_AGENT_URL text="hello js over $v"

	js_send "$v" "$url" "$out.json" "$text"
	expect_eq "send to a2a-js $v: state" "$(jget "$out.json" .state)" completed
	expect_eq "send to a2a-js $v: protocol picked from the card" "$(jget "$out.json" .protocol)" "$v"
	expect_eq "send to a2a-js $v: endpoint from the card" "$(jget "$out.json" .endpoint)" "$url/a2a/jsonrpc"
	expect_eq "send to a2a-js $v: answer" "$(jget "$out.json" '.updates[-1].text')" "js got: $text"
	local id tid ctx
	id=$(jget "$out.json" .id)
	tid=$(jget "$out.json" .task_id)
	ctx=$(jget "$out.json" .context_id)
	[[ -n $tid && -n $ctx ]] || fail "send to a2a-js $v: no task or context id: $(cat "$out.json")"
	if [[ $v == 1.0 ]]; then
		grep -q '^rpc SendMessage a2a-version=1.0 ' "$JS_AGENT_LOG" ||
			fail "send to a2a-js 1.0: the server took no 1.0 SendMessage: $(cat "$JS_AGENT_LOG")"
	else
		grep -q '^rpc message/send ' "$JS_AGENT_LOG" ||
			fail "send to a2a-js 0.3: the server took no 0.3 message/send: $(cat "$JS_AGENT_LOG")"
	fi
	pass "switchboard send --wait to @a2a-js/sdk $sdk (A2A $v only): the task completes with its answer"

	sb outbox --agent "$SENDER" >"$out.outbox"
	grep -qF "$id  agent $SENDER → $url  task $tid  context $ctx  completed" "$out.outbox" ||
		fail "switchboard outbox does not list the send to a2a-js $v ($id) as completed: $(cat "$out.outbox")"
	# (the target is a URL on loopback: poll, like send, needs --allow-private)
	sb poll "$id" --allow-private >"$out.poll"
	grep -qF "sent to $url (A2A $v): task $tid  context $ctx  completed" "$out.poll" &&
		grep -qxF "  | js got: $text" "$out.poll" ||
		fail "switchboard poll $id (a2a-js $v): $(cat "$out.poll")"
	expect_eq "a2a-js $v: last update after poll" "$(sb --json outbox --agent "$SENDER" | jget - "[0].outbox[0].updates[-1].source")" poll
	sb history "$ctx" --agent "$SENDER" >"$out.history"
	grep -qF "$text" "$out.history" && grep -qF "js got: $text" "$out.history" ||
		fail "switchboard history $ctx (a2a-js $v) lacks the message or the answer: $(cat "$out.history")"
	pass "@a2a-js/sdk $sdk (A2A $v): switchboard outbox lists the send, poll refreshes it, history shows both directions"

	js_send "$v" "$url" "$out.ask.json" "ask: a colour over $v"
	expect_eq "a2a-js $v question: state" "$(jget "$out.ask.json" .state)" input-required
	expect_eq "a2a-js $v question: text" "$(jget "$out.ask.json" '.updates[-1].text')" "js asks: which one?"
	tid=$(jget "$out.ask.json" .task_id)
	ctx=$(jget "$out.ask.json" .context_id)
	js_send "$v" "$url" "$out.answer.json" "blue over $v" --task "$tid" --context "$ctx"
	expect_eq "a2a-js $v follow-up: task" "$(jget "$out.answer.json" .task_id)" "$tid"
	expect_eq "a2a-js $v follow-up: state" "$(jget "$out.answer.json" .state)" completed
	expect_eq "a2a-js $v follow-up: answer" "$(jget "$out.answer.json" '.updates[-1].text')" "js got: blue over $v"
	pass "@a2a-js/sdk $sdk (A2A $v): send --wait stops at input-required; send --task --context --wait continues the task to its answer"

	# --push: the a2a-js server pushes each change of the task to the
	# inbox agent's own address (SDK's DefaultPushNotificationSender, with
	# the fresh token), and the record completes without a poll.
	sb --json send "$url" --agent "$SENDER" --text "push me over $v" --push --allow-private >"$out.push.json" 2>"$out.push.err" ||
		fail "switchboard send --push to the a2a-js $v server failed: $(cat "$out.push.err")"
	expect_eq "send --push to a2a-js $v: push" "$(jget "$out.push.json" .push)" true
	expect_eq "send --push to a2a-js $v: push URL" "$(jget "$out.push.json" .push_url)" "$SENDER_ADDRESS/push"
	id=$(jget "$out.push.json" .id)
	wait_for 30 "the pushes of the a2a-js $v server did not complete the record $id (see $JS_AGENT_LOG)" \
		pushed_to_completion "$id" "$out.pushed.json"
	grep -qF "js got: push me over $v" "$out.pushed.json" ||
		fail "the pushes of the a2a-js $v server did not bring the answer: $(cat "$out.pushed.json")"
	pass "@a2a-js/sdk $sdk (A2A $v): send --push; the server's pushes to the agent's address complete the record, answer and all"
}

# pushed_to_completion ID FILE: the outbound record ID is the one
# switchboard outbox --json last updated (into FILE), completed by a push.
pushed_to_completion() {
	sb --json outbox --agent "$SENDER" -n 1 >"$2"
	[[ $(jget "$2" '[0].outbox[0].id') == "$1" && $(jget "$2" '[0].outbox[0].state') == completed &&
		$(jget "$2" '[0].outbox[0].updates[-1].source') == push ]]
}

# send_group VERSION SDK_VERSION AGENT: switchboard send from the inbox
# agent AGENT to the @a2a-js/sdk server of VERSION. Each version has a
# sending agent of its own, since the checks read the agent's latest
# outbound record.
send_group() {
	SENDER=$3 SENDER_ADDRESS="$BASE/a/$3"
	js_send_checks "$1" "$2"
}

# ---------------------------------------------------------------------------
# Fronts: Switchboard addresses in front of plain @a2a-js/sdk servers over
# https (a certificate for 127.0.0.1 made here with openssl): 0.3.14 (A2A
# 0.3 only) and 1.3.0 (A2A 1.0 only). The fronts run on a server of their
# own, which trusts the certificate (SSL_CERT_FILE) and may reach loopback
# (--allow-private-networks). The a2a-go CLI speaks 1.0 to the front,
# whatever the upstream speaks; the upstream sees the owner's bearer and
# the peer's label, never the peer's token.
fronts_group() {
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$WORK/front-key.pem" -out "$WORK/front-cert.pem" 2>"$WORK/openssl.err" ||
	fail "openssl could not make a test certificate: $(cat "$WORK/openssl.err")"
FRONT_LOG="$WORK/front-server.log"
FPORT=$(node "$TOOLS" free-port)
FBASE="http://127.0.0.1:$FPORT"
SSL_CERT_FILE="$WORK/front-cert.pem" "$SB" serve --data "$WORK/front-data" --addr "127.0.0.1:$FPORT" \
	--allow-private-networks >"$FRONT_LOG" 2>&1 &
FRONT_PID=$!
node "$TOOLS" wait-http "$FBASE/readyz" 20 || fail "the fronts' switchboard did not become ready at $FBASE (see $FRONT_LOG)"
# fsb runs the switchboard CLI against the fronts' server, as its operator.
fsb() { SWITCHBOARD_URL=$FBASE SWITCHBOARD_DATA=$WORK/front-data timeout 30 "$SB" "$@"; }
for v in 0.3 1.0; do
	port="$WORK/js-front-$v.port" jlog="$WORK/js-front-$v.log" h="front${v/./}"
	TLS_CERT="$WORK/front-cert.pem" TLS_KEY="$WORK/front-key.pem" node "$HERE/js/a2a-js-agent.mjs" "$v" "$port" >"$jlog" 2>&1 &
	wait_for 30 "the https a2a-js $v server did not start (see $jlog)" test -s "$port"
	upstream="https://127.0.0.1:$(cat "$port")/a2a/jsonrpc"
	fsb --json agent create "$h" --mode front --upstream "$upstream" >"$WORK/front-$h.json"
	expect_eq "front $h: mode" "$(jget "$WORK/front-$h.json" .mode)" front
	printf '%s\n' upstream-owner-secret | fsb front credentials "$h" --bearer-stdin >/dev/null
	fsb front verify "$h" >"$WORK/front-$h.verify" 2>&1 || fail "front verify $h: $(cat "$WORK/front-$h.verify")"
	grep -q reachable "$WORK/front-$h.verify" || fail "front verify $h: $(cat "$WORK/front-$h.verify")"
	tok=$(fsb --json token issue --agent "$h" a2a-go | jget - .token)
	a2a discover "$FBASE/a/$h" -o json >"$WORK/front-$h.card.json"
	expect_eq "front $h card: the upstream's name" "$(jget "$WORK/front-$h.card.json" .name)" "a2a-js $v echo"
	expect_eq "front $h card: our interface" "$(jget "$WORK/front-$h.card.json" '.supportedInterfaces[0].url')" "$FBASE/a/$h"
	! grep -q "127.0.0.1:$(cat "$port")" "$WORK/front-$h.card.json" || fail "front $h card names the upstream: $(cat "$WORK/front-$h.card.json")"
	a2a send "$FBASE/a/$h" "through the front to $v" --auth "Bearer $tok" -o json >"$WORK/front-$h.send.json"
	expect_answered "front to a2a-js $v" "$WORK/front-$h.send.json" "js got: through the front to $v"
	# (the servers stream: the front sends with a stream)
	if [[ $v == 1.0 ]]; then want='^rpc SendStreamingMessage a2a-version=1.0 '; else want='^rpc message/stream a2a-version=0.3 '; fi
	grep -q "$want" "$jlog" || fail "front $h: the upstream took no $v send: $(cat "$jlog")"
	grep -q ' peer=a2a-go auth=Bearer upstream-owner-secret$' "$jlog" ||
		fail "front $h: the upstream did not see the peer's label and the owner's bearer: $(cat "$jlog")"
	! grep -qF "$tok" "$jlog" || fail "front $h: the peer's token reached the upstream"
	fsb --json front status "$h" >"$WORK/front-$h.status.json"
	expect_eq "front $h status: card" "$(jget "$WORK/front-$h.status.json" .card)" ok
	expect_eq "front $h status: leaks" "$(jget "$WORK/front-$h.status.json" '.public_card_leaks.length')" 0
	pass "front before @a2a-js/sdk (A2A $v only, https): verify reachable; the card is the upstream's at the front's address; an a2a-go 1.0 send is answered; the upstream sees the owner's bearer and the peer's label, not the peer's token"
done
stop "$FRONT_PID" "the fronts' switchboard"
}

# ---------------------------------------------------------------------------
# The groups of checks, all at once: the a2a-go CLI's at the inbox agent
# at once, the others when npm ci has ended.
need openssl
create_connector_agent
SENDER03=sender03
create_agent "$SENDER03" inbox --mode inbox
group "a2a-go CLI $A2A_GO_VERSION, A2A 1.0" go_inbox_v1
group "a2a-go CLI $A2A_GO_VERSION, A2A 0.3" go_inbox_v03
group "a2a-go CLI $A2A_GO_VERSION, A2A 1.0 over HTTP+JSON" go_inbox_bindings rest
group "a2a-go CLI $A2A_GO_VERSION, A2A 1.0 over gRPC" go_inbox_bindings grpc

log "@a2a-js/sdk"
npm_rc=0
wait "$NPM_PID" || npm_rc=$?
cat "$WORK/npm-ci.log"
((npm_rc == 0)) || fail "npm ci in interop/js failed (exit $npm_rc)"
JS_SDK_VERSION=$(cd "$HERE/js" && node -p 'require("./node_modules/@a2a-js/sdk/package.json").version')
JS_SDK03_VERSION=$(cd "$HERE/js" && node -p 'require("./node_modules/a2a-js-sdk-v03/package.json").version')
pass "@a2a-js/sdk $JS_SDK_VERSION and $JS_SDK03_VERSION are installed"
group "@a2a-js/sdk $JS_SDK_VERSION, A2A 1.0 and 0.3 (legacyCompat)" \
	js_checks "@a2a-js/sdk $JS_SDK_VERSION" sdk-interop.mjs "$ADDRESS" "$JS_TOKEN"
group "@a2a-js/sdk $JS_SDK03_VERSION, a client for A2A 0.3 only" \
	js_checks "@a2a-js/sdk $JS_SDK03_VERSION" sdk03-interop.mjs "$ADDRESS" "$JS03_TOKEN"
group "@a2a-js/sdk $JS_SDK_VERSION over HTTP+JSON (1.0 and 0.3) and gRPC (1.0)" \
	js_checks "@a2a-js/sdk $JS_SDK_VERSION over HTTP+JSON and gRPC" bindings.mjs "$ADDRESS" "$JS_BINDINGS_TOKEN"
group "connector agent (switchboard connect --exec)" connector_group
group "switchboard send to an @a2a-js/sdk $JS_SDK_VERSION server, A2A 1.0" send_group 1.0 "$JS_SDK_VERSION" "$HANDLE"
group "switchboard send to an @a2a-js/sdk $JS_SDK03_VERSION server, A2A 0.3" send_group 0.3 "$JS_SDK03_VERSION" "$SENDER03"
group "fronts before @a2a-js/sdk servers over https" fronts_group
wait_groups

stop "$SERVER_PID" switchboard
expect_eq "exit status of switchboard after SIGTERM" "$STOPPED_RC" 0
pass "switchboard shuts down cleanly on SIGTERM"

log "summary"
mapfile -t PASSED <"$PASSED_FILE"
printf '  %d checks passed in %d s:\n' "${#PASSED[@]}" "$((SECONDS - STARTED))"
printf '    - %s\n' "${PASSED[@]}"
echo "PASS: a2a-go CLI $A2A_GO_VERSION, @a2a-js/sdk $JS_SDK_VERSION and @a2a-js/sdk $JS_SDK03_VERSION interoperate with switchboard over A2A 1.0 and 0.3, with an inbox agent, a connector agent, a community's address and fronts before @a2a-js/sdk servers over https; switchboard send reaches @a2a-js/sdk $JS_SDK_VERSION (1.0) and $JS_SDK03_VERSION (0.3) servers"
