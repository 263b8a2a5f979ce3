package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard/connector"
)

// Limits on what a command's output becomes.
const (
	maxReplyBytes  = 1 << 20 // stdout kept as the reply
	maxReasonBytes = 2000    // the tail of stderr kept as a failure reason
	// killWait bounds how long Wait waits for the output pipes after the
	// command was killed (a grandchild may hold them open).
	killWait = 2 * time.Second
)

// execHandler runs a shell command for each task (connect --exec).
type execHandler struct {
	command string
	timeout time.Duration
	log     *slog.Logger
}

// Handle runs the command with the message text on stdin: stdout becomes
// the reply, a non-zero exit fails the task with the tail of stderr, and
// the timeout kills the command's process group and fails the task. A
// canceled task kills the command and reports nothing. Only the text
// parts of the message reach the command; its file and data parts are
// dropped, with a warning in the log. The task's ids and sender are in
// the environment (see taskEnv), except a value that an environment cannot
// carry, which is left out, with a warning in the log.
func (h *execHandler) Handle(ctx context.Context, w *connector.Work) {
	if n := nonTextParts(w.Message); n > 0 {
		h.log.Warn("the command gets only the message's text: its file and data parts were dropped", "task_id", w.TaskID, "dropped_parts", n)
	}
	cctx, cancel := context.WithTimeoutCause(ctx, h.timeout, errTaskTimeout)
	defer cancel()
	stdout := &headBuffer{max: maxReplyBytes}
	stderr := &tailBuffer{max: maxReasonBytes}
	cmd := exec.CommandContext(cctx, "sh", "-c", h.command)
	cmd.Stdin = strings.NewReader(w.Text())
	cmd.Stdout, cmd.Stderr = stdout, stderr
	env, omitted := taskEnv(w)
	if len(omitted) > 0 {
		h.log.Warn("left task variables out of the command's environment: their values hold control characters or are not UTF-8", "task_id", w.TaskID, "variables", omitted)
	}
	cmd.Env = env
	cmd.WaitDelay = killWait
	killGroupOnCancel(cmd)
	start := time.Now()
	err := cmd.Run()
	log := h.log.With("task_id", w.TaskID, "took", time.Since(start).Round(time.Millisecond))
	switch {
	case ctx.Err() != nil:
		log.Info("stopped the command: the task was canceled or the connector is stopping")
	case errors.Is(context.Cause(cctx), errTaskTimeout):
		log.Warn("the command timed out; killed it", "timeout", h.timeout)
		fail(ctx, w, h.log, fmt.Sprintf("the command did not finish within %s and was stopped", h.timeout))
	case err != nil:
		reason := exitReason(err, stderr.String())
		log.Info("the command failed", "reason", reason)
		fail(ctx, w, h.log, reason)
	default:
		h.reply(ctx, w, log, stdout)
	}
}

// reply completes the task with the command's output as the answer.
func (h *execHandler) reply(ctx context.Context, w *connector.Work, log *slog.Logger, stdout *headBuffer) {
	if stdout.truncated {
		log.Warn("the command's output was cut to the size limit", "limit_bytes", maxReplyBytes)
	}
	text := strings.TrimSpace(stdout.String())
	var err error
	if text == "" {
		err = w.Complete()
	} else {
		err = w.Reply(text)
	}
	if err != nil && ctx.Err() == nil {
		log.Warn("report the command's answer", "err", err)
		return
	}
	log.Info("task completed")
}

// nonTextParts counts the parts of m that are not text.
func nonTextParts(m *a2a.Message) int {
	n := 0
	if m != nil {
		for _, p := range m.Parts {
			if p == nil {
				continue
			}
			if _, ok := p.Content.(a2a.Text); !ok {
				n++
			}
		}
	}
	return n
}

// exitReason describes a command that failed, with the tail of its stderr.
func exitReason(err error, stderr string) string {
	reason := "the command failed: " + err.Error()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if code := ee.ExitCode(); code >= 0 {
			reason = "the command exited with status " + strconv.Itoa(code)
		} else {
			reason = "the command was killed (" + ee.String() + ")"
		}
	}
	if tail := strings.TrimSpace(stderr); tail != "" {
		reason += ": " + tail
	}
	return reason
}

// secretVars are the variables a command never sees: it works on untrusted
// input, and the agent's credentials are not its business.
var secretVars = []string{"SWITCHBOARD_AGENT_TOKEN", "SWITCHBOARD_FORWARD_TOKEN", "SWITCHBOARD_OWNER_TOKEN"}

// taskVars names the variables that describe the task to the command.
var taskVars = []string{"SWITCHBOARD_TASK_ID", "SWITCHBOARD_CONTEXT_ID", "SWITCHBOARD_MESSAGE_ID", "SWITCHBOARD_FROM", "SWITCHBOARD_PEER_ID", "SWITCHBOARD_NEW_TASK"}

// traceVar is where the command finds the trace context of its task,
// when the deployment traces: a W3C traceparent, as OpenTelemetry SDKs
// and tools (otel-cli) read it. It is never inherited from the connector's
// own environment, so a command never joins a trace that is not its
// task's.
const traceVar = "TRACEPARENT"

// taskEnv returns the command's environment: the connector's own, without
// its secrets and without any variable of the task's names it inherited,
// plus the task's ids and sender (SWITCHBOARD_TASK_ID,
// SWITCHBOARD_CONTEXT_ID, SWITCHBOARD_MESSAGE_ID, SWITCHBOARD_FROM, and
// SWITCHBOARD_PEER_ID, which with the context id names the conversation)
// and SWITCHBOARD_NEW_TASK, and TRACEPARENT when the offer carried a
// trace context (traceVar). A value that an environment cannot carry
// faithfully (see envSafe) is not mangled but left out, with its variable:
// a command must treat each of them as optional. omitted names the
// variables left out. Starting the command never fails over a value.
func taskEnv(w *connector.Work) (env, omitted []string) {
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(secretVars, name) && !slices.Contains(taskVars, name) && !strings.HasPrefix(name, "SWITCHBOARD_TASK_") && name != traceVar {
			env = append(env, kv)
		}
	}
	values := []string{string(w.TaskID), w.ContextID, w.MessageID, w.From, w.PeerID, strconv.FormatBool(w.NewTask)}
	for i, name := range taskVars {
		if !envSafe(values[i]) {
			omitted = append(omitted, name)
			continue
		}
		env = append(env, name+"="+values[i])
	}
	if w.TraceParent != "" { // checked by the connector: a W3C traceparent
		env = append(env, traceVar+"="+w.TraceParent)
	}
	return env, omitted
}

// envSafe reports whether v can be the value of an environment variable as
// it is: UTF-8 text without control characters. A NUL cannot be passed to
// a process at all (starting it would fail), and the other control
// characters (newlines, escapes) would let the untrusted value forge lines
// wherever a script writes it.
func envSafe(v string) bool {
	if !utf8.ValidString(v) {
		return false
	}
	for _, r := range v {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// headBuffer keeps the first max bytes written to it.
type headBuffer struct {
	max       int
	buf       []byte
	truncated bool
}

// Write implements io.Writer; it never fails, so the command is not killed
// by a broken pipe when it writes more.
func (b *headBuffer) Write(p []byte) (int, error) {
	room := b.max - len(b.buf)
	if len(p) > room {
		b.truncated = true
		b.buf = append(b.buf, p[:max(room, 0)]...)
	} else {
		b.buf = append(b.buf, p...)
	}
	return len(p), nil
}

// String returns what was kept, without a character cut in half.
func (b *headBuffer) String() string {
	return strings.ToValidUTF8(string(b.buf), "")
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
}

// Write implements io.Writer.
func (b *tailBuffer) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

// String returns what was kept, from a character boundary.
func (b *tailBuffer) String() string {
	s := b.buf
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	return string(s)
}
