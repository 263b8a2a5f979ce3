package oauthhttp_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/facetest"
	assembly "github.com/switchboard-dev/switchboard/server"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/pairing"
	"github.com/switchboard-dev/switchboard/wake"
)

// testClock is a clock a test moves by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func newTestClock() *testClock { return &testClock{now: time.Now().UTC()} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

const deviceGrant = "urn:ietf:params:oauth:grant-type:device_code"

// poll asks the token endpoint once.
func poll(h *facetest.Harness, addr, deviceCode string) *facetest.Response {
	return h.Do("POST", addr+"/oauth/token", map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
		url.Values{"grant_type": {deviceGrant}, "device_code": {deviceCode}}.Encode())
}

func TestPairingHumanFlow(t *testing.T) {
	clock := newTestClock()
	h := facetest.New(t, facetest.WithPairing(pairing.Config{Now: clock.Now}))
	g := h.Agent("alice")
	addr := h.Addr(g)

	r := h.DeviceAuth(addr, url.Values{"client_name": {"Barry \u202eBot\n"}, "client_id": {"barry-cli"},
		"agent_card_url": {"https://barry.example/.well-known/agent-card.json"}}, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("device authorization: %d %s", r.Status, r.Body)
	}
	code, _ := r.JSON["user_code"].(string)
	device, _ := r.JSON["device_code"].(string)
	if len(code) != 9 || code[4] != '-' || len(device) != 43 {
		t.Fatalf("codes: %s", r.Body)
	}
	if r.JSON["verification_uri"] != addr+"/device" || r.JSON["verification_uri_complete"] != addr+"/device?user_code="+code ||
		r.JSON["expires_in"] != 600.0 || r.JSON["interval"] != 5.0 || r.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("answer: %s %v", r.Body, r.Header)
	}

	facetest.WantOAuthError(t, poll(h, addr, device), http.StatusBadRequest, "authorization_pending")
	clock.advance(2 * time.Second)
	r = poll(h, addr, device)
	facetest.WantOAuthError(t, r, http.StatusBadRequest, "slow_down")
	if !strings.Contains(r.JSON["error_description"].(string), "10 seconds") {
		t.Fatalf("slow_down does not name the new interval: %s", r.Body)
	}
	clock.advance(7 * time.Second) // 7 s < 10 s: slower still
	facetest.WantOAuthError(t, poll(h, addr, device), http.StatusBadRequest, "slow_down")
	clock.advance(15 * time.Second)
	facetest.WantOAuthError(t, poll(h, addr, device), http.StatusBadRequest, "authorization_pending")

	list := h.Owner("GET", "/agents/alice/pairings", h.OperatorToken, nil)
	if list.Status != http.StatusOK || !strings.Contains(string(list.Body), code) ||
		!strings.Contains(string(list.Body), `"client_name":"Barry Bot"`) {
		t.Fatalf("pending list: %d %s", list.Status, list.Body)
	}
	ok := h.Owner("POST", "/agents/alice/pairings/"+strings.ToLower(code)+"/approve", h.OperatorToken, nil)
	if ok.Status != http.StatusOK || ok.JSON["label"] != "Barry-Bot" || ok.JSON["decided_by"] != "owner" {
		t.Fatalf("approve: %d %s", ok.Status, ok.Body)
	}
	again := h.Owner("POST", "/agents/alice/pairings/"+code+"/deny", h.OperatorToken, nil)
	if again.Status != http.StatusConflict {
		t.Fatalf("a second decision: %d %s", again.Status, again.Body)
	}

	clock.advance(15 * time.Second)
	r = poll(h, addr, device)
	if r.Status != http.StatusOK || r.JSON["token_type"] != "Bearer" || r.JSON["peer_label"] != "Barry-Bot" ||
		r.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("redeem: %d %s %v", r.Status, r.Body, r.Header)
	}
	token := r.JSON["access_token"].(string)
	if !strings.HasPrefix(token, "sbp_") {
		t.Fatalf("token %q is not a peer token", token)
	}
	facetest.WantOAuthError(t, poll(h, addr, device), http.StatusBadRequest, "invalid_grant") // single use

	// An ordinary peer token, stored by hash, under its label.
	tok, err := h.DB.FindTokenByHash(context.Background(), switchboard.HashToken(token))
	if err != nil || tok.Label != "Barry-Bot" || tok.Kind != switchboard.TokenPeer || tok.AgentID != g.ID {
		t.Fatalf("stored token %+v %v", tok, err)
	}
	if call := h.RPC(addr, token, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"none"}}`, "A2A-Version", "1.0"); call.Status != http.StatusOK {
		t.Fatalf("the paired token is refused: %d %s", call.Status, call.Body)
	}
	if rv := h.Owner("DELETE", "/agents/alice/tokens/Barry-Bot", h.OperatorToken, nil); rv.Status != http.StatusOK {
		t.Fatalf("revoke: %d %s", rv.Status, rv.Body)
	}
	if call := h.RPC(addr, token, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"none"}}`); call.Status != http.StatusUnauthorized {
		t.Fatalf("a revoked paired token: %d", call.Status)
	}

	// The audit log has the decisions, the token the peer took, and its
	// revocation; never the device code or the token.
	var got []string
	for _, e := range h.AuditPage(h.OperatorToken, "").Entries {
		got = append(got, e.Action+" "+e.Outcome+" "+e.ActorKind+" "+e.TargetID)
		if strings.Contains(e.Detail+e.TargetID, device) || strings.Contains(e.Detail+e.TargetID, token) {
			t.Fatalf("an audit entry holds a secret: %+v", e)
		}
	}
	want := []string{"token.revoke ok operator peer:Barry-Bot", "token.issue ok peer peer:Barry-Bot",
		"pairing.deny failed operator " + code, "pairing.approve ok operator " + code}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("audit log:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A revoked label is not reused: the next Barry is Barry-Bot-2.
	r = h.DeviceAuth(addr, url.Values{"client_name": {"Barry Bot"}}, nil)
	code2 := r.JSON["user_code"].(string)
	if ok := h.Owner("POST", "/agents/alice/pairings/"+code2+"/approve", h.OperatorToken, nil); ok.JSON["label"] != "Barry-Bot-2" {
		t.Fatalf("label after a revocation: %s", ok.Body)
	}
	// And an approved request holds its label: the next is -3.
	r = h.DeviceAuth(addr, url.Values{"client_name": {"Barry Bot"}}, nil)
	if ok := h.Owner("POST", "/agents/alice/pairings/"+r.JSON["user_code"].(string)+"/approve", h.OperatorToken, nil); ok.JSON["label"] != "Barry-Bot-3" {
		t.Fatalf("label beside an approved request: %s", ok.Body)
	}
}

func TestPairingDenyExpireAndErrors(t *testing.T) {
	clock := newTestClock()
	h := facetest.New(t, facetest.WithPairing(pairing.Config{Now: clock.Now}))
	g := h.Agent("alice")
	addr := h.Addr(g)

	r := h.DeviceAuth(addr, url.Values{"client_name": {"Mallory"}}, nil)
	device, code := r.JSON["device_code"].(string), r.JSON["user_code"].(string)
	if d := h.Owner("POST", "/agents/alice/pairings/"+code+"/deny", h.OperatorToken, nil); d.Status != http.StatusOK || d.JSON["status"] != "denied" {
		t.Fatalf("deny: %d %s", d.Status, d.Body)
	}
	facetest.WantOAuthError(t, poll(h, addr, device), http.StatusBadRequest, "access_denied")
	facetest.WantOAuthError(t, poll(h, addr, device), http.StatusBadRequest, "invalid_grant") // reported once

	r = h.DeviceAuth(addr, url.Values{"client_id": {"late"}}, nil)
	device = r.JSON["device_code"].(string)
	clock.advance(10 * time.Minute)
	facetest.WantOAuthError(t, poll(h, addr, device), http.StatusBadRequest, "expired_token")
	if a := h.Owner("POST", "/agents/alice/pairings/"+r.JSON["user_code"].(string)+"/approve", h.OperatorToken, nil); a.Status != http.StatusConflict {
		t.Fatalf("approving an expired request: %d %s", a.Status, a.Body)
	}
	clock.advance(time.Hour)
	facetest.WantOAuthError(t, poll(h, addr, device), http.StatusBadRequest, "expired_token")
	clock.advance(24 * time.Hour)
	h.DeviceAuth(addr, url.Values{"client_id": {"sweeper"}}, nil) // a new request sweeps the old
	facetest.WantOAuthError(t, poll(h, addr, device), http.StatusBadRequest, "invalid_grant")

	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	facetest.WantOAuthError(t, h.Do("POST", addr+"/oauth/token", form, "grant_type=password"), http.StatusBadRequest, "unsupported_grant_type")
	facetest.WantOAuthError(t, h.Do("POST", addr+"/oauth/token", form, "grant_type="+url.QueryEscape(deviceGrant)), http.StatusBadRequest, "invalid_request")
	facetest.WantOAuthError(t, poll(h, addr, "made-up"), http.StatusBadRequest, "invalid_grant")
	facetest.WantOAuthError(t, h.Do("POST", addr+"/oauth/token", map[string]string{"Content-Type": "application/json"}, `{"grant_type":1}`),
		http.StatusBadRequest, "invalid_request")
	facetest.WantOAuthError(t, h.Do("POST", addr+"/oauth/token", form, strings.Repeat("a", 5000)), http.StatusBadRequest, "invalid_request")
	for _, card := range []string{"http://barry.example/card", "https://user:pw@barry.example/card", "https://" + strings.Repeat("a", 300), "barry.example"} {
		facetest.WantOAuthError(t, h.DeviceAuth(addr, url.Values{"agent_card_url": {card}}, nil), http.StatusBadRequest, "invalid_request")
	}
	// A device code works only at the address that issued it.
	other := h.Agent("other")
	r = h.DeviceAuth(addr, url.Values{"client_id": {"x"}}, nil)
	facetest.WantOAuthError(t, poll(h, h.Addr(other), r.JSON["device_code"].(string)), http.StatusBadRequest, "invalid_grant")
	if d := h.Owner("POST", "/agents/other/pairings/"+r.JSON["user_code"].(string)+"/approve", h.OperatorToken, nil); d.Status != http.StatusNotFound {
		t.Fatalf("approving another agent's code: %d", d.Status)
	}
	if d := h.Owner("POST", "/agents/alice/pairings/not-a-code/approve", h.OperatorToken, nil); d.Status != http.StatusNotFound {
		t.Fatalf("a malformed code: %d", d.Status)
	}
	if d := h.Owner("POST", "/agents/alice/pairings/"+r.JSON["user_code"].(string)+"/approve", h.OperatorToken, map[string]any{"label": "bad label!"}); d.Status != http.StatusBadRequest {
		t.Fatalf("a bad label: %d", d.Status)
	}
}

func TestPairingFloodControl(t *testing.T) {
	h := facetest.New(t, facetest.WithPairing(pairing.Config{MaxPending: 3}))
	g, other := h.Agent("alice"), h.Agent("other")
	for i := range 3 {
		if r := h.DeviceAuth(h.Addr(g), url.Values{"client_id": {"c"}}, nil); r.Status != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, r.Status, r.Body)
		}
	}
	r := h.DeviceAuth(h.Addr(g), url.Values{"client_id": {"c"}}, nil)
	facetest.WantOAuthError(t, r, http.StatusTooManyRequests, "slow_down") // three pending
	if r.Header.Get("Retry-After") != "600" {
		t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
	}
	if r := h.DeviceAuth(h.Addr(other), url.Values{"client_id": {"c"}}, nil); r.Status != http.StatusOK {
		t.Fatalf("another agent: %d %s", r.Status, r.Body)
	}
	// Five requests from one address in ten minutes, whatever the agent
	// (a refused one is not counted).
	third := h.Agent("third")
	if r := h.DeviceAuth(h.Addr(third), url.Values{"client_id": {"c"}}, nil); r.Status != http.StatusOK {
		t.Fatalf("the fifth request: %d %s", r.Status, r.Body)
	}
	r = h.DeviceAuth(h.Addr(third), url.Values{"client_id": {"c"}}, nil)
	facetest.WantOAuthError(t, r, http.StatusTooManyRequests, "slow_down")
	if list := h.Owner("GET", "/agents/third/pairings", h.OperatorToken, nil); strings.Count(string(list.Body), "user_code") != 1 {
		t.Fatalf("a refused request was stored: %s", list.Body)
	}
}

// TestPairingFloodDeniedStillCount: a requester that denies each of its
// own requests (anyone may, on the /device page) and polls the denial
// away still has made them: the sixth in ten minutes is refused.
func TestPairingFloodDeniedStillCount(t *testing.T) {
	h := facetest.New(t, facetest.WithPairing(pairing.Config{}))
	g := h.Agent("alice")
	addr := h.Addr(g)
	for i := range 5 {
		r := h.DeviceAuth(addr, url.Values{"client_id": {"loop"}}, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, r.Status, r.Body)
		}
		if d := h.Owner("POST", "/agents/alice/pairings/"+r.JSON["user_code"].(string)+"/deny", h.OperatorToken, nil); d.Status != http.StatusOK {
			t.Fatalf("deny %d: %d %s", i, d.Status, d.Body)
		}
		facetest.WantOAuthError(t, poll(h, addr, r.JSON["device_code"].(string)), http.StatusBadRequest, "access_denied")
	}
	facetest.WantOAuthError(t, h.DeviceAuth(addr, url.Values{"client_id": {"loop"}}, nil), http.StatusTooManyRequests, "slow_down")
}

func TestPairingPollRate(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	var last *facetest.Response
	for range pairing.DefaultPollsPerMinute + 1 {
		last = poll(h, h.Addr(g), "made-up")
	}
	facetest.WantOAuthError(t, last, http.StatusTooManyRequests, "slow_down")
	if last.Header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
}

func TestPairingRepair(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	addr := h.Addr(g)
	old := h.PeerToken(g, "barry")
	oldPeer := h.PeerOf(old).ID
	pairOnce := func(bearer string) (*facetest.Response, string) {
		t.Helper()
		r := h.DeviceAuth(addr, url.Values{"client_name": {"Barry"}}, map[string]string{"Authorization": "Bearer " + bearer})
		if ok := h.Owner("POST", "/agents/alice/pairings/"+r.JSON["user_code"].(string)+"/approve", h.OperatorToken, nil); ok.Status != http.StatusOK {
			t.Fatalf("approve: %d %s", ok.Status, ok.Body)
		}
		tok := poll(h, addr, r.JSON["device_code"].(string))
		if tok.Status != http.StatusOK {
			t.Fatalf("redeem: %d %s", tok.Status, tok.Body)
		}
		return r, tok.JSON["access_token"].(string)
	}
	r, fresh := pairOnce(old)
	if r.JSON["replaces_label"] != "barry" {
		t.Fatalf("a re-pairing request: %s", r.Body)
	}
	getTask := `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"none"}}`
	if a, b := h.RPC(addr, old, getTask), h.RPC(addr, fresh, getTask); a.Status != http.StatusUnauthorized || b.Status != http.StatusOK {
		t.Fatalf("the re-paired token did not replace the old one: old %d %s, new %d %s", a.Status, a.Body, b.Status, b.Body)
	}
	if tok, _ := h.DB.FindTokenByHash(context.Background(), switchboard.HashToken(fresh)); tok.Label != "barry" || tok.PeerID != oldPeer {
		t.Fatalf("re-paired token %+v: not the same peer", tok)
	}

	// A bogus bearer makes an ordinary request.
	r = h.DeviceAuth(addr, url.Values{"client_name": {"Barry"}}, map[string]string{"Authorization": "Bearer sbp_bogus"})
	if _, has := r.JSON["replaces_label"]; has || r.Status != http.StatusOK {
		t.Fatalf("a bogus bearer: %d %s", r.Status, r.Body)
	}

	// Rotated between the request and the redemption: a fresh label.
	r = h.DeviceAuth(addr, url.Values{"client_name": {"Barry"}}, map[string]string{"Authorization": "Bearer " + fresh})
	if ok := h.Owner("POST", "/agents/alice/pairings/"+r.JSON["user_code"].(string)+"/approve", h.OperatorToken, nil); ok.JSON["label"] != "barry" {
		t.Fatalf("approve: %s", ok.Body)
	}
	if rot := h.Owner("POST", "/agents/alice/tokens", h.OperatorToken, map[string]any{"label": "barry", "rotate": true}); rot.Status != http.StatusCreated {
		t.Fatalf("rotate: %d %s", rot.Status, rot.Body)
	}
	tok := poll(h, addr, r.JSON["device_code"].(string))
	if tok.Status != http.StatusOK || tok.JSON["peer_label"] == "barry" || tok.JSON["replaced"] == true {
		t.Fatalf("a re-pairing after a rotation took over the label: %s", tok.Body)
	}

	// Revoked between the approval and the redemption: a fresh label (a
	// revoked one is not reused).
	second, label := tok.JSON["access_token"].(string), tok.JSON["peer_label"].(string)
	r = h.DeviceAuth(addr, url.Values{"client_name": {"Barry"}}, map[string]string{"Authorization": "Bearer " + second})
	if ok := h.Owner("POST", "/agents/alice/pairings/"+r.JSON["user_code"].(string)+"/approve", h.OperatorToken, nil); ok.JSON["label"] != label {
		t.Fatalf("approve: %s", ok.Body)
	}
	if rev := h.Owner("DELETE", "/agents/alice/tokens/"+label, h.OperatorToken, nil); rev.Status/100 != 2 {
		t.Fatalf("revoke: %d %s", rev.Status, rev.Body)
	}
	tok = poll(h, addr, r.JSON["device_code"].(string))
	if tok.Status != http.StatusOK || tok.JSON["peer_label"] == label || tok.JSON["replaced"] == true {
		t.Fatalf("a re-pairing after a revocation: %s", tok.Body)
	}
}

func TestPairingModes(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	addr := h.Addr(g)
	agentSecret, hash := switchboard.NewToken(switchboard.TokenAgent)
	facetest.Must(t, h.DB.CreateToken(context.Background(), &switchboard.Token{Hash: hash, Kind: switchboard.TokenAgent, AgentID: g.ID}, true))

	r := h.DeviceAuth(addr, url.Values{"client_name": {"Barry"}}, nil)
	code := r.JSON["user_code"].(string)
	if d := h.Owner("POST", "/agents/alice/pairings/"+code+"/approve", agentSecret, nil); d.Status != http.StatusForbidden {
		t.Fatalf("the agent approving in human mode: %d %s", d.Status, d.Body)
	}
	if l := h.Owner("GET", "/agents/alice/pairings", agentSecret, nil); l.Status != http.StatusForbidden {
		t.Fatalf("the agent listing in human mode: %d %s", l.Status, l.Body)
	}
	if p := h.Owner("PATCH", "/agents/alice", h.OperatorToken, map[string]any{"pairing": "agent"}); p.Status != http.StatusOK || p.JSON["pairing"] != "agent" {
		t.Fatalf("PATCH pairing: %d %s", p.Status, p.Body)
	}
	if l := h.Owner("GET", "/agents/alice/pairings", agentSecret, nil); l.Status != http.StatusOK || !strings.Contains(string(l.Body), code) {
		t.Fatalf("the agent listing in agent mode: %d %s", l.Status, l.Body)
	}
	other := h.Agent("bob")
	if l := h.Owner("GET", "/agents/"+other.Handle+"/pairings", agentSecret, nil); l.Status != http.StatusNotFound {
		t.Fatalf("the agent listing another agent's requests: %d %s", l.Status, l.Body)
	}
	if d := h.Owner("POST", "/agents/alice/pairings/"+code+"/approve", agentSecret, map[string]any{"label": "barry"}); d.Status != http.StatusOK || d.JSON["decided_by"] != "agent" {
		t.Fatalf("the agent approving in agent mode: %d %s", d.Status, d.Body)
	}
	if p := h.Owner("PATCH", "/agents/alice", h.OperatorToken, map[string]any{"pairing": "sometimes"}); p.Status != http.StatusBadRequest {
		t.Fatalf("a bad mode: %d", p.Status)
	}

	h.DeviceAuth(addr, url.Values{"client_name": {"Stale"}}, nil)
	if p := h.Owner("PATCH", "/agents/alice", h.OperatorToken, map[string]any{"pairing": "off"}); p.Status != http.StatusOK {
		t.Fatalf("PATCH pairing off: %d", p.Status)
	}
	for _, path := range []string{"/oauth/device_authorization", "/oauth/token"} {
		if r := h.Do("POST", addr+path, nil, ""); r.Status != http.StatusNotFound {
			t.Fatalf("%s with pairing off: %d", path, r.Status)
		}
	}
	for _, path := range []string{addr + "/.well-known/oauth-authorization-server", h.Server.URL + "/.well-known/oauth-protected-resource/a/alice"} {
		if r := h.Do("GET", path, nil, ""); r.Status != http.StatusNotFound {
			t.Fatalf("%s with pairing off: %d", path, r.Status)
		}
	}
	if list := h.Owner("GET", "/agents/alice/pairings", h.OperatorToken, nil); string(list.Body) != "[]\n" {
		t.Fatalf("pairing off lists requests: %s", list.Body)
	}
	card := h.Do("GET", addr+"/.well-known/agent-card.json", nil, "")
	if strings.Contains(string(card.Body), "pairing") {
		t.Fatalf("the card declares pairing while it is off: %s", card.Body)
	}
	un := h.RPC(addr, "", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`)
	if un.Header.Get("WWW-Authenticate") != `Bearer realm="a2a"` || strings.Contains(string(un.Body), "pairing") {
		t.Fatalf("the 401 offers pairing while it is off: %v %s", un.Header, un.Body)
	}
}

func TestPairingDiscovery(t *testing.T) {
	h := facetest.New(t, facetest.WithConfig(func(c *httpapi.Config) { c.DefaultAgent = "home" }))
	g := h.Agent("alice")
	addr := h.Addr(g)
	for _, path := range []string{addr + "/.well-known/oauth-authorization-server", h.Server.URL + "/.well-known/oauth-authorization-server/a/alice"} {
		r := h.Do("GET", path, nil, "")
		if r.Status != http.StatusOK || r.JSON["issuer"] != addr || r.JSON["device_authorization_endpoint"] != addr+"/oauth/device_authorization" ||
			r.JSON["token_endpoint"] != addr+"/oauth/token" || !strings.Contains(string(r.Body), deviceGrant) {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
	}
	for _, path := range []string{addr + "/.well-known/oauth-protected-resource", h.Server.URL + "/.well-known/oauth-protected-resource/a/alice"} {
		r := h.Do("GET", path, nil, "")
		if r.Status != http.StatusOK || r.JSON["resource"] != addr || !strings.Contains(string(r.Body), `"authorization_servers":["`+addr+`"]`) {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
	}

	// The 401 says where to pair, in both shapes.
	body := `{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"x"}}`
	v03 := h.RPC(addr, "", body)
	if v03.Status != http.StatusUnauthorized || facetest.Path(v03.JSON, "error", "data", "pairing", "device_authorization_endpoint") != addr+"/oauth/device_authorization" {
		t.Fatalf("0.3 401: %s", v03.Body)
	}
	v1 := h.RPC(addr, "", body, "A2A-Version", "1.0")
	if !strings.Contains(string(v1.Body), `"device_authorization_endpoint":"`+addr+`/oauth/device_authorization"`) ||
		!strings.Contains(string(v1.Body), "ErrorInfo") {
		t.Fatalf("1.0 401: %s", v1.Body)
	}

	// The card every client reads names the endpoints in an extension; a
	// client that asks for 1.0 also gets the OAuth scheme.
	card := h.Do("GET", addr+"/.well-known/agent-card.json", nil, "")
	if facetest.Path(card.JSON, "securitySchemes", "pairing") != nil ||
		!strings.Contains(string(card.Body), `"device_authorization_endpoint":"`+addr+`/oauth/device_authorization"`) {
		t.Fatalf("the union card: %s", card.Body)
	}
	card = h.Do("GET", addr+"/.well-known/agent-card.json", map[string]string{"A2A-Version": "1.0"}, "")
	if facetest.Path(card.JSON, "securitySchemes", "pairing", "oauth2SecurityScheme", "flows", "deviceCode", "tokenUrl") != addr+"/oauth/token" {
		t.Fatalf("1.0 card: %s", card.Body)
	}
	// 0.3 defines no device code flow: the 0.3 card declares bearer only
	// (@a2a-js/sdk refuses an OAuth scheme with no flow it knows).
	for _, hdr := range []map[string]string{nil, {"A2A-Version": "0.3"}} {
		p := "/.well-known/agent.json"
		if hdr != nil {
			p = "/.well-known/agent-card.json"
		}
		old := h.Do("GET", addr+p, hdr, "")
		if facetest.Path(old.JSON, "securitySchemes", "pairing") != nil || facetest.Path(old.JSON, "securitySchemes", "bearer", "type") != "http" {
			t.Fatalf("0.3 card at %s: %s", p, old.Body)
		}
	}

	// The default agent pairs at the root.
	h.Agent("home")
	r := h.DeviceAuth(h.Server.URL, url.Values{"client_name": {"Rooted"}}, nil)
	if r.Status != http.StatusOK || r.JSON["verification_uri"] != h.Server.URL+"/device" {
		t.Fatalf("root device authorization: %d %s", r.Status, r.Body)
	}
	if m := h.Do("GET", h.Server.URL+"/.well-known/oauth-authorization-server", nil, ""); m.JSON["issuer"] != h.Server.URL {
		t.Fatalf("root metadata: %s", m.Body)
	}
}

// TestPairingCardParses: with the pairing extension and scheme, the cards
// still parse with both a2a-go parsers (the 0.3 card with the 0.3 one),
// and the 1.0 parser reads the device code flow of the 1.0 card.
func TestPairingCardParses(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	for _, path := range []string{"/.well-known/agent-card.json", "/.well-known/agent.json", "/.well-known/agent-card.json?A2A-Version=1.0",
		"/.well-known/agent-card.json?A2A-Version=0.3"} {
		r := h.Do("GET", h.Addr(g)+path, nil, "")
		for name, parse := range map[string]agentcard.Parser{"v1": agentcard.DefaultCardParser, "v0": a2av0.NewAgentCardParser()} {
			if (path == "/.well-known/agent.json" || strings.HasSuffix(path, "=0.3")) && name == "v1" {
				continue // the pure 0.3 card is for 0.3 parsers
			}
			card, err := parse(r.Body)
			if err != nil {
				t.Fatalf("%s with the %s parser: %v\n%s", path, name, err, r.Body)
			}
			if _, ok := card.SecuritySchemes["bearer"].(a2a.HTTPAuthSecurityScheme); !ok {
				t.Fatalf("%s with the %s parser: bearer %#v", path, name, card.SecuritySchemes)
			}
			if !hasPairingExtension(card.Capabilities.Extensions, h.Addr(g)) {
				t.Fatalf("%s with the %s parser: no pairing extension in %#v", path, name, card.Capabilities.Extensions)
			}
			asked := path == "/.well-known/agent-card.json?A2A-Version=1.0"
			if _, has := card.SecuritySchemes["pairing"]; has != asked {
				t.Fatalf("%s with the %s parser: pairing scheme %v, want %v", path, name, has, asked)
			}
			if !asked || name != "v1" {
				continue
			}
			oauth, ok := card.SecuritySchemes["pairing"].(a2a.OAuth2SecurityScheme)
			flow, _ := oauth.Flows.(a2a.DeviceCodeOAuthFlow)
			if !ok || flow.DeviceAuthorizationURL != h.Addr(g)+"/oauth/device_authorization" || flow.TokenURL != h.Addr(g)+"/oauth/token" {
				t.Fatalf("pairing scheme %#v", card.SecuritySchemes["pairing"])
			}
		}
	}
	// The 0.3 card with pairing off: no extension.
	if p := h.Owner("PATCH", "/agents/alice", h.OperatorToken, map[string]any{"pairing": "off"}); p.Status != http.StatusOK {
		t.Fatalf("PATCH pairing: %d %s", p.Status, p.Body)
	}
	r := h.Do("GET", h.Addr(g)+"/.well-known/agent.json", nil, "")
	if card, err := a2av0.NewAgentCardParser()(r.Body); err != nil || hasPairingExtension(card.Capabilities.Extensions, h.Addr(g)) {
		t.Fatalf("pairing off: %v %s", err, r.Body)
	}
}

// hasPairingExtension reports whether extensions hold the pairing
// extension naming the endpoints of the address addr.
func hasPairingExtension(extensions []a2a.AgentExtension, addr string) bool {
	for _, e := range extensions {
		if strings.HasSuffix(e.URI, "/docs/pairing.md") && e.Params["device_authorization_endpoint"] == addr+"/oauth/device_authorization" &&
			e.Params["token_endpoint"] == addr+"/oauth/token" &&
			e.Params["authorization_server_metadata"] == addr+"/.well-known/oauth-authorization-server" {
			return true
		}
	}
	return false
}

// TestPairingLanding: the landing page of an agent that takes pairing
// requests names the device flow's endpoints (JSON) and links to the
// pairing page (HTML); with pairing off, neither.
func TestPairingLanding(t *testing.T) {
	h := facetest.New(t, facetest.WithPairing(pairing.Config{}))
	g := h.Agent("alice")
	addr := h.Addr(g)
	j := h.Do("GET", addr, nil, "")
	p, _ := j.JSON["pairing"].(map[string]any)
	if p["device_authorization_endpoint"] != addr+"/oauth/device_authorization" || p["token_endpoint"] != addr+"/oauth/token" ||
		p["verification_uri"] != addr+"/device" {
		t.Fatalf("landing JSON: %s", j.Body)
	}
	html := h.Do("GET", addr, map[string]string{"Accept": "text/html"}, "")
	if !strings.Contains(string(html.Body), `<a href="`+addr+`/device">`) || !strings.Contains(string(html.Body), "switchboard pair "+addr) {
		t.Fatalf("landing page:\n%s", html.Body)
	}
	if r := h.Owner("PATCH", "/agents/alice", h.OperatorToken, map[string]any{"pairing": "off"}); r.Status != http.StatusOK {
		t.Fatalf("PATCH: %d %s", r.Status, r.Body)
	}
	if j := h.Do("GET", addr, nil, ""); j.JSON["pairing"] != nil {
		t.Fatalf("pairing off, landing JSON: %s", j.Body)
	}
	if html := h.Do("GET", addr, map[string]string{"Accept": "text/html"}, ""); strings.Contains(string(html.Body), "/device") {
		t.Fatalf("pairing off, landing page:\n%s", html.Body)
	}
}

// withLoopbackProxy trusts the test client's loopback address as a proxy:
// a request counts as the client its X-Forwarded-For names.
var withLoopbackProxy = facetest.WithConfig(func(c *httpapi.Config) {
	c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
})

// TestPairingHourlyLimit: an agent takes pairing.DefaultMaxPerHour requests
// in any hour, from any number of addresses; the next from an address
// that asked it in that hour is refused with 429 slow_down and
// Retry-After, also after the owner denied some (a decision does not give
// a request back), while another agent still takes requests, and so does
// this one from an address that has not asked it that hour; an hour after
// the first ones, it takes requests again.
func TestPairingHourlyLimit(t *testing.T) {
	clock := newTestClock()
	h := facetest.New(t, facetest.WithPairing(pairing.Config{Now: clock.Now, MaxPending: 1000}), withLoopbackProxy)
	g, other := h.Agent("alice"), h.Agent("bob")
	client := 0
	from := func(n int) map[string]string {
		return map[string]string{"X-Forwarded-For": fmt.Sprintf("198.51.%d.%d", n/250, 1+n%250)}
	}
	ask := func(g *switchboard.Agent) *facetest.Response { // each from an address of its own
		client++
		return h.DeviceAuth(h.Addr(g), url.Values{"client_id": {"c"}}, from(client))
	}
	again := func(n int) *facetest.Response { // from the address of the nth request
		return h.DeviceAuth(h.Addr(g), url.Values{"client_id": {"c"}}, from(n))
	}
	for i := range pairing.DefaultMaxPerHour {
		r := ask(g)
		if r.Status != http.StatusOK {
			t.Fatalf("request %d: %d %s", i+1, r.Status, r.Body)
		}
		if i < 3 {
			if d := h.Owner("POST", "/agents/alice/pairings/"+r.JSON["user_code"].(string)+"/deny", h.OperatorToken, nil); d.Status != http.StatusOK {
				t.Fatalf("deny: %d %s", d.Status, d.Body)
			}
		}
		if i == 0 {
			clock.advance(30 * time.Minute) // the first in the hour's first half, the others in its second
		}
	}
	r := again(2)
	facetest.WantOAuthError(t, r, http.StatusTooManyRequests, "slow_down")
	if r.Header.Get("Retry-After") != "600" || !strings.Contains(r.JSON["error_description"].(string), "in the last hour") {
		t.Fatalf("refused with Retry-After %q: %s", r.Header.Get("Retry-After"), r.Body)
	}
	if r := ask(other); r.Status != http.StatusOK {
		t.Fatalf("another agent: %d %s", r.Status, r.Body)
	}
	list := h.Owner("GET", "/agents/alice/pairings", h.OperatorToken, nil)
	if n := strings.Count(string(list.Body), "user_code"); n != pairing.DefaultMaxPerHour-3 {
		t.Fatalf("%d pending requests listed, want %d", n, pairing.DefaultMaxPerHour-3)
	}

	clock.advance(29 * time.Minute) // 59 minutes after the first: still full
	facetest.WantOAuthError(t, again(3), http.StatusTooManyRequests, "slow_down")
	clock.advance(2 * time.Minute) // the first is more than an hour old: one more
	if r := again(3); r.Status != http.StatusOK {
		t.Fatalf("an hour after the first request: %d %s", r.Status, r.Body)
	}
	facetest.WantOAuthError(t, again(4), http.StatusTooManyRequests, "slow_down")
	if r := ask(g); r.Status != http.StatusOK { // an address that has not asked alice
		t.Fatalf("a new address in a full hour: %d %s", r.Status, r.Body)
	}
}

// recordingWaker answers every wake 202 and keeps what it was sent.
type recordingWaker struct {
	mu    sync.Mutex
	wakes []switchboard.Wake
}

func (r *recordingWaker) Wake(_ context.Context, _ *switchboard.Agent, _ *switchboard.WakeConfig, w *switchboard.Wake) (*wake.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.wakes = append(r.wakes, *w)
	return &wake.Result{Status: http.StatusAccepted}, nil
}

func (r *recordingWaker) sent() []switchboard.Wake {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.wakes)
}

// withPairingWakes serves the wake routes, sends wakes to waker, and
// queues a pairing_request wake for each new pairing request, as cmd
// does; *wakes is set to the wake service.
func withPairingWakes(t testing.TB, waker wake.Waker, wakes **wake.Service) facetest.Option {
	return facetest.WithDeps(func(d *assembly.APIDeps) {
		bus := membus.New()
		t.Cleanup(func() { _ = bus.Close() })
		store := d.Agents.(switchboard.Store)
		ws := wake.NewService(store, store, bus, waker, slog.New(slog.DiscardHandler))
		d.Wakes, *wakes = ws, ws
		d.Pairing.OnRequest = func(ctx context.Context, _ *switchboard.Agent, p *switchboard.Pairing) error {
			_, err := ws.Enqueue(ctx, pairing.WakeRequest(p))
			return err
		}
	})
}

// TestPairingRefusedRequestWakesNoOne: a request refused with 429, for
// any of the limits (too many pending, too many from the address, too many
// in the hour), queues no pairing_request wake; each accepted one queues
// one.
func TestPairingRefusedRequestWakesNoOne(t *testing.T) {
	var wakes *wake.Service
	h := facetest.New(t, facetest.WithPairing(pairing.Config{MaxPending: 1, MaxPerRequester: 2, MaxPerHour: 3}), withPairingWakes(t, &recordingWaker{}, &wakes), withLoopbackProxy)
	g := h.Agent("alice")
	if r := h.Owner("PUT", "/agents/alice/wake", h.OperatorToken, map[string]any{"url": "https://wake.example/hook"}); r.Status != http.StatusOK {
		t.Fatalf("set the wake: %d %s", r.Status, r.Body)
	}
	ask := func(name, from string) *facetest.Response {
		t.Helper()
		return h.DeviceAuth(h.Addr(g), url.Values{"client_name": {name}}, map[string]string{"X-Forwarded-For": from})
	}
	var want []string // the wakes' contexts and senders
	request := func(name, from string) string {
		t.Helper()
		r := ask(name, from)
		if r.Status != http.StatusOK {
			t.Fatalf("%s from %s: %d %s", name, from, r.Status, r.Body)
		}
		code := r.JSON["user_code"].(string)
		want = append(want, "pairing-"+strings.ReplaceAll(code, "-", "")+" "+name)
		return code
	}
	deny := func(code string) {
		t.Helper()
		if d := h.Owner("POST", "/agents/alice/pairings/"+code+"/deny", h.OperatorToken, nil); d.Status != http.StatusOK {
			t.Fatalf("deny: %d %s", d.Status, d.Body)
		}
	}
	refuse := func(name, from, why string) {
		t.Helper()
		r := ask(name, from)
		facetest.WantOAuthError(t, r, http.StatusTooManyRequests, "slow_down")
		if !strings.Contains(r.JSON["error_description"].(string), why) {
			t.Fatalf("%s from %s refused for %q, want %q", name, from, r.JSON["error_description"], why)
		}
	}

	a := request("A", "198.51.100.1")
	refuse("B", "198.51.100.1", "waiting") // A is pending, and no address holds more
	deny(a)
	deny(request("C", "198.51.100.1"))
	refuse("D", "198.51.100.1", "your address") // two from .1
	deny(request("E", "198.51.100.2"))
	refuse("F", "198.51.100.2", "last hour") // three to alice, and .2 asked already

	ws, err := h.DB.FindWakes(context.Background(), g.ID, 20)
	facetest.Must(t, err)
	var got []string
	for _, w := range ws {
		if w.Kind != switchboard.WakePairingRequest || w.Count != 1 {
			t.Fatalf("wake %+v", w)
		}
		got = append(got, w.ContextID+" "+w.From)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("wakes %v, want one for each accepted request: %v", got, want)
	}
}

// TestPairingWakeCountsInWakeCap: a pairing_request wake is sent within the
// agent's hourly wake cap like any other wake: with a cap of one, once it
// is sent, a peer's message waits for the next hour, and so does the wake
// of the next pairing request.
func TestPairingWakeCountsInWakeCap(t *testing.T) {
	var wakes *wake.Service
	waker := &recordingWaker{}
	h := facetest.New(t, facetest.WithPairing(pairing.Config{}), withPairingWakes(t, waker, &wakes))
	g := h.Agent("alice")
	if r := h.Owner("PUT", "/agents/alice/wake", h.OperatorToken, map[string]any{"url": "https://wake.example/hook",
		"debounce_seconds": 0, "max_per_hour": 1}); r.Status != http.StatusOK {
		t.Fatalf("set the wake: %d %s", r.Status, r.Body)
	}
	first := h.DeviceAuth(h.Addr(g), url.Values{"client_name": {"Barry"}}, nil)
	if first.Status != http.StatusOK {
		t.Fatalf("request: %d %s", first.Status, first.Body)
	}
	h.Send(g, h.PeerToken(g, "carol"), "m-1", "hello")
	if r := h.DeviceAuth(h.Addr(g), url.Values{"client_name": {"Dave"}}, nil); r.Status != http.StatusOK {
		t.Fatalf("the second request: %d %s", r.Status, r.Body)
	}

	// One pass of the sender sees all three due, in the order they came.
	before := time.Now()
	if n, err := wakes.SendDue(context.Background(), wake.SenderConfig{}); err != nil || n != 1 {
		t.Fatalf("SendDue claimed %d: %v", n, err)
	}
	sent := waker.sent()
	if len(sent) != 1 || sent[0].Kind != switchboard.WakePairingRequest || sent[0].From != "Barry" {
		t.Fatalf("sent %+v", sent)
	}
	ws, err := h.DB.FindWakes(context.Background(), g.ID, 20)
	facetest.Must(t, err)
	held := map[switchboard.WakeKind]string{}
	for _, w := range ws {
		if w.State == switchboard.WakeSent {
			continue
		}
		next := before.Truncate(time.Hour).Add(time.Hour)
		if w.State != switchboard.WakePending || w.LastError != "the hourly cap is used up" || w.DueAt.Before(next) {
			t.Fatalf("a wake over the cap: %+v (due at %v, the next hour starts at %v)", w, w.DueAt, next)
		}
		held[w.Kind] = w.From
	}
	if len(ws) != 3 || held[switchboard.WakeInbound] != "carol" || held[switchboard.WakePairingRequest] != "Dave" {
		t.Fatalf("wakes %+v", ws)
	}
}
