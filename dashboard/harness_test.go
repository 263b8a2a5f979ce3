package dashboard_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
	"github.com/switchboard-dev/switchboard/dashboard"
	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/mcpauth"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/network"
	"github.com/switchboard-dev/switchboard/outbox"
	"github.com/switchboard-dev/switchboard/outpeer"
	"github.com/switchboard-dev/switchboard/pairing"
	"github.com/switchboard-dev/switchboard/peers"
	"github.com/switchboard-dev/switchboard/push"
	"github.com/switchboard-dev/switchboard/ratelimit"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/sqlstore"
	"github.com/switchboard-dev/switchboard/wake"
)

// harness is a console over a real SQLite store and an in-process bus,
// served on a loopback httptest server.
type harness struct {
	t       testing.TB
	db      *sqlstore.DB
	path    string // the SQLite file of db
	bus     *membus.Bus
	relay   *relay.Service
	wakes   *wake.Service
	pushes  *push.Service
	outbox  *outbox.Service
	aliases *outpeer.Service
	console *dashboard.Console
	oauth   *mcpauth.Service
	pairing *pairing.Service
	srv     *httptest.Server
	tls     bool // srv serves https
	log     *syncBuffer
	base    string // the console's base URL (its origin)

	mu  sync.Mutex
	now time.Time // guarded by mu: the console's clock
}

// syncBuffer is a log destination tests read while the server writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// harnessOption changes the harness before the console is built.
type harnessOption func(*dashboard.Deps, *dashboard.Config, *harness)

// withBase makes the console believe the world reaches it at base.
func withBase(base string) harnessOption {
	return func(_ *dashboard.Deps, _ *dashboard.Config, h *harness) { h.base = base }
}

// withTLS serves the console over https (the request's r.TLS is set).
func withTLS() harnessOption {
	return func(_ *dashboard.Deps, _ *dashboard.Config, h *harness) { h.tls = true }
}

// withLifetime makes a sign-in last at most d.
func withLifetime(d time.Duration) harnessOption {
	return func(_ *dashboard.Deps, cfg *dashboard.Config, _ *harness) { cfg.Lifetime = d }
}

// withLimit bounds sign-in attempts to n a minute per address.
func withLimit(n int) harnessOption {
	return func(d *dashboard.Deps, _ *dashboard.Config, _ *harness) {
		d.Limiter = ratelimit.NewMemory(n, time.Minute)
	}
}

// withSecrets makes the store seal the secrets it keeps with s.
func withSecrets(s sqlstore.Sealer) harnessOption {
	return func(_ *dashboard.Deps, _ *dashboard.Config, h *harness) { h.db.Secrets = s }
}

// withoutAliases serves a console on a server that keeps no synced
// aliases.
func withoutAliases() harnessOption {
	return func(d *dashboard.Deps, _ *dashboard.Config, _ *harness) { d.OutboundPeers = nil }
}

func newHarness(tb testing.TB, opts ...harnessOption) *harness {
	tb.Helper()
	path := sqlitetest.Path(tb)
	db, err := sqlstore.OpenSQLite(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	bus := membus.New()
	tb.Cleanup(func() { _ = bus.Close() })
	h := &harness{t: tb, db: db, path: path, bus: bus, log: &syncBuffer{}, now: time.Now()}
	logger := slog.New(slog.NewTextHandler(h.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h.relay = relay.New(db, bus, logger)
	loopback := netguard.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	h.wakes = wake.NewService(db, db, bus, wake.New(loopback), logger)
	h.wakes.CheckTemplate = wake.CheckTemplate
	h.wakes.AllowHTTP = loopback.AllowsPlainHTTP()
	h.pushes = push.NewService(db, bus, push.New(loopback, "switchboard/test"), logger)
	h.outbox = outbox.New(db, db)
	h.aliases = outpeer.New(db, front.ClientOptions{Guard: loopback})
	deps := dashboard.Deps{
		Accounts: db, Agents: db, Tokens: db, SignIns: db, Glances: db, Health: db,
		Tasks: h.relay, Peers: peers.New(db, bus, logger), Network: network.New(db, h.relay),
		Wakes: h.wakes, Pushes: h.pushes, Outbox: h.outbox, OutboundPeers: h.aliases, Published: &front.Published{Store: db, Logger: logger},
		Bus: bus, Limiter: ratelimit.NewMemory(100, time.Minute), Logger: logger,
		Audit: &audit.Log{Store: db, Logger: logger}, AuditEntries: db,
	}
	cfg := dashboard.Config{Coalesce: 10 * time.Millisecond, Now: h.clock}
	for _, o := range opts {
		o(&deps, &cfg, h)
	}
	deps.BaseURL = func(*http.Request) string { return h.base }
	h.console, err = dashboard.New(deps, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	h.oauth = mcpauth.New(mcpauth.Deps{Store: db, Tokens: db, Logger: logger}, mcpauth.Config{Now: h.clock})
	consent, err := dashboard.NewConsentPage(h.console, h.oauth)
	if err != nil {
		tb.Fatal(err)
	}
	h.pairing = pairing.New(pairing.Deps{Store: db, Tokens: db, Peers: deps.Peers, Polls: ratelimit.NewMemory(100, time.Minute),
		Logger: logger}, pairing.Config{Now: h.clock})
	device, err := dashboard.NewDevicePage(h.console, h.pairing, "")
	if err != nil {
		tb.Fatal(err)
	}
	handler := serveAll(h.console, device, consent)
	if h.tls {
		h.srv = httptest.NewTLSServer(handler)
	} else {
		h.srv = httptest.NewServer(handler)
	}
	tb.Cleanup(h.srv.Close)
	tb.Cleanup(h.console.CloseStreams)
	if h.base == "" {
		h.base = h.srv.URL
	}
	return h
}

// serveAll serves the console's paths, the /device pages and the
// authorization endpoints as cmd/switchboard does (withConsole), and 404
// elsewhere.
func serveAll(console, device, consent http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/dashboard" || strings.HasPrefix(p, "/dashboard/"):
			console.ServeHTTP(w, r)
		case dashboard.IsDevicePath(p):
			device.ServeHTTP(w, r)
		case dashboard.IsAuthorizePath(p):
			consent.ServeHTTP(w, r)
		default:
			http.NotFound(w, r)
		}
	})
}

func (h *harness) clock() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.now
}

// advance moves the console's clock forward.
func (h *harness) advance(d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.now = h.now.Add(d)
}

// account creates an account with an owner token and returns both.
func (h *harness) account(name string, role switchboard.Role) (*switchboard.Account, string) {
	h.t.Helper()
	ctx := context.Background()
	a := &switchboard.Account{ID: switchboard.NewID(), Name: name, Role: role}
	if err := h.db.CreateAccount(ctx, a); err != nil {
		h.t.Fatal(err)
	}
	secret, hash := switchboard.NewToken(switchboard.TokenOwner)
	if err := h.db.CreateToken(ctx, &switchboard.Token{Hash: hash, Kind: switchboard.TokenOwner, AccountID: a.ID, Label: "owner"}, false); err != nil {
		h.t.Fatal(err)
	}
	return a, secret
}

// agent creates an agent of the account.
func (h *harness) agent(acct *switchboard.Account, handle, name, description string) *switchboard.Agent {
	h.t.Helper()
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: handle, Name: name,
		Description: description, Mode: switchboard.ModeConnector, Version: "1.0.0", AcceptsTasks: true, Approved: true}
	if err := h.db.CreateAgent(context.Background(), g); err != nil {
		h.t.Fatal(err)
	}
	return g
}

// client is a browser-like HTTP client: it keeps cookies and does not
// follow redirects.
type client struct {
	h  *harness
	hc *http.Client
}

func (h *harness) client() *client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		h.t.Fatal(err)
	}
	return &client{h: h, hc: &http.Client{Jar: jar, Transport: h.srv.Client().Transport, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

// get fetches a console path.
func (c *client) get(path string) (*http.Response, string) {
	c.h.t.Helper()
	res, err := c.hc.Get(c.h.srv.URL + path)
	if err != nil {
		c.h.t.Fatal(err)
	}
	return res, readBody(c.h.t, res)
}

// post sends a form with the console's own Origin.
func (c *client) post(path string, form url.Values) (*http.Response, string) {
	c.h.t.Helper()
	return c.postFrom(c.h.base, path, form)
}

// postFrom sends a form with the given Origin ("" for none).
func (c *client) postFrom(origin, path string, form url.Values) (*http.Response, string) {
	c.h.t.Helper()
	return c.postWith(map[string]string{"Origin": origin}, path, form)
}

// postWith sends a form with the given headers (those with "" left out).
func (c *client) postWith(headers map[string]string, path string, form url.Values) (*http.Response, string) {
	c.h.t.Helper()
	req, _ := http.NewRequest("POST", c.h.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range headers {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	res, err := c.hc.Do(req)
	if err != nil {
		c.h.t.Fatal(err)
	}
	return res, readBody(c.h.t, res)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf returns the CSRF token of the page's first form.
func csrf(tb testing.TB, page string) string {
	tb.Helper()
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		tb.Fatalf("no csrf field in the page:\n%s", page)
	}
	return m[1]
}

// signIn signs in with the token and returns the agents page.
func (c *client) signIn(token string) string {
	c.h.t.Helper()
	_, form := c.get("/dashboard")
	res, body := c.post("/dashboard/login", url.Values{"csrf": {csrf(c.h.t, form)}, "token": {token}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard" {
		c.h.t.Fatalf("sign in: %s\n%s", res.Status, body)
	}
	res, page := c.get("/dashboard")
	if res.StatusCode != http.StatusOK || !strings.Contains(page, "Sign out") {
		c.h.t.Fatalf("after sign-in: %s\n%s", res.Status, page)
	}
	return page
}

func readBody(tb testing.TB, res *http.Response) string {
	tb.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}
