package facetest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/network"
	"github.com/switchboard-dev/switchboard/outbox"
	"github.com/switchboard-dev/switchboard/pairing"
	"github.com/switchboard-dev/switchboard/peers"
	"github.com/switchboard-dev/switchboard/push"
	"github.com/switchboard-dev/switchboard/ratelimit"
	"github.com/switchboard-dev/switchboard/relay"
	assembly "github.com/switchboard-dev/switchboard/server"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// Harness is a real server for one test: SQLite in a temporary directory,
// the in-process bus, and the HTTP API on a loopback listener.
// Its fields are the parts a test reaches past the HTTP API.
type Harness struct {
	T          testing.TB
	DB         *sqlstore.DB // the store, for what the API does not show
	SQLitePath string       // the SQLite file
	Bus        *membus.Bus
	Tasks      *relay.Service
	Pushes     *push.Service
	Outbox     *outbox.Service
	Network    *network.Service
	Pairing    *pairing.Service
	API        *assembly.API    // the handler, for requests without a network
	Server     *httptest.Server // the loopback listener: Server.URL
	Limiter    *ratelimit.Memory

	Operator      *switchboard.Account // the operator account New creates
	OperatorToken string               // its owner token
}

// setup is what options may change before the server is made.
type setup struct {
	cfg     httpapi.Config
	pairing pairing.Config
	rate    int
	deps    []func(*assembly.APIDeps)
}

// Option changes the server New makes.
type Option func(*setup)

// WithConfig changes the HTTP API's configuration.
func WithConfig(f func(*httpapi.Config)) Option {
	return func(s *setup) { f(&s.cfg) }
}

// WithRate sets the rate limiter's requests per minute (0: no limit).
func WithRate(perMinute int) Option {
	return func(s *setup) { s.rate = perMinute }
}

// WithPairing sets the pairing service's configuration.
func WithPairing(cfg pairing.Config) Option {
	return func(s *setup) { s.pairing = cfg }
}

// WithDeps changes the services the API is assembled on (server.APIDeps),
// after the harness has filled them in.
func WithDeps(f func(*assembly.APIDeps)) Option {
	return func(s *setup) { s.deps = append(s.deps, f) }
}

// New starts a server for the test, with an operator account and its
// owner token; it is closed when the test ends.
func New(t testing.TB, opts ...Option) *Harness {
	t.Helper()
	ctx := context.Background()
	path := sqlitetest.Path(t)
	db, err := sqlstore.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	setup := setup{cfg: httpapi.Config{StreamKeepAlive: 50 * time.Millisecond}}
	for _, o := range opts {
		o(&setup)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	h := &Harness{T: t, DB: db, SQLitePath: path, Bus: membus.New()}
	h.Tasks = relay.New(db, h.Bus, log)
	h.Outbox = outbox.New(db, db)
	h.Pushes = push.NewService(db, h.Bus, push.New(netguard.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, "switchboard/test"), log)
	h.Limiter = ratelimit.NewMemory(setup.rate, time.Minute)
	h.Network = network.New(db, h.Tasks)
	h.Pairing = pairing.New(pairing.Deps{Store: db, Tokens: db, Peers: peers.New(db, h.Bus, log),
		Polls: ratelimit.NewMemory(60, time.Minute), Logger: log}, setup.pairing)
	deps := assembly.APIDeps{Accounts: db, Agents: db, Tokens: db, Deliveries: db, Tasks: h.Tasks, Outbox: h.Outbox, Pushes: h.Pushes,
		Limiter: h.Limiter, Logger: log, Pinger: db, Network: h.Network, Pairing: h.Pairing,
		Audit: &audit.Log{Store: db, Logger: log}, AuditEntries: db}
	for _, f := range setup.deps {
		f(&deps)
	}
	h.API = assembly.NewAPI(deps, setup.cfg)
	h.API.SetReady(true)
	h.Server = httptest.NewServer(h.API.AgentDomains(h.API))
	t.Cleanup(func() {
		h.API.CloseStreams()
		h.Server.Close()
		_ = h.Bus.Close()
		_ = db.Close()
	})
	h.Operator = &switchboard.Account{ID: switchboard.NewID(), Name: "operator", Role: switchboard.RoleOperator}
	Must(t, db.CreateAccount(ctx, h.Operator))
	h.OperatorToken = h.OwnerToken(h.Operator)
	return h
}

// Must fails the test at once on an error.
func Must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// OwnerToken issues an owner token for the account.
func (h *Harness) OwnerToken(a *switchboard.Account) string {
	secret, hash := switchboard.NewToken(switchboard.TokenOwner)
	Must(h.T, h.DB.CreateToken(context.Background(), &switchboard.Token{Hash: hash, Kind: switchboard.TokenOwner, AccountID: a.ID}, true))
	return secret
}

// Account creates an owner account and returns it with its token.
func (h *Harness) Account(name string) (*switchboard.Account, string) {
	a := &switchboard.Account{ID: switchboard.NewID(), Name: name, Role: switchboard.RoleOwner}
	Must(h.T, h.DB.CreateAccount(context.Background(), a))
	return a, h.OwnerToken(a)
}

// Agent creates an inbox agent owned by the operator.
func (h *Harness) Agent(handle string) *switchboard.Agent {
	return h.AgentOf(h.Operator, handle)
}

// AgentOf creates an inbox agent owned by the account.
func (h *Harness) AgentOf(owner *switchboard.Account, handle string) *switchboard.Agent {
	g := &switchboard.Agent{
		ID: switchboard.NewID(), AccountID: owner.ID, Handle: handle, Name: "Agent " + handle,
		Description: "Test agent " + handle, Mode: switchboard.ModeInbox, Version: "1.2.3", AcceptsTasks: true,
		Skills: []a2a.AgentSkill{{ID: "echo", Name: "Echo", Description: "Says it back", Tags: []string{"test"}}},
	}
	Must(h.T, h.DB.CreateAgent(context.Background(), g))
	return g
}

// PeerToken issues a peer token for the agent.
func (h *Harness) PeerToken(g *switchboard.Agent, label string) string {
	secret, hash := switchboard.NewToken(switchboard.TokenPeer)
	Must(h.T, h.DB.CreateToken(context.Background(), &switchboard.Token{Hash: hash, Kind: switchboard.TokenPeer, AgentID: g.ID, Label: label}, false))
	return secret
}

// Addr is the agent's address: the URL of its A2A endpoint.
func (h *Harness) Addr(g *switchboard.Agent) string { return h.Server.URL + "/a/" + g.Handle }

// AgentByHandle reads an agent from the store.
func (h *Harness) AgentByHandle(handle string) *switchboard.Agent {
	g, err := h.DB.FindAgentByHandle(context.Background(), handle)
	Must(h.T, err)
	return g
}

// PeerOf returns the peer a peer token stands for.
func (h *Harness) PeerOf(token string) switchboard.Peer {
	tok, err := h.DB.FindTokenByHash(context.Background(), switchboard.HashToken(token))
	Must(h.T, err)
	return switchboard.Peer{AgentID: tok.AgentID, ID: tok.PeerID, Label: tok.Label}
}

// Response is an HTTP answer with its body decoded as JSON (when it is).
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	JSON   map[string]any
}

// Do sends a request and reads the whole answer.
func (h *Harness) Do(method, url string, header map[string]string, body string) *Response {
	h.T.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	Must(h.T, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	Must(h.T, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	Must(h.T, err)
	r := &Response{Status: resp.StatusCode, Header: resp.Header, Body: data}
	_ = json.Unmarshal(data, &r.JSON)
	return r
}

// RPC sends a JSON-RPC request to an address with a peer token (none if
// empty) and extra headers given as name, value pairs.
func (h *Harness) RPC(url, token, body string, headers ...string) *Response {
	h.T.Helper()
	hdr := map[string]string{"Content-Type": "application/json"}
	if token != "" {
		hdr["Authorization"] = "Bearer " + token
	}
	for i := 0; i+1 < len(headers); i += 2 {
		hdr[headers[i]] = headers[i+1]
	}
	return h.Do("POST", url, hdr, body)
}

// Call sends one method with params (marshalled) and returns the answer.
func (h *Harness) Call(url, token, method string, params any, headers ...string) *Response {
	h.T.Helper()
	p, err := json.Marshal(params)
	Must(h.T, err)
	body := `{"jsonrpc":"2.0","id":"req-1","method":"` + method + `","params":` + string(p) + `}`
	return h.RPC(url, token, body, headers...)
}

// Owner sends an owner-API request.
func (h *Harness) Owner(method, path, token string, body any) *Response {
	h.T.Helper()
	var b string
	if body != nil {
		data, err := json.Marshal(body)
		Must(h.T, err)
		b = string(data)
	}
	hdr := map[string]string{"Content-Type": "application/json"}
	if token != "" {
		hdr["Authorization"] = "Bearer " + token
	}
	return h.Do(method, h.Server.URL+path, hdr, b)
}

// Result returns the JSON-RPC result object of a successful answer.
func (r *Response) Result(t testing.TB) map[string]any {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("HTTP %d: %s", r.Status, r.Body)
	}
	if e, ok := r.JSON["error"]; ok {
		t.Fatalf("JSON-RPC error: %v", e)
	}
	res, ok := r.JSON["result"].(map[string]any)
	if !ok {
		t.Fatalf("result is not an object: %s", r.Body)
	}
	return res
}

// RPCErrorCode returns the JSON-RPC error code of a failed answer, or 0.
func (r *Response) RPCErrorCode() int {
	e, ok := r.JSON["error"].(map[string]any)
	if !ok {
		return 0
	}
	c, _ := e["code"].(float64)
	return int(c)
}

// WantRPCError fails the test unless the answer is the HTTP status with
// the JSON-RPC error code.
func WantRPCError(t testing.TB, r *Response, status, code int) {
	t.Helper()
	if r.Status != status || r.RPCErrorCode() != code {
		t.Fatalf("got HTTP %d code %d, want HTTP %d code %d: %s", r.Status, r.RPCErrorCode(), status, code, r.Body)
	}
}

// UserMessage returns 1.0 SendMessage params for a text message.
func UserMessage(id, text string) map[string]any {
	return map[string]any{"message": map[string]any{
		"messageId": id, "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}},
	}}
}

// LegacyMessage returns 0.3 message/send params for a text message.
func LegacyMessage(id, text string) map[string]any {
	return map[string]any{"message": map[string]any{
		"kind": "message", "messageId": id, "role": "user", "parts": []any{map[string]any{"kind": "text", "text": text}},
	}}
}

// Send sends a 1.0 message and returns the task id.
func (h *Harness) Send(g *switchboard.Agent, token, messageID, text string) string {
	h.T.Helper()
	res := h.Call(h.Addr(g), token, "SendMessage", UserMessage(messageID, text)).Result(h.T)
	task := res["task"].(map[string]any)
	return task["id"].(string)
}

// Reply answers a task as its owner through the task service.
func (h *Harness) Reply(taskID string, state a2a.TaskState, text string) {
	h.T.Helper()
	_, err := h.Tasks.ReplyToTask(context.Background(), a2a.TaskID(taskID), relay.Reply{Text: text, State: state})
	Must(h.T, err)
}

// Event is one event read from a stream.
type Event struct {
	ID   string
	Data map[string]any
	Bad  string // a data line that is not a JSON object
}

// Stream opens an SSE request and returns a channel of its events, closed
// when the stream ends.
func (h *Harness) Stream(url, token, method string, params any, headers ...string) (<-chan Event, *http.Response) {
	h.T.Helper()
	p, err := json.Marshal(params)
	Must(h.T, err)
	body := `{"jsonrpc":"2.0","id":"s-1","method":"` + method + `","params":` + string(p) + `}`
	req, err := http.NewRequest("POST", url, bytes.NewReader([]byte(body)))
	Must(h.T, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	return h.StreamRequest(req, headers...)
}

// StreamRequest sends req, with headers as name, value pairs, and returns
// a channel of the events of its answer, closed when the stream ends.
func (h *Harness) StreamRequest(req *http.Request, headers ...string) (<-chan Event, *http.Response) {
	h.T.Helper()
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	h.T.Cleanup(cancel)
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	Must(h.T, err)
	events := make(chan Event, 64)
	go func() {
		defer close(events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev Event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				ev.ID = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				raw := strings.TrimPrefix(line, "data: ")
				if json.Unmarshal([]byte(raw), &ev.Data) != nil || ev.Data == nil {
					ev.Bad = raw
				}
			case line == "" && (ev.Data != nil || ev.Bad != ""):
				events <- ev
				ev = Event{}
			case line == "" || strings.HasPrefix(line, ":"):
			default:
				events <- Event{Bad: line}
			}
		}
	}()
	return events, resp
}

// Next returns the next event of a stream, failing the test after a timeout
// or if the stream ended.
func Next(t testing.TB, events <-chan Event) Event {
	t.Helper()
	select {
	case ev, ok := <-events:
		if !ok {
			t.Fatal("stream ended early")
		}
		if ev.Bad != "" {
			t.Fatalf("malformed stream line %q", ev.Bad)
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no stream event within 5s")
	}
	return Event{}
}

// Ended checks that a stream ends without another event.
func Ended(t testing.TB, events <-chan Event) {
	t.Helper()
	select {
	case ev, ok := <-events:
		if ok {
			t.Fatalf("stream went on with %+v", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("stream did not end within 5s")
	}
}

// Path reads a nested value from decoded JSON: path(m, "status", "state").
func Path(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// AgentUpdateExtended is an agent update that sets the extended card's
// skills.
func AgentUpdateExtended(skills []a2a.AgentSkill) switchboard.AgentUpdate {
	return switchboard.AgentUpdate{ExtendedSkills: &skills}
}
