package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/server"
)

// openSessionAs connects a client as the agent (it takes no tasks) until
// the test ends and opens a session with the agent to.
func openSessionAs(t *testing.T, m *server.Server, agentID, agentToken, to string) *connector.Session {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cl := &connector.Client{URLs: []string{m.URL()}, Token: agentToken, Logger: slog.New(slog.DiscardHandler)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cl.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	saidHello(t, m, agentID)
	octx, ocancel := context.WithTimeout(ctx, testwait.Timeout)
	defer ocancel()
	s, err := cl.OpenSession(octx, to, nil)
	if err != nil {
		t.Fatalf("open a session with %s: %v", to, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// receive returns the session's next frame: its text, or its JSON.
func receive(t *testing.T, s *connector.Session) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	f, err := s.Receive(ctx)
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	if f.IsJSON() {
		return "json:" + string(f.Data)
	}
	return f.Text
}

// TestSessionFraming: connect --session-exec cat echoes a text frame
// that holds newlines as one line per line with the default framing (a
// newline splits a frame), and whole with --session-framing json, where a
// JSON frame comes back a JSON frame; in json framing, a line of the
// command's output that is not JSON, or longer than any frame, is skipped
// and the next ones are sent.
func TestSessionFraming(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	aliceID, aliceToken, _ := connectAgent(t, m, "alice")
	linesID, linesToken, _ := connectAgent(t, m, "lines")
	jsonID, jsonToken, _ := connectAgent(t, m, "jsonecho")
	mixedID, mixedToken, _ := connectAgent(t, m, "mixed")
	for _, h := range []string{"alice", "lines", "jsonecho", "mixed"} {
		joinCommunity(t, m.URL(), m.GeneratedOwnerToken, h, "team")
	}
	startConnect(t, m, linesID, "--token", linesToken, "--session-exec", "cat")
	startConnect(t, m, jsonID, "--token", jsonToken, "--session-exec", "cat", "--session-framing", "json")
	startConnect(t, m, mixedID, "--token", mixedToken, "--session-framing", "json",
		"--session-exec", `printf '"'; head -c 400000 /dev/zero | tr '\0' a; printf '"\n'; printf '%s\n' 'not json' '' '"first\nline"' '{"n":1}' '"unterminated'; cat`)
	for _, id := range []string{linesID, jsonID, mixedID} {
		saidHello(t, m, id)
	}
	ctx := context.Background()
	text := "one\ntwo \"quoted\" <b>&\ttab\nthree"

	s := openSessionAs(t, m, aliceID, aliceToken, "lines")
	if err := s.Send(ctx, text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"one", "two \"quoted\" <b>&\ttab", "three"} {
		if got := receive(t, s); got != want {
			t.Fatalf("lines framing: got %q, want %q", got, want)
		}
	}
	_ = s.Close()

	s = openSessionAs(t, m, aliceID, aliceToken, "jsonecho")
	if err := s.Send(ctx, text); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, s); got != text {
		t.Fatalf("json framing: got %q, want %q", got, text)
	}
	if err := s.SendJSON(ctx, map[string]any{"k": "v\nw", "n": 2}); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if got := receive(t, s); len(got) < 5 || got[:5] != "json:" || json.Unmarshal([]byte(got[5:]), &back) != nil ||
		back["k"] != "v\nw" || back["n"] != float64(2) {
		t.Fatalf("json framing, a JSON frame came back as %q", got)
	}
	if err := s.Send(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, s); got != "" {
		t.Fatalf("json framing, an empty text frame came back as %q", got)
	}
	_ = s.Close()

	s = openSessionAs(t, m, aliceID, aliceToken, "mixed")
	for _, want := range []string{"first\nline", `json:{"n":1}`} {
		if got := receive(t, s); got != want {
			t.Fatalf("json framing, the command's own lines: got %q, want %q", got, want)
		}
	}
	if err := s.Send(ctx, "after\nthe bad lines"); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, s); got != "after\nthe bad lines" {
		t.Fatalf("json framing after lines that are not JSON: got %q", got)
	}
}

// TestSessionFramingNeedsSessionExec: --session-framing json without
// --session-exec is refused before connecting.
func TestSessionFramingNeedsSessionExec(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"--server", "http://127.0.0.1:1", "connect", "--token", "sba_x", "--exec", "cat",
		"--session-framing", "json"}, &out)
	if err == nil || !strings.Contains(err.Error(), "--session-exec") {
		t.Fatalf("connect --session-framing json without --session-exec: %v", err)
	}
}
