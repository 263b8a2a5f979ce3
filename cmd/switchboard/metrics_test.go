package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/promtest"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/server"
)

// scrape reads base/metrics and parses it strictly.
func scrape(t *testing.T, base string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/metrics: %d", base, resp.StatusCode)
	}
	s, err := promtest.Parse(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// getStatus returns the status code of GET url and its JSON "status".
func getStatus(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body.Status
}

// wantSamples checks samples against want: exact values, or with a
// negative want, at least -want.
func wantSamples(t *testing.T, s map[string]float64, want map[string]float64) {
	t.Helper()
	for key, w := range want {
		got, ok := s[key]
		switch {
		case !ok:
			t.Errorf("%s: missing", key)
		case w >= 0 && got != w:
			t.Errorf("%s: got %v, want %v", key, got, w)
		case w < 0 && got < -w:
			t.Errorf("%s: got %v, want at least %v", key, got, -w)
		}
	}
}

// TestMetricsListener runs a connector agent's task through a server with
// a metrics listener of its own and reads every family the task moved.
func TestMetricsListener(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "", func(c *server.Config) { c.MetricsAddr = "127.0.0.1:0" })
	if code, _ := getStatus(t, m.URL()+"/metrics"); code != http.StatusNotFound {
		t.Fatalf("main listener /metrics without --metrics: %d", code)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, status := getStatus(t, m.MetricsURL()+path); code != http.StatusOK || status != "ready" {
			t.Fatalf("metrics listener %s: %d %q", path, code, status)
		}
	}
	if code, _ := getStatus(t, m.MetricsURL()+"/account"); code != http.StatusNotFound {
		t.Fatalf("the metrics listener serves the API: %d", code)
	}

	id, agentToken, peerToken := connectAgent(t, m, "echo")
	startConnect(t, m, id, "--token", agentToken, "--exec", "cat")
	task := peerSend(t, m, "echo", peerToken, "m1", "hi", "", true)
	if task.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("task %s", task.Status.State)
	}
	s := scrape(t, m.MetricsURL())
	wantSamples(t, s, map[string]float64{
		"switchboard_agents_connected":                              1,
		"switchboard_hub_connections_total":                         1,
		"switchboard_hub_offers_total":                              1,
		`switchboard_delivery_seconds_count{mode="connector"}`:      1,
		`switchboard_delivery_ack_seconds_count{mode="connector"}`:  1,
		`switchboard_delivery_seconds_count{mode="webhook"}`:        0,
		"switchboard_tasks_created_total":                           1,
		`switchboard_tasks_finished_total{state="completed"}`:       1,
		`switchboard_tasks_finished_total{state="failed"}`:          0,
		`switchboard_tasks{state="submitted"}`:                      0,
		`switchboard_tasks{state="working"}`:                        0,
		`switchboard_deliveries{state="queued"}`:                    0,
		`switchboard_jsonrpc_requests_total{method="SendMessage"}`:  1,
		`switchboard_http_requests_total{method="POST",code="2xx"}`: -1,
		`switchboard_http_requests_total{method="GET",code="1xx"}`:  1, // the connector's WebSocket, counted once upgraded
		"switchboard_bus_published_total":                           -1,
		"switchboard_bus_publish_errors_total":                      0,
		"switchboard_bus_publish_seconds_count":                     -1,
		"switchboard_store_write_seconds_count":                     -2, // the task's creation and its answer, at least
		"switchboard_bus_received_total":                            0,
		"switchboard_bus_connected":                                 1,
		"switchboard_sse_streams":                                   0,
		`switchboard_build_info{version="dev"}`:                     1,
		"go_goroutines":                                             -1,
	})
	// The queues move on their own (an answer to the agent may still wait
	// for its writer): they must be there.
	for _, key := range []string{"switchboard_hub_pending_offers", "switchboard_hub_outbound_frames"} {
		if _, ok := s[key]; !ok {
			t.Errorf("%s: missing", key)
		}
	}
	if got := s[`switchboard_delivery_seconds_sum{mode="connector"}`]; got <= 0 || got > 10 {
		t.Errorf("delivery latency sum %v s: want the time the task took to reach the agent", got)
	}
}

// TestMetricsOnMainListener: --metrics serves /metrics on the main
// listener; the store gauges count an inbox agent's waiting task.
func TestMetricsOnMainListener(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "", func(c *server.Config) { c.Metrics = true })
	if m.MetricsURL() != "" {
		t.Fatal("a metrics listener without --metrics-addr")
	}
	cli(t, m, "agent", "create", "helper", "--mode", "inbox")
	var tok struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(cli(t, m, "--json", "token", "issue", "--agent", "helper", "bob")), &tok); err != nil {
		t.Fatal(err)
	}
	peerSend(t, m, "helper", tok.Token, "m1", "hello", "", false)
	wantSamples(t, scrape(t, m.URL()), map[string]float64{
		`switchboard_tasks{state="submitted"}`:   1,
		`switchboard_deliveries{state="queued"}`: 0, // inbox agents get no deliveries
		"switchboard_tasks_created_total":        1,
	})
}

// TestReadyzWhileDraining: from the moment shutdown begins, /readyz says
// so, while agents' connections are still being closed and the listener
// still answers; /healthz stays 200.
func TestReadyzWhileDraining(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "", func(c *server.Config) { c.MetricsAddr = "127.0.0.1:0"; c.ShutdownTimeout = time.Second })
	id, agentToken, _ := connectAgent(t, m, "slow")
	dialAgent(t, m.URL(), agentToken) // never reads: its close handshake holds the hub's shutdown
	// The connection is served on goroutines of its own once upgraded: wait
	// until the hub holds it, or a shutdown begun earlier refuses it at once.
	testwait.For(t, "the hub to register the connection", func() bool { return m.Hub.Connected(id) })
	closed := make(chan error, 1)
	go func() { closed <- m.Close() }()
	testwait.ForErr(t, "/readyz to say draining", func() error {
		if code, status := getStatus(t, m.URL()+"/readyz"); code != http.StatusServiceUnavailable || status != "draining" {
			return fmt.Errorf("/readyz during shutdown: %d %q", code, status)
		}
		return nil
	})
	if code, status := getStatus(t, m.MetricsURL()+"/healthz"); code != http.StatusOK || status != "draining" {
		t.Fatalf("/healthz during shutdown: %d %q", code, status)
	}
	<-closed
}

// TestReadyzStoreUnreachable: a store that stops answering makes /readyz
// answer 503 within the check interval (1 s).
func TestReadyzStoreUnreachable(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	if code, _ := getStatus(t, m.URL()+"/readyz"); code != http.StatusOK {
		t.Fatalf("readyz: %d", code)
	}
	_ = m.DB.Close()
	start := time.Now()
	testwait.ForErr(t, "/readyz to say the store is unreachable", func() error {
		if code, status := getStatus(t, m.URL()+"/readyz"); code != http.StatusServiceUnavailable || status != "store unreachable" {
			return fmt.Errorf("readyz with the store closed: %d %q", code, status)
		}
		return nil
	})
	// Within the check interval (1 s), and some slack for a loaded machine.
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("readyz said the store is unreachable %v after it closed, want within the check interval (1 s)", took)
	}
	if code, _ := getStatus(t, m.URL()+"/healthz"); code != http.StatusOK {
		t.Fatalf("healthz with the store closed: %d", code)
	}
}
