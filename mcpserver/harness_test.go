package mcpserver_test

import (
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
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/internal/pgtest"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/mcpserver"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/network"
	"github.com/switchboard-dev/switchboard/outbox"
	"github.com/switchboard-dev/switchboard/outpeer"
	"github.com/switchboard-dev/switchboard/pairing"
	"github.com/switchboard-dev/switchboard/peers"
	"github.com/switchboard-dev/switchboard/ratelimit"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/seal"
	assembly "github.com/switchboard-dev/switchboard/server"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// world is a real deployment for one test: a store, the in-process bus,
// the services, the HTTP API with MCP on a loopback listener.
type world struct {
	t       testing.TB
	driver  string // the database/sql driver and data source name of the store
	dsn     string
	db      *sqlstore.DB
	tasks   *relay.Service
	network *network.Service
	pairing *pairing.Service
	api     *assembly.API
	srv     *httptest.Server

	owner      *switchboard.Account
	ownerToken string
}

// store opens a fresh store: "sqlite" (a file in a temporary directory)
// or "postgres" (a fresh schema; skipped without SWITCHBOARD_TEST_POSTGRES),
// and returns it with the driver and data source name that reach it.
func store(tb testing.TB, kind string) (db *sqlstore.DB, driver, dsn string) {
	tb.Helper()
	ctx := context.Background()
	var err error
	if kind == "postgres" {
		driver, dsn = "pgx", pgtest.DSN(tb)
		db, err = sqlstore.OpenPostgres(ctx, dsn, sqlstore.PostgresOptions{})
	} else {
		path := sqlitetest.Path(tb)
		driver, dsn = "sqlite", sqlitetest.DSN(path)
		db, err = sqlstore.OpenSQLite(ctx, path)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return db, driver, dsn
}

// eachStore runs f on SQLite and on PostgreSQL.
func eachStore(t *testing.T, f func(t *testing.T, kind string)) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) { f(t, kind) })
	}
}

// newWorld starts a deployment on the store kind, with the limiter
// counting MCP calls (nil: none).
func newWorld(tb testing.TB, kind string, limiter switchboard.RateLimiter) *world {
	tb.Helper()
	return newWorldConfig(tb, kind, limiter, httpapi.Config{})
}

// newWorldConfig is newWorld with the HTTP API's configuration.
func newWorldConfig(tb testing.TB, kind string, limiter switchboard.RateLimiter, cfg httpapi.Config) *world {
	tb.Helper()
	db, driver, dsn := store(tb, kind)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	bus := membus.New()
	ring, err := seal.NewKeyring(seal.NewKey())
	must(tb, err)
	db.Secrets = ring // before any request: secrets sealed as a server seals them
	w := &world{t: tb, driver: driver, dsn: dsn, db: db}
	w.tasks = relay.New(db, bus, log)
	// Synced aliases reach loopback servers (the remote agents of tests).
	synced := outpeer.New(db, front.ClientOptions{Guard: netguard.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}})
	ob := outbox.New(db, db)
	w.network = network.New(db, w.tasks)
	w.pairing = pairing.New(pairing.Deps{Store: db, Tokens: db, Peers: peers.New(db, bus, log), Logger: log}, pairing.Config{})
	mcps := mcpserver.New(mcpserver.Deps{Accounts: db, Agents: db, Tokens: db, Tasks: w.tasks, Outbox: ob, Network: w.network,
		Pairing: w.pairing, Limiter: limiter, Logger: log, OutboundPeers: synced, Audit: &audit.Log{Store: db, Logger: log}},
		mcpserver.Config{Version: "test"})
	w.api = assembly.NewAPI(assembly.APIDeps{Accounts: db, Agents: db, Tokens: db, Deliveries: db, Tasks: w.tasks, Outbox: ob,
		Limiter: ratelimit.NewMemory(0, time.Minute), Logger: log, Pinger: db, Network: w.network, Pairing: w.pairing, MCP: mcps,
		OutboundPeers: synced}, cfg)
	w.api.SetReady(true)
	w.srv = httptest.NewServer(w.api)
	tb.Cleanup(func() {
		w.api.CloseStreams()
		w.srv.Close()
		_ = bus.Close()
		_ = db.Close()
	})
	w.owner = &switchboard.Account{ID: switchboard.NewID(), Name: "alice", Role: switchboard.RoleOwner}
	must(tb, db.CreateAccount(context.Background(), w.owner))
	w.ownerToken = w.token(switchboard.TokenOwner, w.owner.ID, "", "")
	return w
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// token stores a new token of the kind and returns its secret.
func (w *world) token(kind switchboard.TokenKind, accountID, agentID, label string) string {
	secret, hash := switchboard.NewToken(kind)
	must(w.t, w.db.CreateToken(context.Background(), &switchboard.Token{Hash: hash, Kind: kind, AccountID: accountID, AgentID: agentID, Label: label}, false))
	return secret
}

// agent creates an approved inbox agent of the owner.
func (w *world) agent(handle string) *switchboard.Agent {
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: w.owner.ID, Handle: handle, Name: "Agent " + handle,
		Description: "Test agent " + handle, Mode: switchboard.ModeInbox, Version: "1.0.0", AcceptsTasks: true, Approved: true,
		Skills: []a2a.AgentSkill{{ID: "echo", Name: "Echo", Description: "Says it back", Tags: []string{"test"}}}}
	must(w.t, w.db.CreateAgent(context.Background(), g))
	return g
}

// webhookAgent creates an approved webhook agent of the owner: discovery
// counts it as live (nothing delivers to it in these tests).
func (w *world) webhookAgent(handle string) *switchboard.Agent {
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: w.owner.ID, Handle: handle, Name: "Hook " + handle,
		Mode: switchboard.ModeWebhook, Endpoint: "https://hook.example/" + handle, WebhookSecret: switchboard.NewWebhookSecret(),
		Version: "1.0.0", AcceptsTasks: true, Approved: true}
	must(w.t, w.db.CreateAgent(context.Background(), g))
	return g
}

// mcpToken mints an MCP token for the agent through the owner API.
func (w *world) mcpToken(g *switchboard.Agent, label string) string {
	w.t.Helper()
	r := w.do("POST", "/agents/"+g.Handle+"/mcp-tokens", w.ownerToken, `{"label":"`+label+`"}`, nil)
	if r.status != http.StatusCreated {
		w.t.Fatalf("mint an MCP token: HTTP %d %s", r.status, r.body)
	}
	return r.json["token"].(string)
}

func (w *world) mcpURL(g *switchboard.Agent) string { return w.srv.URL + "/a/" + g.Handle + "/mcp" }

// response is an HTTP answer, its body decoded as JSON when it is.
type response struct {
	status int
	header http.Header
	body   string
	json   map[string]any
}

// do sends a request to the server (path relative to it) with a bearer
// token (none if empty) and extra headers.
func (w *world) do(method, path, token, body string, hdr map[string]string) *response {
	w.t.Helper()
	url := path
	if !strings.HasPrefix(path, "http") {
		url = w.srv.URL + path
	}
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	must(w.t, err)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	must(w.t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	must(w.t, err)
	r := &response{status: resp.StatusCode, header: resp.Header, body: string(data)}
	_ = json.Unmarshal(data, &r.json)
	return r
}

// a2a sends one A2A 1.0 JSON-RPC call to the agent's address as a peer.
func (w *world) a2a(g *switchboard.Agent, peerToken, method string, params any) map[string]any {
	w.t.Helper()
	p, err := json.Marshal(params)
	must(w.t, err)
	r := w.do("POST", "/a/"+g.Handle, peerToken, `{"jsonrpc":"2.0","id":"1","method":"`+method+`","params":`+string(p)+`}`,
		map[string]string{"A2A-Version": "1.0"})
	res, ok := r.json["result"].(map[string]any)
	if r.status != http.StatusOK || !ok {
		w.t.Fatalf("%s: HTTP %d %s", method, r.status, r.body)
	}
	return res
}

// peerSends sends the agent a text message as the peer and returns the
// task's id.
func (w *world) peerSends(g *switchboard.Agent, peerToken, text string) string {
	w.t.Helper()
	res := w.a2a(g, peerToken, "SendMessage", map[string]any{"message": map[string]any{
		"messageId": switchboard.NewID(), "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}})
	return res["task"].(map[string]any)["id"].(string)
}

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// connect opens a go-sdk client session on the URL with the token,
// asking for the protocol version.
func connect(tb testing.TB, url, token, version string) *mcp.ClientSession {
	tb.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}}
	cs, err := c.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		tb.Fatalf("connect with %s: %v", version, err)
	}
	tb.Cleanup(func() { _ = cs.Close() })
	return cs
}

// call calls a tool and returns its structured content; a tool error
// fails the test.
func call(tb testing.TB, cs *mcp.ClientSession, name string, args any) map[string]any {
	tb.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		tb.Fatalf("%s failed: %s", name, text(res))
	}
	var out map[string]any
	data, err := json.Marshal(res.StructuredContent)
	must(tb, err)
	must(tb, json.Unmarshal(data, &out))
	return out
}

// text returns the text of a tool result's content.
func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}
