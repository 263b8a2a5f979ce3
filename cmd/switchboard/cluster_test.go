package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/coder/websocket"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/internal/pgtest"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/natsbus"
	"github.com/switchboard-dev/switchboard/push"
	"github.com/switchboard-dev/switchboard/seal"
	"github.com/switchboard-dev/switchboard/server"
)

// clusterOwnerToken is the owner token every instance of a test cluster is
// started with.
const clusterOwnerToken = "sbo_cluster-test-owner-token-0123456789"

// testCluster is one deployment of several instances: one PostgreSQL schema,
// and NATS servers joined by routes, one per instance.
type testCluster struct {
	t     *testing.T
	dsn   string
	nats  []*natsserver.Server
	inst  []*server.Server // in-process instances (not with processes)
	bases []string         // every instance's base URL
}

// newCluster starts n instances; tweak adjusts each instance's settings.
func newCluster(t *testing.T, n int, tweak func(*server.Config)) *testCluster {
	t.Helper()
	c := &testCluster{t: t, dsn: pgtest.DSN(t)}
	for i := range n {
		o := natsbus.ServerOptions{Name: fmt.Sprint("nats-", i), Listen: "127.0.0.1:0", ClusterListen: "127.0.0.1:0"}
		if i > 0 {
			o.Routes = []string{"nats-route://" + c.nats[0].ClusterAddr().String()}
		}
		s, err := natsbus.StartServer(o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
		c.nats = append(c.nats, s)
	}
	for i := range n {
		m := c.start(i, tweak)
		c.inst = append(c.inst, m)
		c.bases = append(c.bases, m.URL())
	}
	c.waitLinked()
	return c
}

// clusterSecretKey seals the secrets of every instance of a test cluster:
// instances of one deployment share their keys.
var clusterSecretKey = base64.StdEncoding.EncodeToString(seal.NewKey())

// start starts instance i on NATS server i (tweak may choose another bus).
func (c *testCluster) start(i int, tweak func(*server.Config)) *server.Server {
	c.t.Helper()
	bus := ""
	if i < len(c.nats) {
		bus = c.nats[i].ClientURL()
	}
	cfg := server.Config{
		Addr: "127.0.0.1:0", DataDir: c.t.TempDir(), OwnerToken: clusterOwnerToken, Database: c.dsn, SecretKey: clusterSecretKey,
		DatabaseMaxConns: 8, Bus: bus, Heartbeat: time.Second,
		OutboundAllow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	}
	if tweak != nil {
		tweak(&cfg)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(testWriter{c.t}, &slog.HandlerOptions{Level: slog.LevelDebug})).With("instance", i)
	}
	m := server.New(cfg, log)
	if err := m.Run(context.Background()); err != nil {
		_ = m.Close()
		c.t.Fatalf("instance %d: %v", i, err)
	}
	c.t.Cleanup(func() { _ = m.Close() })
	return m
}

// waitLinked waits until a hint on each instance reaches every other: the
// NATS routes are up.
func (c *testCluster) waitLinked() {
	c.t.Helper()
	ctx := context.Background()
	for _, to := range c.inst {
		w, err := to.Bus.Watch(ctx, "probe")
		if err != nil {
			c.t.Fatal(err)
		}
		for _, from := range c.inst {
			testwait.For(c.t, "the NATS routes to come up", func() bool {
				_ = from.Bus.Notify(ctx, "probe")
				select {
				case <-w.C():
					return true
				case <-time.After(20 * time.Millisecond):
					return false
				}
			})
		}
		w.Close()
	}
}

// owner calls the owner API of instance i; it returns the status.
func (c *testCluster) owner(i int, method, path string, body, out any) int {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, c.bases[i]+path, rd)
	req.Header.Set("Authorization", "Bearer "+clusterOwnerToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil && resp.StatusCode < 300 {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			c.t.Fatalf("%s %s: %v", method, path, err)
		}
	}
	return resp.StatusCode
}

// agent creates an agent (on instance 0) with the given fields and a peer
// token for bob; it returns the agent's id, its agent token and bob's token.
func (c *testCluster) agent(handle string, fields map[string]any) (id, agentToken, peerToken string) {
	c.t.Helper()
	body := map[string]any{"handle": handle}
	for k, v := range fields {
		body[k] = v
	}
	var g struct {
		ID         string `json:"id"`
		AgentToken string `json:"agent_token"`
	}
	if st := c.owner(0, "POST", "/agents", body, &g); st != http.StatusCreated {
		c.t.Fatalf("create agent %s: status %d", handle, st)
	}
	var tok struct {
		Token string `json:"token"`
	}
	if st := c.owner(0, "POST", "/agents/"+handle+"/tokens", map[string]any{"label": "bob"}, &tok); st != http.StatusCreated {
		c.t.Fatalf("issue token: status %d", st)
	}
	return g.ID, g.AgentToken, tok.Token
}

// connected reports what instance i says of the agent's connection.
func (c *testCluster) connected(i int, handle string) bool {
	var v struct {
		Connected *bool `json:"connected"`
	}
	c.owner(i, "GET", "/agents/"+handle, nil, &v)
	return v.Connected != nil && *v.Connected
}

// runAgent runs a connector client of the agent against the given URLs
// until the test ends or stop is called, and waits until every instance
// sees it connected.
func (c *testCluster) runAgent(handle, agentToken string, urls []string, h connector.HandlerFunc) (stop func()) {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cl := &connector.Client{URLs: urls, Token: agentToken, Handler: h, Logger: slog.New(slog.DiscardHandler)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cl.Run(ctx)
	}()
	stop = func() {
		cancel()
		<-done
	}
	c.t.Cleanup(stop)
	testwait.For(c.t, "the agent to be connected, as every instance sees it", func() bool {
		for i := range c.bases {
			if !c.connected(i, handle) {
				return false
			}
		}
		return true
	})
	return stop
}

// echo answers each message with "echo: TEXT".
func echo(_ context.Context, w *connector.Work) { _ = w.Reply("echo: " + w.Text()) }

// testWriter sends log lines to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestClusterSendAcrossInstances: the agent is connected to instance 1; a
// peer's blocking send on instance 0 returns its answer, a stream opened on
// instance 2 sees the events produced on instance 1, and every instance
// reads the task.
func TestClusterSendAcrossInstances(t *testing.T) {
	c := newCluster(t, 3, nil)
	_, agentToken, bob := c.agent("echo", nil)
	c.runAgent("echo", agentToken, []string{c.inst[1].URL()}, echo)

	task := peerSend(t, c.inst[0], "echo", bob, "m-1", "across", "", true)
	if task.Status.State != "TASK_STATE_COMPLETED" || task.answer() != "echo: across" {
		t.Fatalf("blocking send on instance 0: %s %q", task.Status.State, task.answer())
	}
	for i := range c.inst {
		got := peerCall(t, c.inst[i], "echo", bob, "GetTask", map[string]any{"id": task.ID})
		if got.Status.State != "TASK_STATE_COMPLETED" || got.answer() != "echo: across" {
			t.Fatalf("instance %d reads %s %q", i, got.Status.State, got.answer())
		}
	}

	events := streamSend(t, c.inst[2], "echo", bob, "streamed")
	var states []string
	answer := ""
	for _, ev := range events {
		if s := path(ev, "statusUpdate", "status", "state"); s != nil {
			states = append(states, s.(string))
		}
		if s := path(ev, "task", "status", "state"); s != nil {
			states = append(states, s.(string))
		}
		if a := path(ev, "artifactUpdate", "artifact"); a != nil {
			b, _ := json.Marshal(a)
			answer = string(b)
		}
	}
	if len(states) == 0 || states[0] != "TASK_STATE_SUBMITTED" || states[len(states)-1] != "TASK_STATE_COMPLETED" ||
		!strings.Contains(answer, "echo: streamed") {
		t.Fatalf("stream on instance 2: states %v, artifact %s", states, answer)
	}
}

// streamSend sends a streaming message as bob and returns the results of
// its events, until the stream ends.
func streamSend(t *testing.T, m *server.Server, handle, peerToken, text string) []map[string]any {
	t.Helper()
	resp := openStream(t, m, handle, peerToken, text)
	defer resp.Body.Close()
	var out []map[string]any
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Result map[string]any `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("event %s: %v", line, err)
		}
		out = append(out, ev.Result)
	}
	return out
}

// openStream starts SendStreamingMessage as bob.
func openStream(t *testing.T, m *server.Server, handle, peerToken, text string) *http.Response {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": map[string]any{
		"message": map[string]any{"messageId": fmt.Sprint("s-", time.Now().UnixNano()), "role": "ROLE_USER",
			"parts": []any{map[string]any{"text": text}}}}})
	req, _ := http.NewRequest("POST", m.URL()+"/a/"+handle, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+peerToken)
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream: status %d", resp.StatusCode)
	}
	return resp
}

// path walks nested JSON objects.
func path(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// TestClusterControlTakesEffectEverywhere: a cancel on one instance reaches
// the agent on another; an owner's inbox reply on one instance reaches a
// stream on another; accepts_tasks set on one instance holds work
// back from the agent's connection on another, and releases it.
func TestClusterControlTakesEffectEverywhere(t *testing.T) {
	c := newCluster(t, 3, nil)

	t.Run("cancel", func(t *testing.T) {
		_, agentToken, bob := c.agent("slow", nil)
		canceled := make(chan error, 1)
		c.runAgent("slow", agentToken, []string{c.inst[1].URL()}, func(ctx context.Context, w *connector.Work) {
			_ = w.Working("on it")
			<-ctx.Done()
			canceled <- context.Cause(ctx)
		})
		task := peerSend(t, c.inst[0], "slow", bob, "c-1", "wait", "", false)
		waitTask(t, c.inst[0], "slow", bob, task.ID, func(p *peerTask) bool { return p.Status.State == "TASK_STATE_WORKING" })
		start := time.Now()
		got := peerCall(t, c.inst[2], "slow", bob, "CancelTask", map[string]any{"id": task.ID})
		if got.Status.State != "TASK_STATE_CANCELED" {
			t.Fatalf("cancel on instance 2: %s", got.Status.State)
		}
		select {
		case err := <-canceled:
			if !errors.Is(err, connector.ErrTaskCanceled) {
				t.Fatalf("the work ended with %v", err)
			}
			t.Logf("the cancel reached the agent on another instance in %s", time.Since(start).Round(time.Millisecond))
		case <-time.After(5 * time.Second):
			t.Fatal("the cancel did not reach the agent")
		}
	})

	t.Run("inbox reply", func(t *testing.T) {
		_, _, bob := c.agent("desk", map[string]any{"mode": "inbox"})
		resp := openStream(t, c.inst[0], "desk", bob, "please answer")
		defer resp.Body.Close()
		events := make(chan map[string]any, 16)
		go func() {
			defer close(events)
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
					var ev struct {
						Result map[string]any `json:"result"`
					}
					_ = json.Unmarshal([]byte(line), &ev)
					events <- ev.Result
				}
			}
		}()
		first := <-events
		id, _ := path(first, "task", "id").(string)
		if id == "" {
			t.Fatalf("first event: %v", first)
		}
		start := time.Now()
		if st := c.owner(1, "POST", "/tasks/"+id+"/reply", map[string]any{"text": "answered on 1"}, nil); st != http.StatusOK {
			t.Fatalf("reply: status %d", st)
		}
		deadline := time.After(2 * time.Second)
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					t.Fatal("the stream on instance 0 ended without the completed status")
				}
				if path(ev, "statusUpdate", "status", "state") == "TASK_STATE_COMPLETED" {
					t.Logf("the stream on instance 0 saw the reply on instance 1 after %s", time.Since(start).Round(time.Millisecond))
					return
				}
			case <-deadline:
				t.Fatal("the stream on instance 0 did not see the reply on instance 1")
			}
		}
	})

	t.Run("accepts_tasks", func(t *testing.T) {
		_, agentToken, bob := c.agent("picky", nil)
		offered := make(chan string, 10)
		c.runAgent("picky", agentToken, []string{c.inst[1].URL()}, func(ctx context.Context, w *connector.Work) {
			offered <- w.Text()
			_ = w.Reply("ok")
		})
		if st := c.owner(2, "PATCH", "/agents/picky", map[string]any{"accepts_tasks": false}, nil); st != http.StatusOK {
			t.Fatalf("patch: %d", st)
		}
		peerSend(t, c.inst[0], "picky", bob, "p-1", "held back", "", false)
		select {
		case text := <-offered:
			t.Fatalf("offered %q while not accepting tasks", text)
		case <-time.After(500 * time.Millisecond):
		}
		start := time.Now()
		c.owner(0, "PATCH", "/agents/picky", map[string]any{"accepts_tasks": true}, nil)
		select {
		case <-offered:
			t.Logf("released work reached the agent on another instance in %s", time.Since(start).Round(time.Millisecond))
		case <-time.After(2 * time.Second):
			t.Fatal("the held task was not offered after accepts_tasks went back to true")
		}
	})
}

// TestClusterRevocationWithinASecond: revoking a peer token on one instance
// ends that token's stream on another within a second, and rotating the
// agent token on one instance closes the agent's connection on another
// within a second. Keep-alives are left at their default (15 s), so only
// the bus can do it that fast.
func TestClusterRevocationWithinASecond(t *testing.T) {
	c := newCluster(t, 3, nil)
	_, agentToken, bob := c.agent("guarded", nil)
	ended := make(chan error, 1)
	c.runAgent("guarded", agentToken, []string{c.inst[1].URL()}, func(ctx context.Context, w *connector.Work) {
		_ = w.Working("thinking")
		<-ctx.Done()
	})

	resp := openStream(t, c.inst[2], "guarded", bob, "long")
	defer resp.Body.Close()
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		ended <- sc.Err()
	}()
	testwait.For(t, "the stream to carry the working status", func() bool {
		for {
			select {
			case l := <-lines:
				if strings.Contains(l, "TASK_STATE_WORKING") {
					return true
				}
			default:
				return false
			}
		}
	})
	start := time.Now()
	if st := c.owner(0, "DELETE", "/agents/guarded/tokens/bob", nil, nil); st != http.StatusOK {
		t.Fatalf("revoke: %d", st)
	}
	deadline := time.After(time.Second)
	for done := false; !done; {
		select {
		case l, ok := <-lines:
			if !ok {
				done = true
			} else if strings.Contains(l, "revoked") {
				t.Logf("stream on instance 2 told of the revocation on instance 0 after %s", time.Since(start).Round(time.Millisecond))
			}
		case <-deadline:
			t.Fatal("the stream on instance 2 outlived the revocation on instance 0 by a second")
		}
	}

	start = time.Now()
	var rotated struct {
		AgentToken string `json:"agent_token"`
	}
	if st := c.owner(2, "POST", "/agents/guarded/agent-token", nil, &rotated); st != http.StatusOK || rotated.AgentToken == "" {
		t.Fatalf("rotate agent token: %d", st)
	}
	testwait.For(t, "the agent's connection on instance 1 to close", func() bool { return !c.inst[1].Hub.Connected(c.agentID("guarded")) })
	took := time.Since(start)
	if took > time.Second {
		t.Fatalf("the connection on instance 1 closed %s after the rotation on instance 2, want within a second", took.Round(time.Millisecond))
	}
	t.Logf("the connection on instance 1 closed %s after the rotation on instance 2", took.Round(time.Millisecond))
}

// agentID reads an agent's id.
func (c *testCluster) agentID(handle string) string {
	var v struct {
		ID string `json:"id"`
	}
	c.owner(0, "GET", "/agents/"+handle, nil, &v)
	return v.ID
}

// TestClusterReplacementAcrossInstances: a second connection of the agent
// on another instance takes over; the first is closed with 4001 and the
// work goes to the second.
func TestClusterReplacementAcrossInstances(t *testing.T) {
	c := newCluster(t, 2, nil)
	id, agentToken, bob := c.agent("twin", nil)
	firstGot := make(chan string, 10)
	c.runAgent("twin", agentToken, []string{c.inst[0].URL()}, func(ctx context.Context, w *connector.Work) {
		firstGot <- w.Text()
		_ = w.Reply("first")
	})
	// The second connection is a raw WebSocket, so the test sees its frames.
	a := dialAgent(t, c.inst[1].URL(), agentToken)
	a.call(t, "hello", map[string]any{"holding": []string{}})
	testwait.For(t, "the first connection (on instance 0) to be replaced", func() bool { return !c.inst[0].Hub.Connected(id) })
	if !c.inst[1].Hub.Connected(id) {
		t.Fatal("instance 1 lost the new connection")
	}
	task := peerSend(t, c.inst[0], "twin", bob, "r-1", "to whom", "", false)
	f := a.next(t)
	if f.Method != "SendMessage" || !strings.Contains(string(f.Params), task.ID) {
		t.Fatalf("the new connection got %s %s", f.Method, f.Params)
	}
	select {
	case text := <-firstGot:
		t.Fatalf("the replaced connection got %q", text)
	default:
	}
}

// TestClusterRateLimitIsShared: a peer spreading its calls over three
// instances gets its per-minute limit once, not three times.
func TestClusterRateLimitIsShared(t *testing.T) {
	c := newCluster(t, 3, func(cfg *server.Config) { cfg.RatePerMinute = 6 })
	_, _, bob := c.agent("limited", map[string]any{"mode": "inbox"})
	ok, limited := 0, 0
	startMinute := time.Now().Truncate(time.Minute)
	for i := range 18 {
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": map[string]any{"id": "nope"}})
		req, _ := http.NewRequest("POST", c.inst[i%3].URL()+"/a/limited", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+bob)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusTooManyRequests:
			limited++
		default:
			ok++
		}
	}
	// A minute boundary inside the loop opens a second window: the calls
	// made before it (at most 6) and 6 after it pass.
	if crossed := !time.Now().Truncate(time.Minute).Equal(startMinute); ok != 6 && (!crossed || ok < 6 || ok > 12) {
		t.Fatalf("%d of 18 calls over three instances passed, %d were limited; want 6 (a new minute began: %v)", ok, limited, crossed)
	}
}

// TestClusterWebhookOncePerEvent: three instances run webhook dispatchers;
// each message reaches the webhook exactly once.
func TestClusterWebhookOncePerEvent(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]int{}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			TaskID string `json:"task_id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		calls[body.TaskID]++
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "completed", "agent": "hooked", "result": "done"})
	}))
	defer hook.Close()
	c := newCluster(t, 3, nil)
	_, _, bob := c.agent("hooked", map[string]any{"mode": "webhook", "endpoint": hook.URL})
	const n = 30
	ids := make([]string, n)
	for i := range n {
		ids[i] = peerSend(t, c.inst[i%3], "hooked", bob, fmt.Sprint("w-", i), "hook me", "", false).ID
	}
	for _, id := range ids {
		waitTask(t, c.inst[0], "hooked", bob, id, func(p *peerTask) bool { return p.Status.State == "TASK_STATE_COMPLETED" })
	}
	// A second call needs a second claim of the delivery, which the shared
	// store counts in the delivery's attempts before the call is made.
	for _, id := range ids {
		tid := a2a.TaskID(id)
		ds, err := c.inst[0].DB.FindDeliveries(context.Background(), switchboard.DeliveryFilter{TaskID: &tid})
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) != 1 || ds[0].State != switchboard.DeliveryAcked || ds[0].Attempts != 1 {
			for _, d := range ds {
				t.Errorf("task %s: delivery %s, %d attempts", id, d.State, d.Attempts)
			}
			t.Fatalf("task %s has %d deliveries, want one acknowledged after one attempt", id, len(ds))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, id := range ids {
		if calls[id] != 1 {
			t.Fatalf("task %s reached the webhook %d times", id, calls[id])
		}
	}
	if len(calls) != n {
		t.Fatalf("the webhook saw %d tasks, want %d", len(calls), n)
	}
}

// TestClusterBusRestart: the NATS servers go down and come back. While they
// are down, work still flows (instances poll the database, more slowly);
// no task is lost; once they are back, hints carry work at once again.
// The instances poll every second, not every hub.DefaultPoll, for a
// shorter wait during the outage.
func TestClusterBusRestart(t *testing.T) {
	c := newCluster(t, 2, func(cfg *server.Config) { cfg.HubPoll = time.Second })
	_, agentToken, bob := c.agent("steady", nil)
	c.runAgent("steady", agentToken, []string{c.inst[1].URL()}, echo)

	addrs := make([]string, len(c.nats))
	for i, s := range c.nats {
		addrs[i] = s.Addr().String()
		s.Shutdown()
		s.WaitForShutdown()
	}
	start := time.Now()
	task := peerSend(t, c.inst[0], "steady", bob, "b-1", "during the outage", "", false)
	got := waitTask(t, c.inst[0], "steady", bob, task.ID, func(p *peerTask) bool { return p.Status.State == "TASK_STATE_COMPLETED" })
	if got.answer() != "echo: during the outage" {
		t.Fatalf("answer %q", got.answer())
	}
	t.Logf("without the bus, the task was answered in %s (polling)", time.Since(start).Round(time.Millisecond))

	// The same servers again, on the same addresses, joined as before.
	var restarted []*natsserver.Server
	for i, addr := range addrs {
		o := natsbus.ServerOptions{Name: fmt.Sprint("nats-", i), Listen: addr, ClusterListen: "127.0.0.1:0"}
		if i > 0 {
			o.Routes = []string{"nats-route://" + restarted[0].ClusterAddr().String()}
		}
		s, err := natsbus.StartServer(o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
		restarted = append(restarted, s)
	}
	c.waitLinked()
	start = time.Now()
	task = peerSend(t, c.inst[0], "steady", bob, "b-2", "after the outage", "", true)
	if task.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("after the restart: %s", task.Status.State)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("a blocking call took %s after the bus came back: hints are not flowing", took)
	}
}

// rawAgent is a connector connection driven frame by frame.
type rawAgent struct {
	ws *websocket.Conn
	n  int
}

// dialAgent opens a connector WebSocket to the server at base.
func dialAgent(t *testing.T, base, agentToken string) *rawAgent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/connect", &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + agentToken}}, Subprotocols: []string{connproto.Subprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.CloseNow() })
	return &rawAgent{ws: ws}
}

// call sends a request and returns its answer; requests from the server
// read meanwhile are dropped.
func (a *rawAgent) call(t *testing.T, method string, params any) connproto.Frame {
	t.Helper()
	a.n++
	id := fmt.Sprint("c", a.n)
	b, _ := connproto.Encode(connproto.Request{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.ws.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
	for {
		f := a.read(t, ctx)
		if f.IsResponse() && string(f.ID) == `"`+id+`"` {
			return f
		}
	}
}

// next returns the next request from the server.
func (a *rawAgent) next(t *testing.T) connproto.Frame {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		if f := a.read(t, ctx); f.Method != "" {
			return f
		}
	}
}

func (a *rawAgent) read(t *testing.T, ctx context.Context) connproto.Frame {
	t.Helper()
	_, data, err := a.ws.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var f connproto.Frame
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("frame %s: %v", data, err)
	}
	return f
}

// TestClusterEmbeddedBus: two instances, each with --bus embedded, whose
// embedded NATS servers join by routes: no NATS to run besides them.
func TestClusterEmbeddedBus(t *testing.T) {
	c := &testCluster{t: t, dsn: pgtest.DSN(t)}
	var seed string
	for i := range 2 {
		m := c.start(0, func(cfg *server.Config) {
			cfg.Bus = "embedded"
			cfg.NATS = natsbus.ServerOptions{Name: fmt.Sprint("embedded-", i), ClusterListen: "127.0.0.1:0"}
			if seed != "" {
				cfg.NATS.Routes = []string{seed}
			}
		})
		if i == 0 {
			seed = "nats-route://" + m.NATSClusterAddr()
		}
		c.inst = append(c.inst, m)
		c.bases = append(c.bases, m.URL())
	}
	c.waitLinked()
	_, agentToken, bob := c.agent("local", nil)
	c.runAgent("local", agentToken, []string{c.bases[1]}, echo)
	start := time.Now()
	task := peerSend(t, c.inst[0], "local", bob, "e-1", "over embedded routes", "", true)
	if task.Status.State != "TASK_STATE_COMPLETED" || task.answer() != "echo: over embedded routes" {
		t.Fatalf("blocking send across embedded servers: %s %q", task.Status.State, task.answer())
	}
	t.Logf("answered across the embedded servers in %s", time.Since(start).Round(time.Millisecond))
}

// TestClusterPushOncePerChange: three instances share the push queue. The
// owner answers tasks through every instance; each state of each task
// reaches the peer's receiver once, and in order.
func TestClusterPushOncePerChange(t *testing.T) {
	var mu sync.Mutex
	got := map[string][]string{} // task → states pushed, in arrival order
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Task struct {
				ID     string `json:"id"`
				Status struct {
					State string `json:"state"`
				} `json:"status"`
			} `json:"task"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		got[body.Task.ID] = append(got[body.Task.ID], body.Task.Status.State)
		mu.Unlock()
	}))
	defer rc.Close()
	c := newCluster(t, 3, nil)
	_, _, bob := c.agent("pushed", map[string]any{"mode": "inbox"})
	const n = 12
	ids := make([]string, n)
	for i := range n {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"p-%d","role":"ROLE_USER",
			"parts":[{"text":"hi"}]},"configuration":{"taskPushNotificationConfig":{"url":%q}}}}`, i, rc.URL)
		req, _ := http.NewRequest("POST", c.bases[i%3]+"/a/pushed", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+bob)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var sent struct {
			Result struct {
				Task struct {
					ID string `json:"id"`
				} `json:"task"`
			} `json:"result"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&sent)
		resp.Body.Close()
		ids[i] = sent.Result.Task.ID
	}
	for i, id := range ids {
		for j, state := range []string{"working", "completed"} {
			if st := c.owner((i+j)%3, "POST", "/tasks/"+id+"/reply", map[string]any{"text": state, "state": state}, nil); st != http.StatusOK {
				t.Fatalf("reply: %d", st)
			}
		}
	}
	testwait.For(t, "every push", func() bool {
		mu.Lock()
		defer mu.Unlock()
		total := 0
		for _, s := range got {
			total += len(s)
		}
		return total >= 2*n
	})
	// The shared store records every claim of a push and every attempt:
	// wait until each push is recorded as sent (after its receiver
	// answered), then check that none was claimed or tried twice.
	for _, id := range ids {
		var h *push.History
		testwait.ForErr(t, "task "+id+"'s pushes to be recorded as sent", func() error {
			var err error
			if h, err = c.inst[0].Pushes.History(context.Background(), a2a.TaskID(id)); err != nil {
				t.Fatal(err)
			}
			if len(h.Pushes) != 2 {
				return fmt.Errorf("%d pushes, want 2", len(h.Pushes))
			}
			for _, p := range h.Pushes {
				if p.State != switchboard.PushSent {
					return fmt.Errorf("a push is %s", p.State)
				}
			}
			return nil
		})
		for _, p := range h.Pushes {
			if p.Attempts != 1 {
				t.Fatalf("task %s: the %s push was claimed %d times", id, switchboard.ShortState(p.TaskState), p.Attempts)
			}
		}
		if len(h.Attempts) != 2 {
			t.Fatalf("task %s: %d attempts for 2 pushes", id, len(h.Attempts))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, id := range ids {
		if s := strings.Join(got[id], ","); s != "TASK_STATE_WORKING,TASK_STATE_COMPLETED" {
			t.Fatalf("task %s: pushed %s", id, s)
		}
	}
}
