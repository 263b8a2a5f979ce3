package httpapi_test

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

// harness is a real server for one test: SQLite in a temporary directory,
// the in-process bus, and the HTTP API on a loopback listener.
type harness struct {
	t       testing.TB
	db      *sqlstore.DB
	path    string // the SQLite file
	bus     *membus.Bus
	tasks   *relay.Service
	pushes  *push.Service
	outbox  *outbox.Service
	network *network.Service
	pairing *pairing.Service
	api     *assembly.API
	srv     *httptest.Server
	limiter *ratelimit.Memory

	operator      *switchboard.Account
	operatorToken string
}

// harnessSetup is what options may change before the server is made.
type harnessSetup struct {
	cfg     httpapi.Config
	pairing pairing.Config
	rate    int
	deps    []func(*assembly.APIDeps)
}

type harnessOption func(*harnessSetup)

func withConfig(f func(*httpapi.Config)) harnessOption {
	return func(s *harnessSetup) { f(&s.cfg) }
}

func withRate(perMinute int) harnessOption {
	return func(s *harnessSetup) { s.rate = perMinute }
}

func withPairing(cfg pairing.Config) harnessOption {
	return func(s *harnessSetup) { s.pairing = cfg }
}

func withDeps(f func(*assembly.APIDeps)) harnessOption {
	return func(s *harnessSetup) { s.deps = append(s.deps, f) }
}

func newHarness(t testing.TB, opts ...harnessOption) *harness {
	t.Helper()
	ctx := context.Background()
	path := sqlitetest.Path(t)
	db, err := sqlstore.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	setup := harnessSetup{cfg: httpapi.Config{StreamKeepAlive: 50 * time.Millisecond}}
	for _, o := range opts {
		o(&setup)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	h := &harness{t: t, db: db, path: path, bus: membus.New()}
	h.tasks = relay.New(db, h.bus, log)
	h.outbox = outbox.New(db, db)
	h.pushes = push.NewService(db, h.bus, push.New(netguard.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, "switchboard/test"), log)
	h.limiter = ratelimit.NewMemory(setup.rate, time.Minute)
	h.network = network.New(db, h.tasks)
	h.pairing = pairing.New(pairing.Deps{Store: db, Tokens: db, Peers: peers.New(db, h.bus, log),
		Polls: ratelimit.NewMemory(60, time.Minute), Logger: log}, setup.pairing)
	deps := assembly.APIDeps{Accounts: db, Agents: db, Tokens: db, Deliveries: db, Tasks: h.tasks, Outbox: h.outbox, Pushes: h.pushes,
		Limiter: h.limiter, Logger: log, Pinger: db, Network: h.network, Pairing: h.pairing,
		Audit: &audit.Log{Store: db, Logger: log}, AuditEntries: db}
	for _, f := range setup.deps {
		f(&deps)
	}
	h.api = assembly.NewAPI(deps, setup.cfg)
	h.api.SetReady(true)
	h.srv = httptest.NewServer(h.api.AgentDomains(h.api))
	t.Cleanup(func() {
		h.api.CloseStreams()
		h.srv.Close()
		_ = h.bus.Close()
		_ = db.Close()
	})
	h.operator = &switchboard.Account{ID: switchboard.NewID(), Name: "operator", Role: switchboard.RoleOperator}
	must(t, db.CreateAccount(ctx, h.operator))
	h.operatorToken = h.ownerToken(h.operator)
	return h
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// ownerToken issues an owner token for the account.
func (h *harness) ownerToken(a *switchboard.Account) string {
	secret, hash := switchboard.NewToken(switchboard.TokenOwner)
	must(h.t, h.db.CreateToken(context.Background(), &switchboard.Token{Hash: hash, Kind: switchboard.TokenOwner, AccountID: a.ID}, true))
	return secret
}

// account creates an owner account and returns it with its token.
func (h *harness) account(name string) (*switchboard.Account, string) {
	a := &switchboard.Account{ID: switchboard.NewID(), Name: name, Role: switchboard.RoleOwner}
	must(h.t, h.db.CreateAccount(context.Background(), a))
	return a, h.ownerToken(a)
}

// agent creates an inbox agent owned by the operator.
func (h *harness) agent(handle string) *switchboard.Agent {
	return h.agentOf(h.operator, handle)
}

func (h *harness) agentOf(owner *switchboard.Account, handle string) *switchboard.Agent {
	g := &switchboard.Agent{
		ID: switchboard.NewID(), AccountID: owner.ID, Handle: handle, Name: "Agent " + handle,
		Description: "Test agent " + handle, Mode: switchboard.ModeInbox, Version: "1.2.3", AcceptsTasks: true,
		Skills: []a2a.AgentSkill{{ID: "echo", Name: "Echo", Description: "Says it back", Tags: []string{"test"}}},
	}
	must(h.t, h.db.CreateAgent(context.Background(), g))
	return g
}

// peerToken issues a peer token for the agent.
func (h *harness) peerToken(g *switchboard.Agent, label string) string {
	secret, hash := switchboard.NewToken(switchboard.TokenPeer)
	must(h.t, h.db.CreateToken(context.Background(), &switchboard.Token{Hash: hash, Kind: switchboard.TokenPeer, AgentID: g.ID, Label: label}, false))
	return secret
}

func (h *harness) addr(g *switchboard.Agent) string { return h.srv.URL + "/a/" + g.Handle }

// agentByHandle reads an agent from the store.
func (h *harness) agentByHandle(handle string) *switchboard.Agent {
	g, err := h.db.FindAgentByHandle(context.Background(), handle)
	must(h.t, err)
	return g
}

// peerOf returns the peer a peer token stands for.
func (h *harness) peerOf(token string) switchboard.Peer {
	tok, err := h.db.FindTokenByHash(context.Background(), switchboard.HashToken(token))
	must(h.t, err)
	return switchboard.Peer{AgentID: tok.AgentID, ID: tok.PeerID, Label: tok.Label}
}

// response is an HTTP answer with its body decoded as JSON (when it is).
type response struct {
	status int
	header http.Header
	body   []byte
	json   map[string]any
}

// do sends a request and reads the whole answer.
func (h *harness) do(method, url string, header map[string]string, body string) *response {
	h.t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	must(h.t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	must(h.t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	must(h.t, err)
	r := &response{status: resp.StatusCode, header: resp.Header, body: data}
	_ = json.Unmarshal(data, &r.json)
	return r
}

// rpc sends a JSON-RPC request to an address with a peer token (none if
// empty) and extra headers given as name, value pairs.
func (h *harness) rpc(url, token, body string, headers ...string) *response {
	h.t.Helper()
	hdr := map[string]string{"Content-Type": "application/json"}
	if token != "" {
		hdr["Authorization"] = "Bearer " + token
	}
	for i := 0; i+1 < len(headers); i += 2 {
		hdr[headers[i]] = headers[i+1]
	}
	return h.do("POST", url, hdr, body)
}

// call sends one method with params (marshalled) and returns the answer.
func (h *harness) call(url, token, method string, params any, headers ...string) *response {
	h.t.Helper()
	p, err := json.Marshal(params)
	must(h.t, err)
	body := `{"jsonrpc":"2.0","id":"req-1","method":"` + method + `","params":` + string(p) + `}`
	return h.rpc(url, token, body, headers...)
}

// owner sends an owner-API request.
func (h *harness) owner(method, path, token string, body any) *response {
	h.t.Helper()
	var b string
	if body != nil {
		data, err := json.Marshal(body)
		must(h.t, err)
		b = string(data)
	}
	hdr := map[string]string{"Content-Type": "application/json"}
	if token != "" {
		hdr["Authorization"] = "Bearer " + token
	}
	return h.do(method, h.srv.URL+path, hdr, b)
}

// result returns the JSON-RPC result object of a successful answer.
func (r *response) result(t testing.TB) map[string]any {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("HTTP %d: %s", r.status, r.body)
	}
	if e, ok := r.json["error"]; ok {
		t.Fatalf("JSON-RPC error: %v", e)
	}
	res, ok := r.json["result"].(map[string]any)
	if !ok {
		t.Fatalf("result is not an object: %s", r.body)
	}
	return res
}

// rpcErrorCode returns the JSON-RPC error code of a failed answer, or 0.
func (r *response) rpcErrorCode() int {
	e, ok := r.json["error"].(map[string]any)
	if !ok {
		return 0
	}
	c, _ := e["code"].(float64)
	return int(c)
}

func wantRPCError(t testing.TB, r *response, status, code int) {
	t.Helper()
	if r.status != status || r.rpcErrorCode() != code {
		t.Fatalf("got HTTP %d code %d, want HTTP %d code %d: %s", r.status, r.rpcErrorCode(), status, code, r.body)
	}
}

// userMessage returns 1.0 SendMessage params for a text message.
func userMessage(id, text string) map[string]any {
	return map[string]any{"message": map[string]any{
		"messageId": id, "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}},
	}}
}

// legacyMessage returns 0.3 message/send params for a text message.
func legacyMessage(id, text string) map[string]any {
	return map[string]any{"message": map[string]any{
		"kind": "message", "messageId": id, "role": "user", "parts": []any{map[string]any{"kind": "text", "text": text}},
	}}
}

// send sends a 1.0 message and returns the task id.
func (h *harness) send(g *switchboard.Agent, token, messageID, text string) string {
	h.t.Helper()
	res := h.call(h.addr(g), token, "SendMessage", userMessage(messageID, text)).result(h.t)
	task := res["task"].(map[string]any)
	return task["id"].(string)
}

// reply answers a task as its owner through the task service.
func (h *harness) reply(taskID string, state a2a.TaskState, text string) {
	h.t.Helper()
	_, err := h.tasks.ReplyToTask(context.Background(), a2a.TaskID(taskID), relay.Reply{Text: text, State: state})
	must(h.t, err)
}

// sseEvent is one event read from a stream.
type sseEvent struct {
	id   string
	data map[string]any
	bad  string // a data line that is not a JSON object
}

// stream opens an SSE request and returns a channel of its events, closed
// when the stream ends.
func (h *harness) stream(url, token, method string, params any, headers ...string) (<-chan sseEvent, *http.Response) {
	h.t.Helper()
	p, err := json.Marshal(params)
	must(h.t, err)
	body := `{"jsonrpc":"2.0","id":"s-1","method":"` + method + `","params":` + string(p) + `}`
	req, err := http.NewRequest("POST", url, bytes.NewReader([]byte(body)))
	must(h.t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	return h.streamRequest(req, headers...)
}

// streamRequest sends req, with headers as name, value pairs, and returns
// a channel of the events of its answer, closed when the stream ends.
func (h *harness) streamRequest(req *http.Request, headers ...string) (<-chan sseEvent, *http.Response) {
	h.t.Helper()
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	h.t.Cleanup(cancel)
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	must(h.t, err)
	events := make(chan sseEvent, 64)
	go func() {
		defer close(events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				ev.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				raw := strings.TrimPrefix(line, "data: ")
				if json.Unmarshal([]byte(raw), &ev.data) != nil || ev.data == nil {
					ev.bad = raw
				}
			case line == "" && (ev.data != nil || ev.bad != ""):
				events <- ev
				ev = sseEvent{}
			case line == "" || strings.HasPrefix(line, ":"):
			default:
				events <- sseEvent{bad: line}
			}
		}
	}()
	return events, resp
}

// next returns the next event of a stream, failing the test after a timeout
// or if the stream ended.
func next(t testing.TB, events <-chan sseEvent) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-events:
		if !ok {
			t.Fatal("stream ended early")
		}
		if ev.bad != "" {
			t.Fatalf("malformed stream line %q", ev.bad)
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no stream event within 5s")
	}
	return sseEvent{}
}

// ended checks that a stream ends without another event.
func ended(t testing.TB, events <-chan sseEvent) {
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

// path reads a nested value from decoded JSON: path(m, "status", "state").
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

func agentUpdateExtended(skills []a2a.AgentSkill) switchboard.AgentUpdate {
	return switchboard.AgentUpdate{ExtendedSkills: &skills}
}
