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
)

// TestConnectForwardPublishesCard: connect --forward publishes its
// server's card, which the agent's address then serves (1.0 and 0.3)
// with the server's name and skills but none of its URLs; a connect that
// does not forward forgets it.
func TestConnectForwardPublishesCard(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	up := newUpstreamAgent(t, "1.0", true)
	upHost := strings.TrimPrefix(up.srv.URL, "http://")
	id, agentToken, _ := connectAgent(t, m, "laptop")
	card := func(path string) string {
		res, err := http.Get(m.URL() + "/a/laptop" + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, res.StatusCode, body)
		}
		return string(body)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		var out bytes.Buffer
		done <- run(ctx, []string{"--server", m.URL(), "connect", "--log-level", "error", "--token", agentToken, "--forward", up.srv.URL}, &out)
	}()
	testwait.For(t, "the address to serve the forward server's card", func() bool {
		return strings.Contains(card("/.well-known/agent-card.json"), `"Upstream 1.0"`)
	})
	for _, path := range []string{"/.well-known/agent-card.json", "/.well-known/agent.json"} {
		c := card(path)
		if !strings.Contains(c, `"echo"`) || !strings.Contains(c, `"echoes"`) {
			t.Errorf("%s lacks the server's skill: %s", path, c)
		}
		if strings.Contains(c, upHost) || !strings.Contains(c, m.URL()+"/a/laptop") {
			t.Errorf("%s names the forward server, or not the address: %s", path, c)
		}
	}
	if show := cli(t, m, "agent", "show", "laptop"); !strings.Contains(show, `published card  "Upstream 1.0", 1 skills, from `+up.srv.URL) {
		t.Errorf("agent show does not name the published card:\n%s", show)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("connect did not stop")
	}

	// The owner's settings come first.
	cli(t, m, "agent", "update", "laptop", "--description", "my own words")
	if c := card("/.well-known/agent-card.json"); !strings.Contains(c, `"my own words"`) || !strings.Contains(c, `"Upstream 1.0"`) {
		t.Fatalf("the owner's description under the published card: %s", c)
	}

	startConnect(t, m, id, "--token", agentToken, "--exec", "cat")
	testwait.For(t, "a connector that does not forward to forget the card", func() bool {
		return !strings.Contains(card("/.well-known/agent-card.json"), `"Upstream 1.0"`)
	})
	if show := cli(t, m, "agent", "show", "laptop"); strings.Contains(show, "published card") {
		t.Errorf("agent show names a forgotten card:\n%s", show)
	}
}
