package connector_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/hub"
	"github.com/switchboard-dev/switchboard/internal/pipenet"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/ratelimit"
	"github.com/switchboard-dev/switchboard/relay"
	assembly "github.com/switchboard-dev/switchboard/server"
	"github.com/switchboard-dev/switchboard/session"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// testServer is a real Switchboard server for one test, wired as
// cmd/switchboard wires it: SQLite in a temporary directory, the
// in-process bus, the task service with its sweeper, the hub at /connect
// and the HTTP API, on a loopback listener that restart reopens on the
// same address.
type testServer struct {
	t     testing.TB
	db    *sqlstore.DB
	bus   *membus.Bus
	tasks *relay.Service
	log   *slog.Logger
	addr  string

	hubConfig hub.Config
	hub       *hub.Hub
	// sessions runs the live sessions; sessionConfig and shared (who
	// shares a community, livesession_test.go) configure it at start.
	sessions      *session.Service
	sessionConfig session.Config
	shared        *sharedCommunities
	api           *assembly.API
	srv           *httptest.Server

	// network, when set, is the in-process network the server listens on
	// instead of loopback (newBubbleServer); restart opens a new one,
	// which client dials.
	network atomic.Pointer[pipenet.Network]
	// client makes the test's own requests: the default client, or one
	// that dials network.
	client *http.Client

	ownerToken string
}

// sessionGrace is the live sessions' grace unless a test sets its own
// (newSessionServer): longer than any reconnection takes on a loaded
// machine under -race, so that a session that must resume does.
const sessionGrace = time.Minute

// newBubbleServer is newTestServer for a test that runs in a
// testing/synctest bubble: the server listens on an in-process network
// (pipenet), so that every timer, the client's backoff and heartbeat and
// the server's, runs on the bubble's clock, which a loaded machine cannot
// slow down against the code under test. Clients made by newClient reach
// it through s.client.
func newBubbleServer(t testing.TB, hubOptions ...func(*hub.Config)) *testServer {
	t.Helper()
	return newServerOn(t, true, hubOptions...)
}

func newTestServer(t testing.TB, hubOptions ...func(*hub.Config)) *testServer {
	t.Helper()
	return newServerOn(t, false, hubOptions...)
}

// newServerOn starts a test server, on the in-process network if inBubble.
func newServerOn(t testing.TB, inBubble bool, hubOptions ...func(*hub.Config)) *testServer {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.OpenSQLite(ctx, sqlitetest.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	s := &testServer{t: t, db: db, bus: membus.New(), log: testLogger(),
		hubConfig: hub.Config{HeartbeatInterval: time.Second, Poll: 100 * time.Millisecond}, shared: newSharedCommunities(),
		sessionConfig: session.Config{Grace: sessionGrace}}
	for _, o := range hubOptions {
		o(&s.hubConfig)
	}
	s.client = http.DefaultClient
	if inBubble {
		s.network.Store(pipenet.New())
		s.client = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return s.network.Load().DialContext(ctx, network, addr)
		}}}
	}
	s.tasks = relay.New(db, s.bus, s.log)
	sweepCtx, stopSweep := context.WithCancel(ctx)
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		_ = s.tasks.RunDeliverySweeper(sweepCtx, 50*time.Millisecond)
	}()
	t.Cleanup(func() {
		s.stop()
		if tr, ok := s.client.Transport.(*http.Transport); ok {
			tr.CloseIdleConnections() // the bubble's client holds no connection
		}
		stopSweep()
		<-swept
		_ = s.bus.Close()
		_ = db.Close()
	})

	op := &switchboard.Account{ID: switchboard.NewID(), Name: "operator", Role: switchboard.RoleOperator}
	must(t, db.CreateAccount(ctx, op))
	secret, hash := switchboard.NewToken(switchboard.TokenOwner)
	must(t, db.CreateToken(ctx, &switchboard.Token{Hash: hash, Kind: switchboard.TokenOwner, AccountID: op.ID}, true))
	s.ownerToken = secret
	s.start("127.0.0.1:0")
	return s
}

// httpClient returns the client for a connector of the server: nil (the
// connector's own) on loopback, s.client on the in-process network.
func (s *testServer) httpClient() *http.Client {
	if s.network.Load() == nil {
		return nil
	}
	return s.client
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// start serves on addr.
func (s *testServer) start(addr string) {
	s.t.Helper()
	var ln net.Listener
	if s.network.Load() != nil {
		n := pipenet.New()
		s.network.Store(n)
		ln = n
	} else {
		ln = listen(s.t, addr)
	}
	s.sessions = session.New(session.Deps{Carrier: s.bus, Agents: s.db, Policy: s.shared, Logger: s.log, InstanceID: s.tasks.InstanceID}, s.sessionConfig)
	must(s.t, s.sessions.Start(context.Background()))
	s.hub = hub.New(hub.Deps{
		Service: s.tasks, Agents: s.db, Tokens: s.db, Bus: s.bus, Logger: s.log, InstanceID: s.tasks.InstanceID,
		Sessions: s.sessions,
	}, s.hubConfig)
	s.api = assembly.NewAPI(assembly.APIDeps{
		Accounts: s.db, Agents: s.db, Tokens: s.db, Deliveries: s.db, Tasks: s.tasks,
		Limiter: ratelimit.NewMemory(0, time.Minute), Logger: s.log, Bus: s.bus, Connect: s.hub, Presence: s.tasks,
	}, httpapi.Config{BlockingTimeout: 10 * time.Second, StreamKeepAlive: 100 * time.Millisecond})
	s.api.SetReady(true)
	s.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: s.api}}
	s.srv.Start()
	s.addr = ln.Addr().String()
}

// listen listens on addr, retrying briefly while a restart's old listener
// lets go of it.
func listen(t testing.TB, addr string) net.Listener {
	t.Helper()
	var ln net.Listener
	testwait.ForErr(t, "the address to be free", func() error {
		var err error
		ln, err = net.Listen("tcp", addr)
		if err != nil && !errors.Is(err, syscall.EADDRINUSE) {
			t.Fatal(err)
		}
		return err
	})
	return ln
}

// stop shuts the server down as Main.Close does: agents first (close code
// 1012), then HTTP.
func (s *testServer) stop() {
	if s.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	_ = s.hub.Shutdown(ctx)
	s.sessions.Close()
	s.api.CloseStreams()
	s.srv.Close()
	s.srv = nil
}

// restart stops the server and starts it again on the same address with
// the same store: a server restart.
func (s *testServer) restart() {
	s.t.Helper()
	s.stop()
	s.start(s.addr)
}

// URL returns the server's base URL.
func (s *testServer) URL() string { return "http://" + s.addr }

// testAgent is a connector agent created through the owner API.
type testAgent struct {
	ID, Handle, Token string // Token is the agent token
	PeerToken         string // a peer token for "bob"
}

// agent creates a connector agent and a peer token for bob.
func (s *testServer) agent(handle string) *testAgent {
	s.t.Helper()
	var g struct {
		ID         string `json:"id"`
		AgentToken string `json:"agent_token"`
	}
	s.owner("POST", "/agents", map[string]any{"handle": handle}, &g)
	if g.AgentToken == "" {
		s.t.Fatal("no agent_token in the answer to POST /agents")
	}
	var tok struct {
		Token string `json:"token"`
	}
	s.owner("POST", "/agents/"+handle+"/tokens", map[string]any{"label": "bob"}, &tok)
	return &testAgent{ID: g.ID, Handle: handle, Token: g.AgentToken, PeerToken: tok.Token}
}

// owner calls the owner API as the operator and decodes the answer into
// out (when not nil).
func (s *testServer) owner(method, path string, body, out any) {
	s.t.Helper()
	b, err := json.Marshal(body)
	must(s.t, err)
	req, err := http.NewRequest(method, s.URL()+path, bytes.NewReader(b))
	must(s.t, err)
	req.Header.Set("Authorization", "Bearer "+s.ownerToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	must(s.t, err)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		s.t.Fatalf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, data)
	}
	if out != nil {
		must(s.t, json.Unmarshal(data, out))
	}
}

// rpcAnswer is a JSON-RPC answer to a peer.
type rpcAnswer struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// peerCall calls an agent's address as bob.
func (s *testServer) peerCall(g *testAgent, method string, params any) rpcAnswer {
	s.t.Helper()
	resp := s.peerPost(g, method, params)
	defer resp.Body.Close()
	var a rpcAnswer
	must(s.t, json.NewDecoder(resp.Body).Decode(&a))
	return a
}

func (s *testServer) peerPost(g *testAgent, method string, params any) *http.Response {
	s.t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	must(s.t, err)
	req, err := http.NewRequest("POST", s.URL()+"/a/"+g.Handle, bytes.NewReader(body))
	must(s.t, err)
	req.Header.Set("Authorization", "Bearer "+g.PeerToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := s.client.Do(req)
	must(s.t, err)
	return resp
}

// wireTask is a task as the peer reads it.
type wireTask struct {
	ID        string `json:"id"`
	ContextID string `json:"contextId"`
	Status    struct {
		State   string `json:"state"`
		Message *struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"message"`
	} `json:"status"`
	Artifacts []struct {
		ArtifactID string `json:"artifactId"`
		Parts      []struct {
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"artifacts"`
}

// statusText returns the text of the task's status message.
func (t *wireTask) statusText() string {
	if t.Status.Message == nil || len(t.Status.Message.Parts) == 0 {
		return ""
	}
	return t.Status.Message.Parts[0].Text
}

// answerText returns the text of the task's first artifact.
func (t *wireTask) answerText() string {
	if len(t.Artifacts) == 0 || len(t.Artifacts[0].Parts) == 0 {
		return ""
	}
	return t.Artifacts[0].Parts[0].Text
}

// send sends text as bob and returns the task the answer holds; with
// wait, the call blocks until the agent's turn ends.
func (s *testServer) send(g *testAgent, messageID, text string, wait bool, taskID string) *wireTask {
	s.t.Helper()
	msg := map[string]any{"messageId": messageID, "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
	if taskID != "" {
		msg["taskId"] = taskID
	}
	params := map[string]any{"message": msg, "configuration": map[string]any{"returnImmediately": !wait}}
	a := s.peerCall(g, "SendMessage", params)
	if a.Error != nil {
		s.t.Fatalf("SendMessage: %d %s", a.Error.Code, a.Error.Message)
	}
	var res struct {
		Task wireTask `json:"task"`
	}
	must(s.t, json.Unmarshal(a.Result, &res))
	return &res.Task
}

// getTask reads a task as bob.
func (s *testServer) getTask(g *testAgent, id string) *wireTask {
	s.t.Helper()
	a := s.peerCall(g, "GetTask", map[string]any{"id": id})
	if a.Error != nil {
		s.t.Fatalf("GetTask: %d %s", a.Error.Code, a.Error.Message)
	}
	var t wireTask
	must(s.t, json.Unmarshal(a.Result, &t))
	return &t
}

// waitState waits until the task is in state.
func (s *testServer) waitState(g *testAgent, id, state string) *wireTask {
	s.t.Helper()
	var t *wireTask
	testwait.For(s.t, "task "+id+" in "+state, func() bool {
		t = s.getTask(g, id)
		return t.Status.State == state
	})
	return t
}

// stream sends text as bob with SendStreamingMessage and returns the
// events of the stream, up to the one that ends the turn.
func (s *testServer) stream(g *testAgent, messageID, text string) []map[string]any {
	s.t.Helper()
	msg := map[string]any{"messageId": messageID, "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
	resp := s.peerPost(g, "SendStreamingMessage", map[string]any{"message": msg})
	defer resp.Body.Close()
	var events []map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		var a struct {
			Result map[string]any `json:"result"`
		}
		must(s.t, json.Unmarshal([]byte(strings.TrimSpace(data)), &a))
		events = append(events, a.Result)
		if st := eventState(a.Result); st == "TASK_STATE_COMPLETED" || st == "TASK_STATE_FAILED" || st == "TASK_STATE_INPUT_REQUIRED" {
			return events
		}
	}
	s.t.Fatalf("the stream ended before the turn: %v (%v)", events, sc.Err())
	return nil
}

// eventState returns the state a stream event reports, if any.
func eventState(ev map[string]any) string {
	for _, key := range []string{"statusUpdate", "task"} {
		if e, ok := ev[key].(map[string]any); ok {
			st, _ := e["status"].(map[string]any)
			s, _ := st["state"].(string)
			return s
		}
	}
	return ""
}

// connected waits until the agent holds a connection to the server.
func (s *testServer) connected(g *testAgent) {
	s.t.Helper()
	testwait.For(s.t, g.Handle+" connected", func() bool { return s.hub.Connected(g.ID) })
}

// runClient runs c until the test ends and returns a channel that receives
// what Run returned.
func runClient(t testing.TB, c *connector.Client) <-chan error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		done <- c.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-finished:
		case <-time.After(testwait.Timeout):
			t.Error("Run did not return after its context ended")
		}
	})
	return done
}

// newClient returns a client of the agent at the server with handler.
func newClient(s *testServer, g *testAgent, h connector.HandlerFunc) *connector.Client {
	return &connector.Client{URLs: []string{s.URL()}, Token: g.Token, Handler: h, Logger: s.log, HTTPClient: s.httpClient()}
}

// logBuffer collects a client's logs.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testLogger returns the logger of servers and clients: to stderr with -v,
// nowhere otherwise.
func testLogger() *slog.Logger {
	if testing.Verbose() {
		return slogTo(os.Stderr)
	}
	return slogTo(io.Discard)
}

// slogTo returns a text logger writing to w.
func slogTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
