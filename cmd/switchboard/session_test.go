package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/server"
)

// joinCommunity puts the agent handle in community through the owner API.
func joinCommunity(t *testing.T, base, ownerToken, handle, community string) {
	t.Helper()
	req, _ := http.NewRequest("PUT", base+"/agents/"+handle+"/communities/"+community, nil)
	req.Header.Set("Authorization", "Bearer "+ownerToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("join %s to %s: HTTP %d", handle, community, resp.StatusCode)
	}
}

// saidHello waits until the agent's connection said hello: its session is
// in the store, and others may open sessions with it.
func saidHello(t *testing.T, m *server.Server, agentID string) {
	t.Helper()
	testwait.For(t, "the agent to say hello", func() bool {
		s, err := m.DB.FindSession(context.Background(), agentID)
		return err == nil && s.Live(time.Now())
	})
}

// chat runs switchboard chat with stdin and returns what it printed.
func chat(t *testing.T, m *server.Server, token, to, stdin string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	var out, errOut bytes.Buffer
	err := runIO(ctx, []string{"--server", m.URL(), "chat", "--token", token, "--linger", "300ms", "--log-level", "error", to},
		strings.NewReader(stdin), &out, &errOut)
	return out.String(), err
}

// TestChatWithSessionExec: chat with an echo agent (connect --session-exec
// cat) prints every line back, in order; an agent whose command ends
// after one line closes the session, which ends chat without an error; an
// agent without --session-exec refuses.
func TestChatWithSessionExec(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	owner := m.GeneratedOwnerToken
	aliceID, aliceToken, _ := connectAgent(t, m, "alice")
	echoID, echoToken, _ := connectAgent(t, m, "echo")
	headID, headToken, _ := connectAgent(t, m, "head")
	plainID, plainToken, _ := connectAgent(t, m, "plain")
	for _, h := range []string{"alice", "echo", "head", "plain"} {
		joinCommunity(t, m.URL(), owner, h, "team")
	}
	startConnect(t, m, echoID, "--token", echoToken, "--session-exec", "cat")
	startConnect(t, m, headID, "--token", headToken, "--session-exec", "head -n 1")
	startConnect(t, m, plainID, "--token", plainToken, "--exec", "cat")
	for _, id := range []string{echoID, headID, plainID} {
		saidHello(t, m, id)
	}
	_ = aliceID

	lines := "one\ntwo\n{\"json\": true}\n" + strings.Repeat("x", 1000) + "\n"
	out, err := chat(t, m, aliceToken, "echo", lines)
	if err != nil {
		t.Fatalf("chat with the echo agent: %v", err)
	}
	if out != lines {
		t.Fatalf("chat printed %q, want %q", out, lines)
	}

	out, err = chat(t, m, aliceToken, "head", "first\nsecond\nthird\n")
	if err != nil {
		t.Fatalf("chat with head: %v", err)
	}
	if out != "first\n" {
		t.Fatalf("chat with head printed %q", out)
	}

	if _, err := chat(t, m, aliceToken, "plain", "hi\n"); err == nil || !strings.Contains(err.Error(), "takes no sessions") {
		t.Fatalf("chat with an agent without --session-exec: %v", err)
	}
}

// TestChatEndsWithTheSession: chat ends when the session does, while its
// stdin is still open: an agent whose command exits after one line closes
// the session, and chat returns at once without an error.
func TestChatEndsWithTheSession(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	_, aliceToken, _ := connectAgent(t, m, "alice")
	headID, headToken, _ := connectAgent(t, m, "head")
	for _, h := range []string{"alice", "head"} {
		joinCommunity(t, m.URL(), m.GeneratedOwnerToken, h, "team")
	}
	startConnect(t, m, headID, "--token", headToken, "--session-exec", "head -n 1")
	saidHello(t, m, headID)

	stdin, typing := io.Pipe()
	t.Cleanup(func() { _ = typing.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*testwait.Timeout)
	defer cancel()
	var out, errOut bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- runIO(ctx, []string{"--server", m.URL(), "chat", "--token", aliceToken, "--log-level", "error", "head"},
			stdin, &out, &errOut)
	}()
	if _, err := io.WriteString(typing, "first\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("chat: %v", err)
		}
		if out.String() != "first\n" {
			t.Fatalf("chat printed %q", out.String())
		}
	case <-time.After(testwait.Timeout):
		t.Fatal("chat did not end with the session while its stdin was open")
	}
}
