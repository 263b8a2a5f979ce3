package hub_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/internal/pipenet"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/session"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/coder/websocket"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/hub"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/network"
	"github.com/switchboard-dev/switchboard/ratelimit"
	assembly "github.com/switchboard-dev/switchboard/server"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// server is a whole deployment for one test: SQLite in a temporary
// directory, the in-process bus, the task service with its sweeper, the hub
// and the HTTP API on a loopback listener.
type server struct {
	t     testing.TB
	db    *sqlstore.DB
	bus   *membus.Bus
	tasks *relay.Service
	hub   *hub.Hub
	api   *assembly.API
	srv   *httptest.Server
	// client makes the requests of peers and agents: the default client on
	// loopback, or one that dials the in-process network (newBubbleServer).
	client *http.Client
	owner  *switchboard.Account
	// tokenReads counts the hub's reads of agent tokens (at connect, and
	// when a connection rereads its agent).
	tokenReads *countingTokens
	// sessions runs the live sessions; mayHold is its policy (nil: none
	// allowed; session_test.go).
	sessions *session.Service
	mayHold  atomic.Pointer[func(from, to *switchboard.Agent) bool]

	stop  context.CancelFunc
	loops sync.WaitGroup
}

type serverOption func(*relay.Service, *hub.Config, *httpapi.Config)

// withoutDirectOffers makes every new task wait in the queue for a claim,
// as on an instance the agent is not connected to.
func withoutDirectOffers(_ *relay.Service, h *hub.Config, _ *httpapi.Config) {
	h.NoDirectOffers = true
}

func newServer(t testing.TB, opts ...serverOption) *server {
	t.Helper()
	return openServer(t, sqlitetest.Path(t), opts...)
}

// sessionGrace is the live sessions' grace in these tests: long enough
// for a dropped agent to reconnect and resume (a test that counts on that
// runs in a synctest bubble, where reconnecting takes none of it), short
// enough for the tests that wait it out.
const sessionGrace = 2 * time.Second

// patience bounds the harness's waits for what must come (an answer, an
// offer, a close, a blocking send's result): far above what anything here
// needs on a loaded machine under -race, so that only a hang reaches it.
// In a synctest bubble it is the bubble's time, which passes only while
// everything waits.
const patience = 30 * time.Second

// newBubbleServer is newServer for a test that runs in a testing/synctest
// bubble: the deployment serves on an in-process network (pipenet) rather
// than loopback, so that its timers (heartbeats, leases, timeouts) run on
// the bubble's clock, which a loaded machine cannot slow down or speed up
// against the code under test. The test's agents and peers reach it
// through s.client and s.dial as usual.
func newBubbleServer(t testing.TB, opts ...serverOption) *server {
	t.Helper()
	return openServerOn(t, sqlitetest.Path(t), pipenet.New(), session.Config{}, opts...)
}

// newServerWithSessions is newServer whose live sessions have the settings
// scfg (the grace, if zero, is sessionGrace).
func newServerWithSessions(t testing.TB, scfg session.Config, opts ...serverOption) *server {
	t.Helper()
	return openServerOn(t, sqlitetest.Path(t), nil, scfg, opts...)
}

// openServer starts a deployment on an existing (or new) database file.
func openServer(t testing.TB, path string, opts ...serverOption) *server {
	t.Helper()
	return openServerOn(t, path, nil, session.Config{}, opts...)
}

// openServerOn is openServer whose HTTP server listens on pnet (nil:
// on loopback) and whose live sessions have the settings scfg.
func openServerOn(t testing.TB, path string, pnet *pipenet.Network, scfg session.Config, opts ...serverOption) *server {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.OpenSQLite(ctx, path)
	must(t, err)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s := &server{t: t, db: db, bus: membus.New()}
	s.tasks = relay.New(db, s.bus, log)
	hcfg := hub.Config{HeartbeatInterval: time.Second, Poll: 200 * time.Millisecond}
	acfg := httpapi.Config{BlockingTimeout: patience, StreamKeepAlive: 100 * time.Millisecond}
	for _, o := range opts {
		o(s.tasks, &hcfg, &acfg)
	}
	s.tokenReads = &countingTokens{TokenStore: db}
	if scfg.Grace == 0 {
		scfg.Grace = sessionGrace
	}
	s.sessions = session.New(session.Deps{Carrier: s.bus, Agents: db, Policy: session.PolicyFunc(s.maySession), Logger: log,
		InstanceID: s.tasks.InstanceID}, scfg)
	must(t, s.sessions.Start(ctx))
	s.hub = hub.New(hub.Deps{Service: s.tasks, Agents: db, Tokens: s.tokenReads, Bus: s.bus, Logger: log, InstanceID: s.tasks.InstanceID,
		Sessions: s.sessions, Cards: db, Network: network.New(db, s.tasks)}, hcfg)
	s.api = assembly.NewAPI(assembly.APIDeps{Accounts: db, Agents: db, Tokens: db, Deliveries: db, Tasks: s.tasks,
		Limiter: ratelimit.NewMemory(0, time.Minute), Logger: log, Bus: s.bus, Connect: s.hub, Presence: s.tasks}, acfg)
	s.api.SetReady(true)
	if pnet == nil {
		s.srv = httptest.NewServer(s.api)
		s.client = http.DefaultClient
	} else {
		s.srv = &httptest.Server{Listener: pnet, Config: &http.Server{Handler: s.api}}
		s.srv.Start()
		s.client = &http.Client{Transport: &http.Transport{DialContext: pnet.DialContext}}
	}
	var loops context.Context
	loops, s.stop = context.WithCancel(ctx)
	s.loops.Add(1)
	go func() {
		defer s.loops.Done()
		_ = s.tasks.RunDeliverySweeper(loops, 50*time.Millisecond)
	}()
	t.Cleanup(s.close)
	accts, err := db.FindAccounts(ctx)
	must(t, err)
	if len(accts) == 0 {
		s.owner = &switchboard.Account{ID: switchboard.NewID(), Name: "owner", Role: switchboard.RoleOperator}
		must(t, db.CreateAccount(ctx, s.owner))
	} else {
		s.owner = accts[0]
	}
	return s
}

// countingTokens is a token store that counts FindTokenByHash calls.
type countingTokens struct {
	switchboard.TokenStore
	n atomic.Int64
}

func (c *countingTokens) FindTokenByHash(ctx context.Context, hash string) (*switchboard.Token, error) {
	c.n.Add(1)
	return c.TokenStore.FindTokenByHash(ctx, hash)
}

// close stops the deployment; it is safe to call more than once.
func (s *server) close() {
	if s.stop == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	_ = s.hub.Shutdown(ctx)
	s.sessions.Close()
	s.api.CloseStreams()
	s.srv.Close()
	if tr, ok := s.client.Transport.(*http.Transport); ok {
		tr.CloseIdleConnections() // the bubble's client holds no connection
	}
	s.stop()
	s.loops.Wait()
	_ = s.bus.Close()
	_ = s.db.Close()
	s.stop = nil
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// agent creates a connector agent and returns it with its agent token.
func (s *server) agent(handle string) (*switchboard.Agent, string) {
	s.t.Helper()
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: s.owner.ID, Handle: handle, Name: handle,
		Mode: switchboard.ModeConnector, AcceptsTasks: true}
	must(s.t, s.db.CreateAgent(context.Background(), g))
	return g, s.agentToken(g)
}

func (s *server) agentToken(g *switchboard.Agent) string {
	secret, hash := switchboard.NewToken(switchboard.TokenAgent)
	must(s.t, s.db.CreateToken(context.Background(), &switchboard.Token{Hash: hash, Kind: switchboard.TokenAgent, AgentID: g.ID}, true))
	return secret
}

func (s *server) peerToken(g *switchboard.Agent, label string) string {
	secret, hash := switchboard.NewToken(switchboard.TokenPeer)
	must(s.t, s.db.CreateToken(context.Background(), &switchboard.Token{Hash: hash, Kind: switchboard.TokenPeer, AgentID: g.ID, Label: label}, false))
	return secret
}

// rpc makes an A2A JSON-RPC call to an agent's address as a peer.
func (s *server) rpc(g *switchboard.Agent, token, method string, params any) map[string]any {
	s.t.Helper()
	return peerCall(s.t, s.client, s.srv.URL+"/a/"+g.Handle, token, method, params)
}

// peerCall makes an A2A JSON-RPC call to the agent address url as a peer.
func peerCall(t testing.TB, client *http.Client, url, token, method string, params any) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	must(t, err)
	defer resp.Body.Close()
	var out map[string]any
	must(t, json.NewDecoder(resp.Body).Decode(&out))
	return out
}

// send sends a text message as a peer; blocking unless immediate.
func (s *server) send(g *switchboard.Agent, token, text string, immediate bool) map[string]any {
	s.t.Helper()
	return s.rpc(g, token, "SendMessage", textMessage(text, immediate))
}

// textMessage is the params of a SendMessage with one text part.
func textMessage(text string, immediate bool) map[string]any {
	return map[string]any{
		"message":       map[string]any{"messageId": switchboard.NewID(), "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}},
		"configuration": map[string]any{"returnImmediately": immediate},
	}
}

// stream sends a streaming message as a peer and returns the data of each
// SSE event; the channel closes when the stream ends.
func (s *server) stream(g *switchboard.Agent, token, text string) <-chan string {
	s.t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": map[string]any{
		"message": map[string]any{"messageId": switchboard.NewID(), "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}}})
	req, _ := http.NewRequest("POST", s.srv.URL+"/a/"+g.Handle, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := s.client.Do(req)
	must(s.t, err)
	out := make(chan string, 16)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 8<<20)
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "data: ") {
				out <- strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return out
}

// doJSON makes a request with a JSON body and a bearer token and returns
// the status.
func doJSON(t testing.TB, client *http.Client, method, url, token string, body any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	must(t, err)
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// task reads a task from the store.
func (s *server) task(id string) *switchboard.Task {
	s.t.Helper()
	t, err := s.db.FindTaskByID(context.Background(), a2a.TaskID(id))
	must(s.t, err)
	return t
}

// waitState polls the store until the task reaches state.
func (s *server) waitState(id string, state a2a.TaskState) *switchboard.Task {
	s.t.Helper()
	var t *switchboard.Task
	testwait.ForErr(s.t, "the task's state", func() error {
		if t = s.task(id); t.State() != state {
			return fmt.Errorf("task %s is %s, want %s", id, t.State(), state)
		}
		return nil
	})
	return t
}

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

// frame is a JSON-RPC object read by a test agent.
type frame struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// testAgent is a hand-driven connector client: the test decides every
// frame it sends.
type testAgent struct {
	t     testing.TB
	ws    *websocket.Conn
	in    chan frame
	done  chan error   // the read error that ended the connection
	pings atomic.Int64 // pings received from the server
	// readsBatches is set by an agent that says it reads session batches
	// (connectBatches); batches counts those the server sent.
	readsBatches atomic.Bool
	batches      atomic.Int64

	mu      sync.Mutex
	stashed []frame // server requests read while waiting for a response
	nextID  int
}

// dial connects a test agent; it does not say hello.
func (s *server) dial(token string) (*testAgent, *http.Response, error) {
	return s.dialURL(s.srv.URL, token)
}

// dialURL connects a test agent to the server at base.
func (s *server) dialURL(base, token string) (*testAgent, *http.Response, error) {
	return s.dialWith(base, token, nil)
}

// dialWith is dialURL whose connection is wrap's (nil: the socket itself).
func (s *server) dialWith(base, token string, wrap func(net.Conn) net.Conn) (*testAgent, *http.Response, error) {
	h := http.Header{}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	a := &testAgent{t: s.t, in: make(chan frame, 256), done: make(chan error, 1)}
	opts := &websocket.DialOptions{HTTPHeader: h, Subprotocols: []string{connproto.Subprotocol},
		OnPingReceived: func(context.Context, []byte) bool { a.pings.Add(1); return true }}
	dial := (&net.Dialer{}).DialContext
	if tr, ok := s.client.Transport.(*http.Transport); ok {
		dial = tr.DialContext // the bubble's network
	}
	// A connection of its own, which no other request shares (and which
	// the upgrade takes out of the transport's pool).
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil || wrap == nil {
			return c, err
		}
		return wrap(c), nil
	}}
	defer tr.CloseIdleConnections() // that of a refused upgrade
	opts.HTTPClient = &http.Client{Transport: tr}
	ws, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/connect", opts)
	if err != nil {
		return nil, resp, err
	}
	ws.SetReadLimit(8 << 20)
	a.ws = ws
	go a.read()
	s.t.Cleanup(func() { _ = ws.CloseNow() })
	return a, resp, nil
}

// connect dials and says hello, holding the given tasks.
func (s *server) connect(token string, holding ...string) *testAgent {
	s.t.Helper()
	a, _, err := s.dial(token)
	must(s.t, err)
	if holding == nil {
		holding = []string{}
	}
	res := a.call("hello", map[string]any{"holding": holding, "client": "test"})
	if res.Error != nil {
		s.t.Fatalf("hello: %+v", res.Error)
	}
	return a
}

func (a *testAgent) read() {
	for {
		_, data, err := a.ws.Read(context.Background())
		if err != nil {
			a.done <- err
			close(a.in)
			return
		}
		if len(data) > 0 && data[0] == '[' {
			var fs []frame
			if !a.readsBatches.Load() || json.Unmarshal(data, &fs) != nil || len(fs) == 0 {
				a.t.Errorf("server sent a batch to an agent that reads none, or not JSON: %q", data)
				continue
			}
			a.batches.Add(1)
			for _, f := range fs {
				a.in <- f
			}
			continue
		}
		var f frame
		if json.Unmarshal(data, &f) != nil {
			a.t.Errorf("server sent a frame that is not JSON: %q", data)
			continue
		}
		a.in <- f
	}
}

func (a *testAgent) write(v any) {
	a.t.Helper()
	b, _ := json.Marshal(v)
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := a.ws.Write(ctx, websocket.MessageText, b); err != nil {
		a.t.Fatalf("write: %v", err)
	}
}

// call sends a request and waits for its response; server requests read
// meanwhile are kept for next.
func (a *testAgent) call(method string, params any) frame {
	a.t.Helper()
	a.mu.Lock()
	a.nextID++
	id := fmt.Sprintf("t%d", a.nextID)
	a.mu.Unlock()
	a.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	timeout := time.After(patience)
	for {
		select {
		case f, ok := <-a.in:
			if !ok {
				a.t.Fatalf("connection closed while waiting for %s", method)
			}
			if f.Method == "" && string(f.ID) == `"`+id+`"` {
				return f
			}
			a.mu.Lock()
			a.stashed = append(a.stashed, f)
			a.mu.Unlock()
		case <-timeout:
			a.t.Fatalf("no answer to %s", method)
		}
	}
}

// next returns the next request from the server.
func (a *testAgent) next() frame {
	a.t.Helper()
	a.mu.Lock()
	if len(a.stashed) > 0 {
		f := a.stashed[0]
		a.stashed = a.stashed[1:]
		a.mu.Unlock()
		return f
	}
	a.mu.Unlock()
	select {
	case f, ok := <-a.in:
		if !ok {
			a.t.Fatal("connection closed while waiting for work")
		}
		return f
	case <-time.After(patience):
		a.t.Fatalf("no work offered within %v", patience)
	}
	return frame{}
}

// quiet checks that the server offers nothing for a while.
func (a *testAgent) quiet(d time.Duration) {
	a.t.Helper()
	a.mu.Lock()
	n := len(a.stashed)
	a.mu.Unlock()
	if n > 0 {
		a.t.Fatalf("unexpected frame %+v", a.stashed[0])
	}
	select {
	case f, ok := <-a.in:
		if ok {
			a.t.Fatalf("unexpected frame %s %s", f.Method, f.Params)
		}
	case <-time.After(d):
	}
}

// closed waits for the server to close the connection and returns the
// close code.
func (a *testAgent) closed() websocket.StatusCode {
	a.t.Helper()
	select {
	case err := <-a.done:
		return websocket.CloseStatus(err)
	case <-time.After(patience):
		a.t.Fatalf("the server did not close the connection within %v", patience)
	}
	return 0
}

// offered is a SendMessage the server offered.
type offered struct {
	id        json.RawMessage
	taskID    string
	contextID string
	messageID string
	text      string
	from      string
}

// nextOffer returns the next SendMessage offer.
func (a *testAgent) nextOffer() offered {
	a.t.Helper()
	f := a.next()
	if f.Method != connproto.MethodSendMessage {
		a.t.Fatalf("expected SendMessage, got %s %s", f.Method, f.Params)
	}
	var p a2a.SendMessageRequest
	must(a.t, json.Unmarshal(f.Params, &p))
	meta, _ := p.Metadata["switchboard"].(map[string]any)
	from, _ := meta["from"].(string)
	return offered{id: f.ID, taskID: string(p.Message.TaskID), contextID: p.Message.ContextID,
		messageID: p.Message.ID, text: switchboard.MessageText(p.Message), from: from}
}

// answer answers an offer with a result.
func (a *testAgent) answer(o offered, result any) {
	a.write(map[string]any{"jsonrpc": "2.0", "id": o.id, "result": result})
}

// ackWorking acknowledges an offer with the task in working.
func (a *testAgent) ackWorking(o offered) {
	a.answer(o, map[string]any{"task": map[string]any{"id": o.taskID, "contextId": o.contextID, "status": map[string]any{"state": "TASK_STATE_WORKING"}}})
}

// complete answers an offer with a direct message, which completes it.
func (a *testAgent) complete(o offered, text string) {
	a.answer(o, map[string]any{"message": map[string]any{"messageId": switchboard.NewID(), "role": "ROLE_AGENT", "parts": []any{map[string]any{"text": text}}}})
}

// update sends a TaskUpdate and returns the server's answer.
func (a *testAgent) update(params any) frame {
	a.t.Helper()
	return a.call(connproto.MethodTaskUpdate, params)
}

func status(taskID, state, text string) map[string]any {
	st := map[string]any{"state": state}
	if text != "" {
		st["message"] = map[string]any{"messageId": switchboard.NewID(), "role": "ROLE_AGENT", "parts": []any{map[string]any{"text": text}}}
	}
	return map[string]any{"statusUpdate": map[string]any{"taskId": taskID, "contextId": "ignored", "status": st}}
}

var errTimeout = errors.New("timeout")

// async runs f in a goroutine and returns a channel with its result.
func async[T any](f func() T) <-chan T {
	c := make(chan T, 1)
	go func() { c <- f() }()
	return c
}

// await returns the value of c within patience.
func await[T any](t testing.TB, c <-chan T) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(patience):
		t.Fatal(errTimeout)
	}
	var zero T
	return zero
}
