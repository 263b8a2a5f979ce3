package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/connproto"
)

// sessionLinger is how long a session's command may run on after the
// session ended and its stdin closed, before it is killed.
const sessionLinger = 5 * time.Second

// sessionExec runs a shell command for each live session another agent
// opens with this one (connect --session-exec): each frame it receives is
// a line on the command's stdin, each line of its stdout is a frame sent,
// in the framing --session-framing names.
type sessionExec struct {
	command string
	max     int // sessions at once; more are refused
	framing sessionFraming
	log     *slog.Logger
	running atomic.Int32
}

// HandleSession accepts the session, unless max sessions run already, and
// runs the command for it until either ends: the command exiting closes
// the session (its exit status is the message), the session ending closes
// the command's stdin, and a command still running sessionLinger later is
// killed.
func (h *sessionExec) HandleSession(ctx context.Context, r *connector.SessionRequest) {
	if int(h.running.Add(1)) > h.max {
		h.running.Add(-1)
		_ = r.Refuse(fmt.Sprintf("busy: %d sessions run already", h.max))
		h.log.Info("refused a session: as many run as --session-max allows", "from", r.From.Handle, "max", h.max)
		return
	}
	defer h.running.Add(-1)
	s, err := r.Accept()
	if err != nil {
		h.log.Warn("accept a session", "from", r.From.Handle, "err", err)
		return
	}
	log := h.log.With("session_id", s.ID(), "peer", s.Peer().Handle)
	log.Info("session accepted; running the command")
	message := h.run(ctx, s, log)
	_ = s.CloseWith(message)
	log.Info("session ended", "reason", message)
}

// run runs the command for s and returns why it ended, for the peer.
func (h *sessionExec) run(ctx context.Context, s *connector.Session, log *slog.Logger) string {
	cctx, kill := context.WithCancel(ctx)
	defer kill()
	cmd := exec.CommandContext(cctx, "sh", "-c", h.command)
	cmd.Env = sessionEnv(s)
	stderr := &tailBuffer{max: maxReasonBytes}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "the command could not start"
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "the command could not start"
	}
	cmd.WaitDelay = killWait
	killGroupOnCancel(cmd)
	if err := cmd.Start(); err != nil {
		log.Warn("start the session command", "err", err)
		return "the command could not start"
	}
	go feedCommand(cctx, s, stdin, h.framing.line, kill, log)
	h.framing.send(ctx, s, stdout, log)
	err = cmd.Wait()
	if err != nil && ctx.Err() == nil && s.Err() == nil {
		return exitReason(err, stderr.String())
	}
	return "the command ended"
}

// feedCommand writes each frame of s to w as the line line makes of it,
// until the session ends, then closes w, and kills the command if it does
// not end within sessionLinger.
func feedCommand(ctx context.Context, s *connector.Session, w io.WriteCloser, line func(connector.Frame) []byte, kill func(), log *slog.Logger) {
	bw := bufio.NewWriter(w)
	for {
		f, err := s.Receive(ctx)
		if err != nil {
			break
		}
		_, err = bw.Write(line(f))
		if err == nil && s.Buffered() == 0 {
			err = bw.Flush() // nothing more waits: let the command have it now
		}
		if err != nil {
			log.Debug("write to the session command", "err", err)
			break
		}
	}
	_ = bw.Flush()
	_ = w.Close()
	select {
	case <-ctx.Done():
	case <-time.After(sessionLinger):
		log.Info("the session command did not end after its session; killed it")
		kill()
	}
}

// frameLine is a frame as a line of the command's stdin in the lines
// framing: a text frame's text, a JSON frame's JSON on one line. A newline
// in a text frame splits it into several lines.
func frameLine(f connector.Frame) []byte {
	if f.IsJSON() {
		var b bytes.Buffer
		if json.Compact(&b, f.Data) == nil {
			return append(b.Bytes(), '\n')
		}
		return append(slices.Clone([]byte(f.Data)), '\n')
	}
	return []byte(strings.TrimSuffix(f.Text, "\n") + "\n")
}

// sendLines sends each line r yields as a text frame (the lines
// framing), until r ends (the command closed its stdout or exited) or the
// session ends. A line longer than a frame holds goes in pieces.
func sendLines(ctx context.Context, s *connector.Session, r io.Reader, log *slog.Logger) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), connproto.MaxSessionFrameBytes)
	sc.Split(linesOrPieces(connproto.MaxSessionFrameBytes - 2))
	for sc.Scan() {
		if err := sendText(ctx, s, sc.Text()); err != nil {
			if !errors.Is(err, connector.ErrSessionClosed) && ctx.Err() == nil {
				log.Warn("send the command's output", "err", err)
			}
			_, _ = io.Copy(io.Discard, r) // let the command finish writing
			return
		}
	}
}

// sendText sends text as one frame, or as several when its JSON is too
// large for one (escapes make it longer than the text).
func sendText(ctx context.Context, s *connector.Session, text string) error {
	err := s.Send(ctx, text)
	if !errors.Is(err, connector.ErrFrameTooLarge) {
		return err
	}
	cut := len(text) / 2
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	if cut == 0 {
		return err
	}
	if err := sendText(ctx, s, text[:cut]); err != nil {
		return err
	}
	return sendText(ctx, s, text[cut:])
}

// linesOrPieces is bufio.ScanLines whose tokens hold at most max bytes: a
// longer line is cut (at a character's start) into pieces.
func linesOrPieces(max int) bufio.SplitFunc {
	return func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexByte(data, '\n'); i >= 0 && i <= max {
			return i + 1, bytes.TrimSuffix(data[:i], []byte("\r")), nil
		}
		if len(data) >= max {
			cut := max
			for cut > 0 && !utf8.RuneStart(data[cut]) {
				cut--
			}
			if cut == 0 {
				cut = max
			}
			return cut, data[:cut], nil
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	}
}

// sessionVars names the variables that describe the session to the
// command.
var sessionVars = []string{"SWITCHBOARD_SESSION_ID", "SWITCHBOARD_SESSION_PEER", "SWITCHBOARD_SESSION_PEER_ID"}

// sessionEnv returns the command's environment: the connector's own,
// without its secrets and the variables of tasks and sessions it
// inherited, plus the session's id and the peer's handle and id.
func sessionEnv(s *connector.Session) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(secretVars, name) && !slices.Contains(taskVars, name) && !slices.Contains(sessionVars, name) &&
			!strings.HasPrefix(name, "SWITCHBOARD_TASK_") {
			env = append(env, kv)
		}
	}
	for i, v := range []string{s.ID(), s.Peer().Handle, s.Peer().ID} {
		if envSafe(v) {
			env = append(env, sessionVars[i]+"="+v)
		}
	}
	return env
}
