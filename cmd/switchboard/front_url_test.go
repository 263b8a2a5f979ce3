package main

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/server"
)

// lockedBuffer is a log the server's goroutines write to at once.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer // guarded by mu
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// runLoggedFrontMain runs a server on dir whose fronts trust up's
// certificate and may reach loopback, logging everything to logs.
func runLoggedFrontMain(t *testing.T, dir string, up *upstreamAgent, logs *lockedBuffer) *server.Server {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(up.srv.Certificate())
	cfg := server.Config{Addr: "127.0.0.1:0", DataDir: dir, RatePerMinute: 600,
		OutboundAllow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, FrontRootCAs: pool}
	m := server.New(cfg, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err := m.Run(context.Background()); err != nil {
		_ = m.Close()
		t.Fatal(err)
	}
	return m
}

// TestFrontUpstreamURLKey: an upstream URL with a key in its query works,
// is shown in full to its owner only, never in a log line (the key's
// value redacted, in the forwarder's lines, a failure's and the status'
// detail), is kept sealed (an export does not hold it), and still works
// after a restart.
func TestFrontUpstreamURLKey(t *testing.T) {
	const key = "query-secret-0123456789"
	up := newUpstreamAgent(t, "1.0", false, upstreamOptions{tls: true})
	upstream := up.srv.URL + "/invoke?api_key=" + key
	// An upstream that does not answer: its failures name its URL.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "https://" + l.Addr().String() + "/a2a?api_key=" + key
	l.Close()

	dir := t.TempDir()
	logs := &lockedBuffer{}
	m := runLoggedFrontMain(t, dir, up, logs)
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = m.Close()
		}
	})
	peerToken := createFront(t, m, "fronted", upstream)
	deadToken := createFront(t, m, "dead", deadURL)
	if task := peerSend(t, m, "fronted", peerToken, "m1", "hello", "", true); task.answer() != "upstream: hello" {
		t.Fatalf("through an upstream URL with a key: %s (%s)", task.Status.State, task.reason())
	}
	task := peerSend(t, m, "dead", deadToken, "m1", "hello", "", false)
	waitTask(t, m, "dead", deadToken, task.ID, func(p *peerTask) bool { return p.Status.State == "TASK_STATE_FAILED" })

	var st struct {
		Upstream    string `json:"upstream"`
		LastFailure *struct {
			Reason string `json:"reason"`
			Detail string `json:"detail"`
		} `json:"last_failure"`
	}
	if err := json.Unmarshal([]byte(cli(t, m, "--json", "front", "status", "dead")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Upstream != deadURL {
		t.Errorf("the owner's status shows the upstream as %q, want it in full", st.Upstream)
	}
	if st.LastFailure == nil || st.LastFailure.Reason != "network" || strings.Contains(st.LastFailure.Detail, key) {
		t.Errorf("the last failure: %+v; want a network failure without the key", st.LastFailure)
	}
	verify, _ := cliErr(m, "--json", "front", "verify", "dead")
	if strings.Contains(verify, key) {
		t.Errorf("front verify shows the key: %s", verify)
	}
	card := getPage(t, m, "fronted", "/.well-known/agent-card.json", "")
	if strings.Contains(card, key) || strings.Contains(card, "api_key") {
		t.Errorf("the public card shows the upstream's query: %s", card)
	}
	var export bytes.Buffer
	if _, err := m.DB.Export(context.Background(), &export); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(export.String(), key) {
		t.Error("the store keeps the upstream's key as it is")
	}

	// A restart reads the sealed URL back.
	closed = true
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = runLoggedFrontMain(t, dir, up, logs)
	t.Cleanup(func() { _ = m.Close() })
	if task := peerSend(t, m, "fronted", peerToken, "m2", "again", "", true); task.answer() != "upstream: again" {
		t.Fatalf("after a restart: %s (%s)", task.Status.State, task.reason())
	}
	if !strings.Contains(logs.String(), "upstream_error") {
		t.Fatalf("the failure was not logged:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), key) {
		t.Fatalf("a log line shows the upstream's key:\n%s", logs.String())
	}
}
