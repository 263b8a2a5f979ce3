package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/internal/pgtest"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/natsbus"
)

// TestClusterDiscoveryLiveness: three instances; an agent connected to one
// is chosen by discovery on another. The instance that holds it is killed
// (SIGKILL: its sessions are not closed, they stop being renewed). The
// agent stays a candidate for the rest of its live window and its grace
// (a task sent then waits for it), and leaves the candidates within one
// heartbeat interval (plus a quarter of one) plus the grace: then
// no_agent_found, at once. The directory shows it live until its window
// ends, then not.
func TestClusterDiscoveryLiveness(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs three server processes")
	}
	const heartbeat, grace = time.Second, 2 * time.Second
	dsn := pgtest.DSN(t)
	bin := buildSwitchboard(t)
	var natsURLs []string
	var seedRoute string
	for i := range 3 {
		o := natsbus.ServerOptions{Name: fmt.Sprint("d", i), Listen: "127.0.0.1:0", ClusterListen: "127.0.0.1:0"}
		if i > 0 {
			o.Routes = []string{seedRoute}
		}
		s, err := natsbus.StartServer(o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
		if i == 0 {
			seedRoute = "nats-route://" + s.ClusterAddr().String()
		}
		natsURLs = append(natsURLs, s.ClientURL())
	}
	var procs []*instanceProcess
	for i := range 3 {
		procs = append(procs, startInstanceProcess(t, bin, "--data", t.TempDir(), "--database", dsn, "--secret-key", clusterSecretKey,
			"--bus", natsURLs[i], "--owner-token", clusterOwnerToken, "--heartbeat", heartbeat.String(),
			"--reconnect-grace", grace.String(), "--rate-per-minute", "0"))
	}
	c := &testCluster{t: t, dsn: dsn}
	for _, p := range procs {
		c.bases = append(c.bases, p.url)
	}
	_, workerToken, _ := c.agent("worker", map[string]any{"skills": []map[string]any{{"id": "code", "name": "code"}}})
	_, senderToken, _ := c.agent("sender", nil)
	for _, h := range []string{"worker", "sender"} {
		if st := c.owner(1, "PUT", "/agents/"+h+"/communities/lab", nil, nil); st != http.StatusCreated {
			t.Fatalf("join %s: %d", h, st)
		}
	}
	// The worker holds instance 0 only: when it dies, it does not come back.
	c.runAgent("worker", workerToken, []string{procs[0].url}, func(_ context.Context, w *connector.Work) { _ = w.Reply("ok") })

	send := func() (int, map[string]any, time.Duration) {
		return postTaskURL(t, procs[1].url, senderToken, map[string]any{"community": "lab", "skill": "code",
			"payload": map[string]any{"message": "x"}})
	}
	if st, res, _ := send(); st != http.StatusAccepted || res["agent"] != "worker" {
		t.Fatalf("before the kill: %d %v", st, res)
	}
	if !directoryLive(t, procs[2].url, senderToken, "worker") {
		t.Fatal("the directory on instance 2 does not show the worker live")
	}

	_ = procs[0].cmd.Process.Signal(syscall.SIGKILL)
	killed := time.Now()
	// Still a candidate right after the kill: the task waits for it.
	if st, res, _ := send(); st != http.StatusAccepted || res["agent"] != "worker" {
		t.Fatalf("right after the kill: %d %v", st, res)
	}
	var notLive time.Duration
	var gone time.Duration
	testwait.Within(t, 30*time.Second, "the killed instance's agent to leave the candidates", func() error {
		if notLive == 0 && !directoryLive(t, procs[2].url, senderToken, "worker") {
			notLive = time.Since(killed)
		}
		st, res, elapsed := send()
		switch st {
		case http.StatusAccepted:
			return fmt.Errorf("still chosen %s after the kill", time.Since(killed).Round(time.Millisecond))
		case http.StatusNotFound:
			if res["error"] != "no_agent_found" || !strings.Contains(res["reason"].(string), "none live") {
				t.Fatalf("after the kill: %v", res)
			}
			if elapsed > atOnce {
				t.Errorf("no_agent_found took %s", elapsed)
			}
			gone = time.Since(killed)
			return nil
		}
		t.Fatalf("after the kill: %d %v", st, res)
		return nil
	})
	// Renewed at most one heartbeat before the kill: live for 1.25
	// intervals after that renewal, then in its grace.
	bound := heartbeat + heartbeat/4 + grace + 500*time.Millisecond // the polls' own delay
	t.Logf("killed: not live in the directory after %s, out of the candidates after %s (bound %s)",
		notLive.Round(time.Millisecond), gone.Round(time.Millisecond), bound)
	if gone > bound {
		t.Errorf("the agent left the candidates %s after the kill, more than one heartbeat interval plus the grace (%s)", gone, bound)
	}
	if notLive == 0 || notLive > heartbeat+heartbeat/4+500*time.Millisecond {
		t.Errorf("the directory showed the agent live %s after the kill", notLive)
	}
}

// postTaskURL sends POST /tasks to base with an agent token.
func postTaskURL(t *testing.T, base, token string, body map[string]any) (int, map[string]any, time.Duration) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", base+"/tasks", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	return resp.StatusCode, out, elapsed
}

// directoryLive reports whether the directory of base shows the agent live.
func directoryLive(t *testing.T, base, token, handle string) bool {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/directory?live=true", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return strings.Contains(string(data), `"handle":"`+handle+`"`)
}
