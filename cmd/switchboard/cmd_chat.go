package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/alecthomas/kong"
	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/connproto"
)

// ChatCmd opens a live session from an agent to another one and connects
// it to the terminal: each line of stdin is a frame sent, each frame
// received is printed.
type ChatCmd struct {
	Token     string        `name:"token" env:"SWITCHBOARD_AGENT_TOKEN" help:"The agent token (sba_…) of the agent that chats. chat connects as that agent: a connector of the same agent running elsewhere is replaced meanwhile (stop it, or chat as an agent of its own). Tasks sent to the agent wait at the server while chat runs."`
	To        string        `arg:"" name:"agent" help:"The agent to chat with: its handle or address. It must share a community with yours and accept the session."`
	Linger    time.Duration `name:"linger" default:"2s" help:"When stdin ends, keep printing what arrives until the other agent closes the session or nothing arrives for this long; then close it."`
	LogLevel  string        `name:"log-level" env:"SWITCHBOARD_LOG_LEVEL" default:"warn" enum:"debug,info,warn,error" help:"Log level (logs go to stderr)."`
	LogFormat string        `name:"log-format" env:"SWITCHBOARD_LOG_FORMAT" default:"text" enum:"text,json" help:"Log format."`
}

// Run connects, opens the session, and copies stdin to it and it to
// stdout until one side ends. It returns nil when stdin ended or the
// other agent closed the session, and an error that says why otherwise.
func (c *ChatCmd) Run(ctx context.Context, cli *CLI, kctx *kong.Context) error {
	if strings.TrimSpace(c.Token) == "" {
		return errors.New("no agent token: set SWITCHBOARD_AGENT_TOKEN or --token")
	}
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	client := &connector.Client{URLs: serverURLs(cli.serverURL(), kctx.Args), Token: strings.TrimSpace(c.Token),
		Logger: newLogger(c.LogLevel, c.LogFormat), ClientName: "switchboard-chat/" + currentBuild().Version}
	ran := make(chan error, 1)
	go func() {
		err := client.Run(ctx)
		ran <- err
		stop(err) // the server refused the agent: nothing to wait for
	}()
	defer func() {
		stop(nil)
		<-ran
	}()
	s, err := client.OpenSession(ctx, c.To, nil)
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			return cause
		}
		return err
	}
	fmt.Fprintf(cli.errOut, "chatting with %s (session %s); end with Ctrl-D\n", s.Peer().Handle, s.ID())
	return c.chat(ctx, cli, s)
}

// chat copies stdin to s and s to stdout, until stdin ends (then it
// lingers) or the session ends, whichever comes first.
func (c *ChatCmd) chat(ctx context.Context, cli *CLI, s *connector.Session) error {
	printed := make(chan error, 1)
	activity := make(chan struct{}, 1)
	go func() { printed <- printFrames(ctx, s, cli.out, activity) }()
	lines := readLines(ctx, cli.stdin)
	for reading := true; reading; {
		select {
		case line, ok := <-lines:
			if !ok {
				reading = false
				break
			}
			if err := sendText(ctx, s, line); err != nil {
				return c.ended(<-printed, err)
			}
		case err := <-printed: // the session ended while stdin is open
			return c.ended(err, nil)
		case <-ctx.Done():
			return c.stopped(ctx)
		}
	}
	// stdin ended: print what still comes, then close.
	t := time.NewTimer(c.Linger)
	defer t.Stop()
	for {
		select {
		case err := <-printed:
			return c.ended(err, nil)
		case <-activity:
			t.Reset(c.Linger)
		case <-t.C:
			_ = s.Close()
			return nil
		case <-ctx.Done():
			return c.stopped(ctx)
		}
	}
}

// readLines sends each line of r on the channel it returns, which it
// closes when r ends or ctx ends. A read that blocks outlives ctx (stdin
// cannot be interrupted); the process ends it.
func readLines(ctx context.Context, r io.Reader) <-chan string {
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	return lines
}

// stopped is what chat returns when ctx ended: the client's error, if it
// stopped on one (the server refused the agent), else nothing.
func (c *ChatCmd) stopped(ctx context.Context) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) && !errors.Is(cause, context.DeadlineExceeded) {
		return cause
	}
	return nil
}

// ended says how the chat ended: the other agent closing it is fine.
func (c *ChatCmd) ended(received, sendErr error) error {
	var se *connector.SessionError
	switch {
	case errors.As(received, &se) && se.Reason == connproto.SessionReasonClosed:
		return nil
	case errors.As(received, &se):
		return fmt.Errorf("the session with %s ended: %s", c.To, se.Error())
	case received != nil && !errors.Is(received, context.Canceled):
		return received
	}
	return sendErr
}

// printFrames prints each frame of s on out, one a line, until the
// session ends; it signals activity after each.
func printFrames(ctx context.Context, s *connector.Session, out io.Writer, activity chan<- struct{}) error {
	for {
		f, err := s.Receive(ctx)
		if err != nil {
			return err
		}
		line := f.Text
		if f.IsJSON() {
			var b bytes.Buffer
			if json.Compact(&b, f.Data) == nil {
				line = b.String()
			}
		}
		if _, err := fmt.Fprintln(out, line); err != nil {
			return err
		}
		select {
		case activity <- struct{}{}:
		default:
		}
	}
}
