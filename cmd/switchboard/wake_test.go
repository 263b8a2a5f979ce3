package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/server"
)

// TestWakeCLI wires a wake with the CLI, the key from the environment,
// and checks that a peer's message to an inbox agent wakes it through
// the server's background sender.
func TestWakeCLI(t *testing.T) {
	var mu sync.Mutex
	var got []*http.Request
	var bodies [][]byte
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got, bodies = append(got, r), append(bodies, b)
		mu.Unlock()
		_, _ = io.WriteString(w, "ok")
	}))
	defer recv.Close()
	m := MustRunMain(t, t.TempDir(), "", func(c *server.Config) {
		c.OutboundAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
		c.Metrics = true
	})
	cli(t, m, "agent", "create", "sleeper", "--mode", "inbox")
	const key = "wake-key-from-the-environment-0123"
	t.Setenv("SWITCHBOARD_WAKE_KEY", key)
	out := cli(t, m, "wake", "set", "--agent", "sleeper", "--url", recv.URL+"/hook", "--debounce", "0s", "--max-per-hour", "5")
	if strings.Contains(out, key) || !strings.Contains(out, "(set, sha256:") || !strings.Contains(out, "max per hour  5") {
		t.Fatalf("wake set printed:\n%s", out)
	}
	t.Setenv("SWITCHBOARD_WAKE_KEY", "")
	if out := cli(t, m, "wake", "show", "--agent", "sleeper"); strings.Contains(out, key) || !strings.Contains(out, "preset") {
		t.Fatalf("wake show printed:\n%s", out)
	}

	ctx := context.Background()
	g, err := m.DB.FindAgentByHandle(ctx, "sleeper")
	if err != nil {
		t.Fatal(err)
	}
	task, _, err := m.Tasks.SendMessage(ctx, g, switchboard.Peer{AgentID: g.ID, ID: "p1", Label: "bob"}, &a2a.SendMessageRequest{
		Message: &a2a.Message{ID: "m1", Role: a2a.MessageRoleUser, ContextID: "c1", Parts: a2a.ContentParts{a2a.NewTextPart("wake up")}},
	}, switchboard.ProtocolV1)
	if err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the wake", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) > 0
	})
	mu.Lock()
	if len(got) != 1 || got[0].Header.Get("Authorization") != "Bearer "+key {
		t.Fatalf("wakes received: %d", len(got))
	}
	var p struct {
		TaskIDs   []string `json:"taskIds"`
		AgentCard string   `json:"agentCard"`
	}
	_ = json.Unmarshal(bodies[0], &p)
	mu.Unlock()
	if len(p.TaskIDs) != 1 || p.TaskIDs[0] != string(task.ID()) || p.AgentCard != m.URL()+"/a/sleeper/.well-known/agent-card.json" {
		t.Fatalf("wake payload %s", bodies[0])
	}

	// The outcome is recorded once the receiver has answered.
	testwait.For(t, "the wake's outcome", func() bool {
		return scrape(t, m.URL())[`switchboard_wakes_total{outcome="sent"}`] == 1
	})
	wantSamples(t, scrape(t, m.URL()), map[string]float64{
		`switchboard_wakes_total{outcome="sent"}`:    1,
		`switchboard_wakes_total{outcome="retried"}`: 0,
		`switchboard_wakes_total{outcome="dropped"}`: 0,
	})
	if out := cli(t, m, "wake", "test", "--agent", "sleeper"); !strings.Contains(out, "HTTP 200") || !strings.Contains(out, "body: ok") {
		t.Fatalf("wake test printed:\n%s", out)
	}
	if out := cli(t, m, "wake", "show", "--agent", "sleeper"); !strings.Contains(out, "latest wakes") || !strings.Contains(out, "sent") {
		t.Fatalf("wake show after a wake:\n%s", out)
	}
	if out := cli(t, m, "wake", "set", "--agent", "sleeper", "--key-header", "X-Api-Key", "--key-prefix", ""); !strings.Contains(out, `X-Api-Key: "" + key`) {
		t.Fatalf("an empty key prefix:\n%s", out)
	}
	cli(t, m, "wake", "unset", "--agent", "sleeper")
	if _, err := cliErr(m, "wake", "show", "--agent", "sleeper"); err == nil || !strings.Contains(err.Error(), "no wake configuration") {
		t.Fatalf("show after unset: %v", err)
	}
	if _, err := cliErr(m, "wake", "set", "--agent", "sleeper", "--url", "https://x.example/", "--preset", "hermes"); err == nil ||
		!strings.Contains(err.Error(), "hmac secret") {
		t.Fatalf("hermes without a secret: %v", err)
	}
}

// TestWakeCLIRequiresHTTPS: a server with the network guard closed (the
// default) refuses a plain http wake url when it is set, and says why.
func TestWakeCLIRequiresHTTPS(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	cli(t, m, "agent", "create", "sleeper", "--mode", "inbox")
	if _, err := cliErr(m, "wake", "set", "--agent", "sleeper", "--url", "http://wake.example/hook"); err == nil ||
		!strings.Contains(err.Error(), "must be https") || !strings.Contains(err.Error(), "--allow-private-networks") {
		t.Fatalf("wake set over plain http: %v", err)
	}
	cli(t, m, "wake", "set", "--agent", "sleeper", "--url", "https://wake.example/hook")
}

// TestClusterWakeOnce: three instances on one PostgreSQL database all run
// a wake sender; every message wakes the agent exactly once.
func TestClusterWakeOnce(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	requests := 0
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p struct {
			TaskIDs []string `json:"taskIds"`
		}
		_ = json.NewDecoder(r.Body).Decode(&p)
		mu.Lock()
		requests++
		for _, id := range p.TaskIDs {
			seen[id]++
		}
		mu.Unlock()
	}))
	defer recv.Close()
	c := newCluster(t, 3, nil)
	_, _, bob := c.agent("sleepy", map[string]any{"mode": "inbox"})
	if st := c.owner(1, "PUT", "/agents/sleepy/wake", map[string]any{"url": recv.URL, "debounce_seconds": 0}, nil); st != http.StatusOK {
		t.Fatalf("set wake: %d", st)
	}
	const n = 30
	ids := make([]string, n)
	for i := range n {
		ids[i] = peerSend(t, c.inst[i%3], "sleepy", bob, fmt.Sprint("w-", i), "wake me", "", false).ID
	}
	testwait.For(t, "every task to wake the agent", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == n
	})
	// The shared store records the wakes and every claim of one: wait until
	// each is sent (a duplicate still queued or being sent would be seen
	// here), then check that none was claimed twice and that the receiver
	// heard each wake once.
	agent, err := c.inst[0].DB.FindAgentByHandle(context.Background(), "sleepy")
	if err != nil {
		t.Fatal(err)
	}
	var wakes []*switchboard.Wake
	testwait.ForErr(t, "every wake to be sent", func() error {
		wakes, err = c.inst[0].Wakes.Recent(context.Background(), agent, 2*n)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range wakes {
			if w.State != switchboard.WakeSent {
				return fmt.Errorf("wake %s is %s", w.ID, w.State)
			}
		}
		return nil
	})
	for _, w := range wakes {
		if w.Retries != 0 {
			t.Fatalf("wake %s was claimed again (%d retries)", w.ID, w.Retries)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if requests != len(wakes) {
		t.Fatalf("the receiver got %d wakes for %d sent", requests, len(wakes))
	}
	for _, id := range ids {
		if seen[id] != 1 {
			t.Fatalf("task %s was in %d wakes", id, seen[id])
		}
	}
}
