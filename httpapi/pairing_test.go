package httpapi_test

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

// deviceAuth asks for codes at the address with a form body.
func (h *harness) deviceAuth(addr string, form url.Values, header map[string]string) *response {
	hdr := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	for k, v := range header {
		hdr[k] = v
	}
	return h.do("POST", addr+"/oauth/device_authorization", hdr, form.Encode())
}

// poll asks the token endpoint once.
func (h *harness) poll(addr, deviceCode string) *response {
	return h.do("POST", addr+"/oauth/token", map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
		url.Values{"grant_type": {deviceGrant}, "device_code": {deviceCode}}.Encode())
}

// wantOAuthError checks an OAuth error answer.
func wantOAuthError(t *testing.T, r *response, status int, code string) {
	t.Helper()
	if r.status != status || r.json["error"] != code {
		t.Fatalf("answer %d %s, want %d %s", r.status, r.body, status, code)
	}
	if r.header.Get("Cache-Control") != "no-store" || r.header.Get("Pragma") != "no-cache" {
		t.Fatalf("an OAuth error without no-store: %v", r.header)
	}
}

func TestPairingHumanFlow(t *testing.T) {
	clock := newTestClock()
	h := newHarness(t, withPairing(pairing.Config{Now: clock.Now}))
	g := h.agent("alice")
	addr := h.addr(g)

	r := h.deviceAuth(addr, url.Values{"client_name": {"Barry \u202eBot\n"}, "client_id": {"barry-cli"},
		"agent_card_url": {"https://barry.example/.well-known/agent-card.json"}}, nil)
	if r.status != http.StatusOK {
		t.Fatalf("device authorization: %d %s", r.status, r.body)
	}
	code, _ := r.json["user_code"].(string)
	device, _ := r.json["device_code"].(string)
	if len(code) != 9 || code[4] != '-' || len(device) != 43 {
		t.Fatalf("codes: %s", r.body)
	}
	if r.json["verification_uri"] != addr+"/device" || r.json["verification_uri_complete"] != addr+"/device?user_code="+code ||
		r.json["expires_in"] != 600.0 || r.json["interval"] != 5.0 || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("answer: %s %v", r.body, r.header)
	}

	wantOAuthError(t, h.poll(addr, device), http.StatusBadRequest, "authorization_pending")
	clock.advance(2 * time.Second)
	r = h.poll(addr, device)
	wantOAuthError(t, r, http.StatusBadRequest, "slow_down")
	if !strings.Contains(r.json["error_description"].(string), "10 seconds") {
		t.Fatalf("slow_down does not name the new interval: %s", r.body)
	}
	clock.advance(7 * time.Second) // 7 s < 10 s: slower still
	wantOAuthError(t, h.poll(addr, device), http.StatusBadRequest, "slow_down")
	clock.advance(15 * time.Second)
	wantOAuthError(t, h.poll(addr, device), http.StatusBadRequest, "authorization_pending")

	list := h.owner("GET", "/agents/alice/pairings", h.operatorToken, nil)
	if list.status != http.StatusOK || !strings.Contains(string(list.body), code) ||
		!strings.Contains(string(list.body), `"client_name":"Barry Bot"`) {
		t.Fatalf("pending list: %d %s", list.status, list.body)
	}
	ok := h.owner("POST", "/agents/alice/pairings/"+strings.ToLower(code)+"/approve", h.operatorToken, nil)
	if ok.status != http.StatusOK || ok.json["label"] != "Barry-Bot" || ok.json["decided_by"] != "owner" {
		t.Fatalf("approve: %d %s", ok.status, ok.body)
	}
	again := h.owner("POST", "/agents/alice/pairings/"+code+"/deny", h.operatorToken, nil)
	if again.status != http.StatusConflict {
		t.Fatalf("a second decision: %d %s", again.status, again.body)
	}

	clock.advance(15 * time.Second)
	r = h.poll(addr, device)
	if r.status != http.StatusOK || r.json["token_type"] != "Bearer" || r.json["peer_label"] != "Barry-Bot" ||
		r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("redeem: %d %s %v", r.status, r.body, r.header)
	}
	token := r.json["access_token"].(string)
	if !strings.HasPrefix(token, "sbp_") {
		t.Fatalf("token %q is not a peer token", token)
	}
	wantOAuthError(t, h.poll(addr, device), http.StatusBadRequest, "invalid_grant") // single use

	// An ordinary peer token, stored by hash, under its label.
	tok, err := h.db.FindTokenByHash(context.Background(), switchboard.HashToken(token))
	if err != nil || tok.Label != "Barry-Bot" || tok.Kind != switchboard.TokenPeer || tok.AgentID != g.ID {
		t.Fatalf("stored token %+v %v", tok, err)
	}
	if call := h.rpc(addr, token, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"none"}}`, "A2A-Version", "1.0"); call.status != http.StatusOK {
		t.Fatalf("the paired token is refused: %d %s", call.status, call.body)
	}
	if rv := h.owner("DELETE", "/agents/alice/tokens/Barry-Bot", h.operatorToken, nil); rv.status != http.StatusOK {
		t.Fatalf("revoke: %d %s", rv.status, rv.body)
	}
	if call := h.rpc(addr, token, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"none"}}`); call.status != http.StatusUnauthorized {
		t.Fatalf("a revoked paired token: %d", call.status)
	}

	// The audit log has the decisions, the token the peer took, and its
	// revocation; never the device code or the token.
	var got []string
	for _, e := range h.auditPage(h.operatorToken, "").Entries {
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
	r = h.deviceAuth(addr, url.Values{"client_name": {"Barry Bot"}}, nil)
	code2 := r.json["user_code"].(string)
	if ok := h.owner("POST", "/agents/alice/pairings/"+code2+"/approve", h.operatorToken, nil); ok.json["label"] != "Barry-Bot-2" {
		t.Fatalf("label after a revocation: %s", ok.body)
	}
	// And an approved request holds its label: the next is -3.
	r = h.deviceAuth(addr, url.Values{"client_name": {"Barry Bot"}}, nil)
	if ok := h.owner("POST", "/agents/alice/pairings/"+r.json["user_code"].(string)+"/approve", h.operatorToken, nil); ok.json["label"] != "Barry-Bot-3" {
		t.Fatalf("label beside an approved request: %s", ok.body)
	}
}

func TestPairingDenyExpireAndErrors(t *testing.T) {
	clock := newTestClock()
	h := newHarness(t, withPairing(pairing.Config{Now: clock.Now}))
	g := h.agent("alice")
	addr := h.addr(g)

	r := h.deviceAuth(addr, url.Values{"client_name": {"Mallory"}}, nil)
	device, code := r.json["device_code"].(string), r.json["user_code"].(string)
	if d := h.owner("POST", "/agents/alice/pairings/"+code+"/deny", h.operatorToken, nil); d.status != http.StatusOK || d.json["status"] != "denied" {
		t.Fatalf("deny: %d %s", d.status, d.body)
	}
	wantOAuthError(t, h.poll(addr, device), http.StatusBadRequest, "access_denied")
	wantOAuthError(t, h.poll(addr, device), http.StatusBadRequest, "invalid_grant") // reported once

	r = h.deviceAuth(addr, url.Values{"client_id": {"late"}}, nil)
	device = r.json["device_code"].(string)
	clock.advance(10 * time.Minute)
	wantOAuthError(t, h.poll(addr, device), http.StatusBadRequest, "expired_token")
	if a := h.owner("POST", "/agents/alice/pairings/"+r.json["user_code"].(string)+"/approve", h.operatorToken, nil); a.status != http.StatusConflict {
		t.Fatalf("approving an expired request: %d %s", a.status, a.body)
	}
	clock.advance(time.Hour)
	wantOAuthError(t, h.poll(addr, device), http.StatusBadRequest, "expired_token")
	clock.advance(24 * time.Hour)
	h.deviceAuth(addr, url.Values{"client_id": {"sweeper"}}, nil) // a new request sweeps the old
	wantOAuthError(t, h.poll(addr, device), http.StatusBadRequest, "invalid_grant")

	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	wantOAuthError(t, h.do("POST", addr+"/oauth/token", form, "grant_type=password"), http.StatusBadRequest, "unsupported_grant_type")
	wantOAuthError(t, h.do("POST", addr+"/oauth/token", form, "grant_type="+url.QueryEscape(deviceGrant)), http.StatusBadRequest, "invalid_request")
	wantOAuthError(t, h.poll(addr, "made-up"), http.StatusBadRequest, "invalid_grant")
	wantOAuthError(t, h.do("POST", addr+"/oauth/token", map[string]string{"Content-Type": "application/json"}, `{"grant_type":1}`),
		http.StatusBadRequest, "invalid_request")
	wantOAuthError(t, h.do("POST", addr+"/oauth/token", form, strings.Repeat("a", 5000)), http.StatusBadRequest, "invalid_request")
	for _, card := range []string{"http://barry.example/card", "https://user:pw@barry.example/card", "https://" + strings.Repeat("a", 300), "barry.example"} {
		wantOAuthError(t, h.deviceAuth(addr, url.Values{"agent_card_url": {card}}, nil), http.StatusBadRequest, "invalid_request")
	}
	// A device code works only at the address that issued it.
	other := h.agent("other")
	r = h.deviceAuth(addr, url.Values{"client_id": {"x"}}, nil)
	wantOAuthError(t, h.poll(h.addr(other), r.json["device_code"].(string)), http.StatusBadRequest, "invalid_grant")
	if d := h.owner("POST", "/agents/other/pairings/"+r.json["user_code"].(string)+"/approve", h.operatorToken, nil); d.status != http.StatusNotFound {
		t.Fatalf("approving another agent's code: %d", d.status)
	}
	if d := h.owner("POST", "/agents/alice/pairings/not-a-code/approve", h.operatorToken, nil); d.status != http.StatusNotFound {
		t.Fatalf("a malformed code: %d", d.status)
	}
	if d := h.owner("POST", "/agents/alice/pairings/"+r.json["user_code"].(string)+"/approve", h.operatorToken, map[string]any{"label": "bad label!"}); d.status != http.StatusBadRequest {
		t.Fatalf("a bad label: %d", d.status)
	}
}

func TestPairingFloodControl(t *testing.T) {
	h := newHarness(t, withPairing(pairing.Config{MaxPending: 3}))
	g, other := h.agent("alice"), h.agent("other")
	for i := range 3 {
		if r := h.deviceAuth(h.addr(g), url.Values{"client_id": {"c"}}, nil); r.status != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, r.status, r.body)
		}
	}
	r := h.deviceAuth(h.addr(g), url.Values{"client_id": {"c"}}, nil)
	wantOAuthError(t, r, http.StatusTooManyRequests, "slow_down") // three pending
	if r.header.Get("Retry-After") != "600" {
		t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
	}
	if r := h.deviceAuth(h.addr(other), url.Values{"client_id": {"c"}}, nil); r.status != http.StatusOK {
		t.Fatalf("another agent: %d %s", r.status, r.body)
	}
	// Five requests from one address in ten minutes, whatever the agent
	// (a refused one is not counted).
	third := h.agent("third")
	if r := h.deviceAuth(h.addr(third), url.Values{"client_id": {"c"}}, nil); r.status != http.StatusOK {
		t.Fatalf("the fifth request: %d %s", r.status, r.body)
	}
	r = h.deviceAuth(h.addr(third), url.Values{"client_id": {"c"}}, nil)
	wantOAuthError(t, r, http.StatusTooManyRequests, "slow_down")
	if list := h.owner("GET", "/agents/third/pairings", h.operatorToken, nil); strings.Count(string(list.body), "user_code") != 1 {
		t.Fatalf("a refused request was stored: %s", list.body)
	}
}

// TestPairingFloodDeniedStillCount: a requester that denies each of its
// own requests (anyone may, on the /device page) and polls the denial
// away still has made them: the sixth in ten minutes is refused.
func TestPairingFloodDeniedStillCount(t *testing.T) {
	h := newHarness(t, withPairing(pairing.Config{}))
	g := h.agent("alice")
	addr := h.addr(g)
	for i := range 5 {
		r := h.deviceAuth(addr, url.Values{"client_id": {"loop"}}, nil)
		if r.status != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, r.status, r.body)
		}
		if d := h.owner("POST", "/agents/alice/pairings/"+r.json["user_code"].(string)+"/deny", h.operatorToken, nil); d.status != http.StatusOK {
			t.Fatalf("deny %d: %d %s", i, d.status, d.body)
		}
		wantOAuthError(t, h.poll(addr, r.json["device_code"].(string)), http.StatusBadRequest, "access_denied")
	}
	wantOAuthError(t, h.deviceAuth(addr, url.Values{"client_id": {"loop"}}, nil), http.StatusTooManyRequests, "slow_down")
}

func TestPairingPollRate(t *testing.T) {
	h := newHarness(t)
	g := h.agent("alice")
	var last *response
	for range pairing.DefaultPollsPerMinute + 1 {
		last = h.poll(h.addr(g), "made-up")
	}
	wantOAuthError(t, last, http.StatusTooManyRequests, "slow_down")
	if last.header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
}

func TestPairingRepair(t *testing.T) {
	h := newHarness(t)
	g := h.agent("alice")
	addr := h.addr(g)
	old := h.peerToken(g, "barry")
	oldPeer := h.peerOf(old).ID
	pairOnce := func(bearer string) (*response, string) {
		t.Helper()
		r := h.deviceAuth(addr, url.Values{"client_name": {"Barry"}}, map[string]string{"Authorization": "Bearer " + bearer})
		if ok := h.owner("POST", "/agents/alice/pairings/"+r.json["user_code"].(string)+"/approve", h.operatorToken, nil); ok.status != http.StatusOK {
			t.Fatalf("approve: %d %s", ok.status, ok.body)
		}
		tok := h.poll(addr, r.json["device_code"].(string))
		if tok.status != http.StatusOK {
			t.Fatalf("redeem: %d %s", tok.status, tok.body)
		}
		return r, tok.json["access_token"].(string)
	}
	r, fresh := pairOnce(old)
	if r.json["replaces_label"] != "barry" {
		t.Fatalf("a re-pairing request: %s", r.body)
	}
	getTask := `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"none"}}`
	if a, b := h.rpc(addr, old, getTask), h.rpc(addr, fresh, getTask); a.status != http.StatusUnauthorized || b.status != http.StatusOK {
		t.Fatalf("the re-paired token did not replace the old one: old %d %s, new %d %s", a.status, a.body, b.status, b.body)
	}
	if tok, _ := h.db.FindTokenByHash(context.Background(), switchboard.HashToken(fresh)); tok.Label != "barry" || tok.PeerID != oldPeer {
		t.Fatalf("re-paired token %+v: not the same peer", tok)
	}

	// A bogus bearer makes an ordinary request.
	r = h.deviceAuth(addr, url.Values{"client_name": {"Barry"}}, map[string]string{"Authorization": "Bearer sbp_bogus"})
	if _, has := r.json["replaces_label"]; has || r.status != http.StatusOK {
		t.Fatalf("a bogus bearer: %d %s", r.status, r.body)
	}

	// Rotated between the request and the redemption: a fresh label.
	r = h.deviceAuth(addr, url.Values{"client_name": {"Barry"}}, map[string]string{"Authorization": "Bearer " + fresh})
	if ok := h.owner("POST", "/agents/alice/pairings/"+r.json["user_code"].(string)+"/approve", h.operatorToken, nil); ok.json["label"] != "barry" {
		t.Fatalf("approve: %s", ok.body)
	}
	if rot := h.owner("POST", "/agents/alice/tokens", h.operatorToken, map[string]any{"label": "barry", "rotate": true}); rot.status != http.StatusCreated {
		t.Fatalf("rotate: %d %s", rot.status, rot.body)
	}
	tok := h.poll(addr, r.json["device_code"].(string))
	if tok.status != http.StatusOK || tok.json["peer_label"] == "barry" || tok.json["replaced"] == true {
		t.Fatalf("a re-pairing after a rotation took over the label: %s", tok.body)
	}

	// Revoked between the approval and the redemption: a fresh label (a
	// revoked one is not reused).
	second, label := tok.json["access_token"].(string), tok.json["peer_label"].(string)
	r = h.deviceAuth(addr, url.Values{"client_name": {"Barry"}}, map[string]string{"Authorization": "Bearer " + second})
	if ok := h.owner("POST", "/agents/alice/pairings/"+r.json["user_code"].(string)+"/approve", h.operatorToken, nil); ok.json["label"] != label {
		t.Fatalf("approve: %s", ok.body)
	}
	if rev := h.owner("DELETE", "/agents/alice/tokens/"+label, h.operatorToken, nil); rev.status/100 != 2 {
		t.Fatalf("revoke: %d %s", rev.status, rev.body)
	}
	tok = h.poll(addr, r.json["device_code"].(string))
	if tok.status != http.StatusOK || tok.json["peer_label"] == label || tok.json["replaced"] == true {
		t.Fatalf("a re-pairing after a revocation: %s", tok.body)
	}
}

func TestPairingModes(t *testing.T) {
	h := newHarness(t)
	g := h.agent("alice")
	addr := h.addr(g)
	agentSecret, hash := switchboard.NewToken(switchboard.TokenAgent)
	must(t, h.db.CreateToken(context.Background(), &switchboard.Token{Hash: hash, Kind: switchboard.TokenAgent, AgentID: g.ID}, true))

	r := h.deviceAuth(addr, url.Values{"client_name": {"Barry"}}, nil)
	code := r.json["user_code"].(string)
	if d := h.owner("POST", "/agents/alice/pairings/"+code+"/approve", agentSecret, nil); d.status != http.StatusForbidden {
		t.Fatalf("the agent approving in human mode: %d %s", d.status, d.body)
	}
	if l := h.owner("GET", "/agents/alice/pairings", agentSecret, nil); l.status != http.StatusForbidden {
		t.Fatalf("the agent listing in human mode: %d %s", l.status, l.body)
	}
	if p := h.owner("PATCH", "/agents/alice", h.operatorToken, map[string]any{"pairing": "agent"}); p.status != http.StatusOK || p.json["pairing"] != "agent" {
		t.Fatalf("PATCH pairing: %d %s", p.status, p.body)
	}
	if l := h.owner("GET", "/agents/alice/pairings", agentSecret, nil); l.status != http.StatusOK || !strings.Contains(string(l.body), code) {
		t.Fatalf("the agent listing in agent mode: %d %s", l.status, l.body)
	}
	other := h.agent("bob")
	if l := h.owner("GET", "/agents/"+other.Handle+"/pairings", agentSecret, nil); l.status != http.StatusNotFound {
		t.Fatalf("the agent listing another agent's requests: %d %s", l.status, l.body)
	}
	if d := h.owner("POST", "/agents/alice/pairings/"+code+"/approve", agentSecret, map[string]any{"label": "barry"}); d.status != http.StatusOK || d.json["decided_by"] != "agent" {
		t.Fatalf("the agent approving in agent mode: %d %s", d.status, d.body)
	}
	if p := h.owner("PATCH", "/agents/alice", h.operatorToken, map[string]any{"pairing": "sometimes"}); p.status != http.StatusBadRequest {
		t.Fatalf("a bad mode: %d", p.status)
	}

	h.deviceAuth(addr, url.Values{"client_name": {"Stale"}}, nil)
	if p := h.owner("PATCH", "/agents/alice", h.operatorToken, map[string]any{"pairing": "off"}); p.status != http.StatusOK {
		t.Fatalf("PATCH pairing off: %d", p.status)
	}
	for _, path := range []string{"/oauth/device_authorization", "/oauth/token"} {
		if r := h.do("POST", addr+path, nil, ""); r.status != http.StatusNotFound {
			t.Fatalf("%s with pairing off: %d", path, r.status)
		}
	}
	for _, path := range []string{addr + "/.well-known/oauth-authorization-server", h.srv.URL + "/.well-known/oauth-protected-resource/a/alice"} {
		if r := h.do("GET", path, nil, ""); r.status != http.StatusNotFound {
			t.Fatalf("%s with pairing off: %d", path, r.status)
		}
	}
	if list := h.owner("GET", "/agents/alice/pairings", h.operatorToken, nil); string(list.body) != "[]\n" {
		t.Fatalf("pairing off lists requests: %s", list.body)
	}
	card := h.do("GET", addr+"/.well-known/agent-card.json", nil, "")
	if strings.Contains(string(card.body), "pairing") {
		t.Fatalf("the card declares pairing while it is off: %s", card.body)
	}
	un := h.rpc(addr, "", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`)
	if un.header.Get("WWW-Authenticate") != `Bearer realm="a2a"` || strings.Contains(string(un.body), "pairing") {
		t.Fatalf("the 401 offers pairing while it is off: %v %s", un.header, un.body)
	}
}

func TestPairingDiscovery(t *testing.T) {
	h := newHarness(t, withConfig(func(c *httpapi.Config) { c.DefaultAgent = "home" }))
	g := h.agent("alice")
	addr := h.addr(g)
	for _, path := range []string{addr + "/.well-known/oauth-authorization-server", h.srv.URL + "/.well-known/oauth-authorization-server/a/alice"} {
		r := h.do("GET", path, nil, "")
		if r.status != http.StatusOK || r.json["issuer"] != addr || r.json["device_authorization_endpoint"] != addr+"/oauth/device_authorization" ||
			r.json["token_endpoint"] != addr+"/oauth/token" || !strings.Contains(string(r.body), deviceGrant) {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
	}
	for _, path := range []string{addr + "/.well-known/oauth-protected-resource", h.srv.URL + "/.well-known/oauth-protected-resource/a/alice"} {
		r := h.do("GET", path, nil, "")
		if r.status != http.StatusOK || r.json["resource"] != addr || !strings.Contains(string(r.body), `"authorization_servers":["`+addr+`"]`) {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
	}

	// The 401 says where to pair, in both shapes.
	body := `{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"x"}}`
	v03 := h.rpc(addr, "", body)
	if v03.status != http.StatusUnauthorized || path(v03.json, "error", "data", "pairing", "device_authorization_endpoint") != addr+"/oauth/device_authorization" {
		t.Fatalf("0.3 401: %s", v03.body)
	}
	v1 := h.rpc(addr, "", body, "A2A-Version", "1.0")
	if !strings.Contains(string(v1.body), `"device_authorization_endpoint":"`+addr+`/oauth/device_authorization"`) ||
		!strings.Contains(string(v1.body), "ErrorInfo") {
		t.Fatalf("1.0 401: %s", v1.body)
	}

	// The card every client reads names the endpoints in an extension; a
	// client that asks for 1.0 also gets the OAuth scheme.
	card := h.do("GET", addr+"/.well-known/agent-card.json", nil, "")
	if path(card.json, "securitySchemes", "pairing") != nil ||
		!strings.Contains(string(card.body), `"device_authorization_endpoint":"`+addr+`/oauth/device_authorization"`) {
		t.Fatalf("the union card: %s", card.body)
	}
	card = h.do("GET", addr+"/.well-known/agent-card.json", map[string]string{"A2A-Version": "1.0"}, "")
	if path(card.json, "securitySchemes", "pairing", "oauth2SecurityScheme", "flows", "deviceCode", "tokenUrl") != addr+"/oauth/token" {
		t.Fatalf("1.0 card: %s", card.body)
	}
	// 0.3 defines no device code flow: the 0.3 card declares bearer only
	// (@a2a-js/sdk refuses an OAuth scheme with no flow it knows).
	for _, hdr := range []map[string]string{nil, {"A2A-Version": "0.3"}} {
		p := "/.well-known/agent.json"
		if hdr != nil {
			p = "/.well-known/agent-card.json"
		}
		old := h.do("GET", addr+p, hdr, "")
		if path(old.json, "securitySchemes", "pairing") != nil || path(old.json, "securitySchemes", "bearer", "type") != "http" {
			t.Fatalf("0.3 card at %s: %s", p, old.body)
		}
	}

	// The default agent pairs at the root.
	h.agent("home")
	r := h.deviceAuth(h.srv.URL, url.Values{"client_name": {"Rooted"}}, nil)
	if r.status != http.StatusOK || r.json["verification_uri"] != h.srv.URL+"/device" {
		t.Fatalf("root device authorization: %d %s", r.status, r.body)
	}
	if m := h.do("GET", h.srv.URL+"/.well-known/oauth-authorization-server", nil, ""); m.json["issuer"] != h.srv.URL {
		t.Fatalf("root metadata: %s", m.body)
	}
}

// TestPairingCardParses: with the pairing extension and scheme, the cards
// still parse with both a2a-go parsers (the 0.3 card with the 0.3 one),
// and the 1.0 parser reads the device code flow of the 1.0 card.
func TestPairingCardParses(t *testing.T) {
	h := newHarness(t)
	g := h.agent("alice")
	for _, path := range []string{"/.well-known/agent-card.json", "/.well-known/agent.json", "/.well-known/agent-card.json?A2A-Version=1.0",
		"/.well-known/agent-card.json?A2A-Version=0.3"} {
		r := h.do("GET", h.addr(g)+path, nil, "")
		for name, parse := range map[string]agentcard.Parser{"v1": agentcard.DefaultCardParser, "v0": a2av0.NewAgentCardParser()} {
			if (path == "/.well-known/agent.json" || strings.HasSuffix(path, "=0.3")) && name == "v1" {
				continue // the pure 0.3 card is for 0.3 parsers
			}
			card, err := parse(r.body)
			if err != nil {
				t.Fatalf("%s with the %s parser: %v\n%s", path, name, err, r.body)
			}
			if _, ok := card.SecuritySchemes["bearer"].(a2a.HTTPAuthSecurityScheme); !ok {
				t.Fatalf("%s with the %s parser: bearer %#v", path, name, card.SecuritySchemes)
			}
			if !hasPairingExtension(card.Capabilities.Extensions, h.addr(g)) {
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
			if !ok || flow.DeviceAuthorizationURL != h.addr(g)+"/oauth/device_authorization" || flow.TokenURL != h.addr(g)+"/oauth/token" {
				t.Fatalf("pairing scheme %#v", card.SecuritySchemes["pairing"])
			}
		}
	}
	// The 0.3 card with pairing off: no extension.
	if p := h.owner("PATCH", "/agents/alice", h.operatorToken, map[string]any{"pairing": "off"}); p.status != http.StatusOK {
		t.Fatalf("PATCH pairing: %d %s", p.status, p.body)
	}
	r := h.do("GET", h.addr(g)+"/.well-known/agent.json", nil, "")
	if card, err := a2av0.NewAgentCardParser()(r.body); err != nil || hasPairingExtension(card.Capabilities.Extensions, h.addr(g)) {
		t.Fatalf("pairing off: %v %s", err, r.body)
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
	h := newHarness(t, withPairing(pairing.Config{}))
	g := h.agent("alice")
	addr := h.addr(g)
	j := h.do("GET", addr, nil, "")
	p, _ := j.json["pairing"].(map[string]any)
	if p["device_authorization_endpoint"] != addr+"/oauth/device_authorization" || p["token_endpoint"] != addr+"/oauth/token" ||
		p["verification_uri"] != addr+"/device" {
		t.Fatalf("landing JSON: %s", j.body)
	}
	html := h.do("GET", addr, map[string]string{"Accept": "text/html"}, "")
	if !strings.Contains(string(html.body), `<a href="`+addr+`/device">`) || !strings.Contains(string(html.body), "switchboard pair "+addr) {
		t.Fatalf("landing page:\n%s", html.body)
	}
	if r := h.owner("PATCH", "/agents/alice", h.operatorToken, map[string]any{"pairing": "off"}); r.status != http.StatusOK {
		t.Fatalf("PATCH: %d %s", r.status, r.body)
	}
	if j := h.do("GET", addr, nil, ""); j.json["pairing"] != nil {
		t.Fatalf("pairing off, landing JSON: %s", j.body)
	}
	if html := h.do("GET", addr, map[string]string{"Accept": "text/html"}, ""); strings.Contains(string(html.body), "/device") {
		t.Fatalf("pairing off, landing page:\n%s", html.body)
	}
}

// withLoopbackProxy trusts the test client's loopback address as a proxy:
// a request counts as the client its X-Forwarded-For names.
var withLoopbackProxy = withConfig(func(c *httpapi.Config) {
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
	h := newHarness(t, withPairing(pairing.Config{Now: clock.Now, MaxPending: 1000}), withLoopbackProxy)
	g, other := h.agent("alice"), h.agent("bob")
	client := 0
	from := func(n int) map[string]string {
		return map[string]string{"X-Forwarded-For": fmt.Sprintf("198.51.%d.%d", n/250, 1+n%250)}
	}
	ask := func(g *switchboard.Agent) *response { // each from an address of its own
		client++
		return h.deviceAuth(h.addr(g), url.Values{"client_id": {"c"}}, from(client))
	}
	again := func(n int) *response { // from the address of the nth request
		return h.deviceAuth(h.addr(g), url.Values{"client_id": {"c"}}, from(n))
	}
	for i := range pairing.DefaultMaxPerHour {
		r := ask(g)
		if r.status != http.StatusOK {
			t.Fatalf("request %d: %d %s", i+1, r.status, r.body)
		}
		if i < 3 {
			if d := h.owner("POST", "/agents/alice/pairings/"+r.json["user_code"].(string)+"/deny", h.operatorToken, nil); d.status != http.StatusOK {
				t.Fatalf("deny: %d %s", d.status, d.body)
			}
		}
		if i == 0 {
			clock.advance(30 * time.Minute) // the first in the hour's first half, the others in its second
		}
	}
	r := again(2)
	wantOAuthError(t, r, http.StatusTooManyRequests, "slow_down")
	if r.header.Get("Retry-After") != "600" || !strings.Contains(r.json["error_description"].(string), "in the last hour") {
		t.Fatalf("refused with Retry-After %q: %s", r.header.Get("Retry-After"), r.body)
	}
	if r := ask(other); r.status != http.StatusOK {
		t.Fatalf("another agent: %d %s", r.status, r.body)
	}
	list := h.owner("GET", "/agents/alice/pairings", h.operatorToken, nil)
	if n := strings.Count(string(list.body), "user_code"); n != pairing.DefaultMaxPerHour-3 {
		t.Fatalf("%d pending requests listed, want %d", n, pairing.DefaultMaxPerHour-3)
	}

	clock.advance(29 * time.Minute) // 59 minutes after the first: still full
	wantOAuthError(t, again(3), http.StatusTooManyRequests, "slow_down")
	clock.advance(2 * time.Minute) // the first is more than an hour old: one more
	if r := again(3); r.status != http.StatusOK {
		t.Fatalf("an hour after the first request: %d %s", r.status, r.body)
	}
	wantOAuthError(t, again(4), http.StatusTooManyRequests, "slow_down")
	if r := ask(g); r.status != http.StatusOK { // an address that has not asked alice
		t.Fatalf("a new address in a full hour: %d %s", r.status, r.body)
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
func withPairingWakes(t testing.TB, waker wake.Waker, wakes **wake.Service) harnessOption {
	return withDeps(func(d *assembly.APIDeps) {
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
	h := newHarness(t, withPairing(pairing.Config{MaxPending: 1, MaxPerRequester: 2, MaxPerHour: 3}), withPairingWakes(t, &recordingWaker{}, &wakes), withLoopbackProxy)
	g := h.agent("alice")
	if r := h.owner("PUT", "/agents/alice/wake", h.operatorToken, map[string]any{"url": "https://wake.example/hook"}); r.status != http.StatusOK {
		t.Fatalf("set the wake: %d %s", r.status, r.body)
	}
	ask := func(name, from string) *response {
		t.Helper()
		return h.deviceAuth(h.addr(g), url.Values{"client_name": {name}}, map[string]string{"X-Forwarded-For": from})
	}
	var want []string // the wakes' contexts and senders
	request := func(name, from string) string {
		t.Helper()
		r := ask(name, from)
		if r.status != http.StatusOK {
			t.Fatalf("%s from %s: %d %s", name, from, r.status, r.body)
		}
		code := r.json["user_code"].(string)
		want = append(want, "pairing-"+strings.ReplaceAll(code, "-", "")+" "+name)
		return code
	}
	deny := func(code string) {
		t.Helper()
		if d := h.owner("POST", "/agents/alice/pairings/"+code+"/deny", h.operatorToken, nil); d.status != http.StatusOK {
			t.Fatalf("deny: %d %s", d.status, d.body)
		}
	}
	refuse := func(name, from, why string) {
		t.Helper()
		r := ask(name, from)
		wantOAuthError(t, r, http.StatusTooManyRequests, "slow_down")
		if !strings.Contains(r.json["error_description"].(string), why) {
			t.Fatalf("%s from %s refused for %q, want %q", name, from, r.json["error_description"], why)
		}
	}

	a := request("A", "198.51.100.1")
	refuse("B", "198.51.100.1", "waiting") // A is pending, and no address holds more
	deny(a)
	deny(request("C", "198.51.100.1"))
	refuse("D", "198.51.100.1", "your address") // two from .1
	deny(request("E", "198.51.100.2"))
	refuse("F", "198.51.100.2", "last hour") // three to alice, and .2 asked already

	ws, err := h.db.FindWakes(context.Background(), g.ID, 20)
	must(t, err)
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
	h := newHarness(t, withPairing(pairing.Config{}), withPairingWakes(t, waker, &wakes))
	g := h.agent("alice")
	if r := h.owner("PUT", "/agents/alice/wake", h.operatorToken, map[string]any{"url": "https://wake.example/hook",
		"debounce_seconds": 0, "max_per_hour": 1}); r.status != http.StatusOK {
		t.Fatalf("set the wake: %d %s", r.status, r.body)
	}
	first := h.deviceAuth(h.addr(g), url.Values{"client_name": {"Barry"}}, nil)
	if first.status != http.StatusOK {
		t.Fatalf("request: %d %s", first.status, first.body)
	}
	h.send(g, h.peerToken(g, "carol"), "m-1", "hello")
	if r := h.deviceAuth(h.addr(g), url.Values{"client_name": {"Dave"}}, nil); r.status != http.StatusOK {
		t.Fatalf("the second request: %d %s", r.status, r.body)
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
	ws, err := h.db.FindWakes(context.Background(), g.ID, 20)
	must(t, err)
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
