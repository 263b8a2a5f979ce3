package facetest

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/mcpauth"
	"github.com/switchboard-dev/switchboard/mcpserver"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/ownerapi"
	"github.com/switchboard-dev/switchboard/pairing"
	"github.com/switchboard-dev/switchboard/ratelimit"
	assembly "github.com/switchboard-dev/switchboard/server"
	"github.com/switchboard-dev/switchboard/wake"
)

// AuditPage reads GET /audit with the query as token.
func (h *Harness) AuditPage(token, query string) ownerapi.AuditPage {
	h.T.Helper()
	r := h.Owner("GET", "/audit"+query, token, nil)
	if r.Status != http.StatusOK {
		h.T.Fatalf("GET /audit%s: HTTP %d: %s", query, r.Status, r.Body)
	}
	var p ownerapi.AuditPage
	Must(h.T, json.Unmarshal(r.Body, &p))
	return p
}

// The deployment of these tests is at http://sb.test: its public URL,
// which makes its own host known, so that agent domains are served. Every
// request, to sb.test or to an agent domain, reaches the loopback server
// through HostClient, as DNS pointing at the deployment would send it.
const DeploymentURL = "http://sb.test"

// NewDomain is a harness at DeploymentURL.
func NewDomain(t *testing.T, opts ...Option) *Harness {
	t.Helper()
	return New(t, append([]Option{WithConfig(func(c *httpapi.Config) { c.PublicURL = DeploymentURL })}, opts...)...)
}

// HostClient returns a client that dials the harness's listener whatever
// the URL's host (the request keeps its Host), and follows no redirect.
func (h *Harness) HostClient() *http.Client {
	addr := h.Server.Listener.Addr().String()
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	h.T.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// At sends a request to url (on any host) through HostClient.
func (h *Harness) At(method, u string, header map[string]string, body string) *Response {
	h.T.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	Must(h.T, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := h.HostClient().Do(req)
	Must(h.T, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	Must(h.T, err)
	r := &Response{Status: resp.StatusCode, Header: resp.Header, Body: data}
	_ = json.Unmarshal(data, &r.JSON)
	return r
}

// BearerTransport adds a peer token to every request.
type BearerTransport struct{ Token string }

// RoundTrip sends the request with the token as its bearer.
func (b BearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.Token)
	return http.DefaultTransport.RoundTrip(r)
}

// AuthClient is a client that sends the token as bearer on every request.
func AuthClient(token string) *http.Client {
	return &http.Client{Transport: BearerTransport{token}, Timeout: 30 * time.Second}
}

// NetAgent creates, through the owner API, an agent of the account with
// the token in the communities, and returns it with its agent token.
func (h *Harness) NetAgent(token, handle, mode, skill string, communities ...string) (*switchboard.Agent, string) {
	h.T.Helper()
	body := map[string]any{"handle": handle, "mode": mode}
	if skill != "" {
		body["skills"] = []map[string]any{{"id": skill, "name": skill, "tags": []string{"tag-" + skill}}}
	}
	if mode == "webhook" {
		body["endpoint"] = "https://hook.example/" + handle
	}
	r := h.Owner("POST", "/agents", token, body)
	if r.Status != http.StatusCreated {
		h.T.Fatalf("create %s: %d %s", handle, r.Status, r.Body)
	}
	for _, c := range communities {
		if r := h.Owner("PUT", "/agents/"+handle+"/communities/"+c, h.OperatorToken, nil); r.Status != http.StatusCreated {
			h.T.Fatalf("join %s to %s: %d %s", handle, c, r.Status, r.Body)
		}
	}
	token, _ = r.JSON["agent_token"].(string)
	return h.AgentByHandle(handle), token
}

// Live opens a session for the agent, as a connection of some instance.
func (h *Harness) Live(g *switchboard.Agent) string {
	h.T.Helper()
	holder := "conn/test/" + switchboard.NewID()
	now := time.Now()
	_, err := h.DB.OpenSession(context.Background(), &switchboard.AgentSession{AgentID: g.ID, Holder: holder, InstanceID: "test",
		ConnectedAt: now, ExpiresAt: now.Add(time.Minute)})
	Must(h.T, err)
	return holder
}

// Text is the answer's body as a string.
func (r *Response) Text() string { return string(r.Body) }

// MustJSON decodes data into v, failing the test if it is not JSON.
func MustJSON(t testing.TB, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
}

// Strings returns a decoded JSON array of strings as a []string (nil if
// it is not one).
func Strings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// WithMCPOAuth serves the MCP endpoints and OAuth for MCP clients, with
// the token requests counted per address on a clock that stands still
// (one window for the whole test); *oauth is set to the OAuth service.
func WithMCPOAuth(oauth **mcpauth.Service) Option {
	return WithDeps(func(d *assembly.APIDeps) {
		log := slog.New(slog.DiscardHandler)
		d.MCP = mcpserver.New(mcpserver.Deps{Accounts: d.Accounts, Agents: d.Agents, Tokens: d.Tokens, Tasks: d.Tasks, Outbox: d.Outbox,
			Network: d.Network, Limiter: d.Limiter, Logger: log}, mcpserver.Config{OAuth: true})
		d.OAuth = mcpauth.New(mcpauth.Deps{Store: d.Agents.(switchboard.Store), Tokens: d.Tokens, Logger: log}, mcpauth.Config{})
		*oauth = d.OAuth
		polls := ratelimit.NewMemory(pairing.DefaultPollsPerMinute, time.Minute)
		still := time.Now()
		polls.Now = func() time.Time { return still }
		d.Pairing.Polls = polls
	})
}

// PushToken is the notification token a test records a send with
// (RecordOutbound), and then presents on the pushes that answer it (Push).
const PushToken = "push-token-0123456789abcdef"

// RecordOutbound records a send of the agent through the owner API and
// returns the answer.
func (h *Harness) RecordOutbound(g *switchboard.Agent, token string, body map[string]any) map[string]any {
	h.T.Helper()
	r := h.Owner("POST", "/agents/"+g.Handle+"/outbox", token, body)
	if r.Status != http.StatusCreated {
		h.T.Fatalf("record: HTTP %d %s", r.Status, r.Body)
	}
	return r.JSON
}

// DeviceAuth asks for codes at the address with a form body.
func (h *Harness) DeviceAuth(addr string, form url.Values, header map[string]string) *Response {
	hdr := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	for k, v := range header {
		hdr[k] = v
	}
	return h.Do("POST", addr+"/oauth/device_authorization", hdr, form.Encode())
}

// WantOAuthError checks an OAuth error answer.
func WantOAuthError(t *testing.T, r *Response, status int, code string) {
	t.Helper()
	if r.Status != status || r.JSON["error"] != code {
		t.Fatalf("answer %d %s, want %d %s", r.Status, r.Body, status, code)
	}
	if r.Header.Get("Cache-Control") != "no-store" || r.Header.Get("Pragma") != "no-cache" {
		t.Fatalf("an OAuth error without no-store: %v", r.Header)
	}
}

// Push sends a push notification to the agent's push receiver.
func (h *Harness) Push(g *switchboard.Agent, header map[string]string, body string) *Response {
	h.T.Helper()
	hdr := map[string]string{"Content-Type": "application/json"}
	for k, v := range header {
		hdr[k] = v
	}
	return h.Do("POST", h.Addr(g)+"/push", hdr, body)
}

// ServeRPC runs one JSON-RPC request through the handler without a network.
func ServeRPC(h *Harness, token, body string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/a/fuzz", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	h.API.ServeHTTP(rec, req)
	return rec
}

// NewTaskID sends a new message as the peer of token and returns the id of
// the task it made.
func NewTaskID(t *testing.T, h *Harness, token string) string {
	t.Helper()
	rec := ServeRPC(h, token, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"`+switchboard.NewID()+`","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"returnImmediately":true}}}`)
	var sent struct {
		Result struct {
			Task struct {
				ID string `json:"id"`
			} `json:"task"`
		} `json:"result"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &sent); err != nil || sent.Result.Task.ID == "" {
		t.Fatalf("send: %v %s", err, rec.Body.Bytes())
	}
	return sent.Result.Task.ID
}

// WithWakes serves the wake routes, sending through a guard that reaches
// 127.0.0.1 only when loopback is set.
func WithWakes(t testing.TB, loopback bool) Option {
	return WithDeps(func(d *assembly.APIDeps) {
		bus := membus.New()
		t.Cleanup(func() { _ = bus.Close() })
		opts := netguard.Options{}
		if loopback {
			opts.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
		}
		store := d.Agents.(switchboard.Store)
		d.Wakes = wake.NewService(store, store, bus, wake.New(opts), slog.New(slog.NewTextHandler(io.Discard, nil)))
		d.Wakes.CheckTemplate = wake.CheckTemplate
		d.Wakes.AllowHTTP = opts.AllowsPlainHTTP()
	})
}
