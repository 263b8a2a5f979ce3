package httpapi_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	assembly "github.com/switchboard-dev/switchboard/server"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/mcpauth"
	"github.com/switchboard-dev/switchboard/mcpserver"
	"github.com/switchboard-dev/switchboard/pairing"
	"github.com/switchboard-dev/switchboard/ratelimit"
)

// withMCPOAuth serves the MCP endpoints and OAuth for MCP clients, with
// the token requests counted per address on a clock that stands still
// (one window for the whole test); *oauth is set to the OAuth service.
func withMCPOAuth(oauth **mcpauth.Service) harnessOption {
	return withDeps(func(d *assembly.APIDeps) {
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

// form posts a form from the address (through the trusted loopback
// proxy).
func (h *harness) form(u, from string, f url.Values) *response {
	return h.do("POST", u, map[string]string{"Content-Type": "application/x-www-form-urlencoded", "X-Forwarded-For": from}, f.Encode())
}

// mcpCall lists the tools of an MCP endpoint with the token and returns
// the HTTP status.
func (h *harness) mcpCall(endpoint, token string) int {
	return h.do("POST", endpoint, map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json",
		"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"},
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`).status
}

// TestOAuthRevokeRateLimit: /oauth/revoke, at an address and at the root,
// counts against the client's address in one count with the token
// requests: past pairing.DefaultPollsPerMinute in a minute it answers 429
// slow_down with Retry-After, and so does the token endpoint for that
// address, while another address is served.
func TestOAuthRevokeRateLimit(t *testing.T) {
	var oauth *mcpauth.Service
	h := newHarness(t, withMCPOAuth(&oauth), withLoopbackProxy)
	addr := h.addr(h.agent("helper"))
	revoke := url.Values{"token": {"sbr_made-up"}}
	for i := range pairing.DefaultPollsPerMinute {
		u := addr + "/oauth/revoke"
		if i%2 == 1 {
			u = h.srv.URL + "/oauth/revoke"
		}
		if r := h.form(u, "198.51.100.1", revoke); r.status != http.StatusOK {
			t.Fatalf("revocation %d: %d %s", i+1, r.status, r.body)
		}
	}
	for _, u := range []string{addr + "/oauth/revoke", h.srv.URL + "/oauth/revoke"} {
		r := h.form(u, "198.51.100.1", revoke)
		wantOAuthError(t, r, http.StatusTooManyRequests, "slow_down")
		if r.header.Get("Retry-After") == "" {
			t.Fatalf("%s past the limit: no Retry-After", u)
		}
	}
	r := h.form(addr+"/oauth/token", "198.51.100.1", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"sbr_made-up"}})
	wantOAuthError(t, r, http.StatusTooManyRequests, "slow_down")
	if r := h.form(addr+"/oauth/revoke", "198.51.100.2", revoke); r.status != http.StatusOK {
		t.Fatalf("another address: %d %s", r.status, r.body)
	}
}

// TestOAuthRegisterPerAddress: registrations count per address, an IPv6
// client by its /64: ten from hosts of one /64 are taken, the eleventh is
// refused with 429, and another /64 registers.
func TestOAuthRegisterPerAddress(t *testing.T) {
	var oauth *mcpauth.Service
	h := newHarness(t, withMCPOAuth(&oauth), withLoopbackProxy)
	register := func(from string) *response {
		return h.do("POST", h.srv.URL+"/oauth/register", map[string]string{"Content-Type": "application/json", "X-Forwarded-For": from},
			`{"client_name":"c","redirect_uris":["http://127.0.0.1/callback"]}`)
	}
	for i := range mcpauth.RegistrationsPerHour {
		if r := register(fmt.Sprintf("2001:db8:1:2::%x", i+1)); r.status != http.StatusCreated {
			t.Fatalf("registration %d: %d %s", i+1, r.status, r.body)
		}
	}
	wantOAuthError(t, register("2001:db8:1:2:ffff::1"), http.StatusTooManyRequests, "slow_down")
	if r := register("2001:db8:1:3::1"); r.status != http.StatusCreated {
		t.Fatalf("another /64: %d %s", r.status, r.body)
	}
}

// TestOAuthCodeReplayRevokes: an authorization code redeemed twice at the
// agent's token endpoint answers invalid_grant the second time, and the
// MCP token of the first redemption no longer opens {address}/mcp; its
// refresh token is refused.
func TestOAuthCodeReplayRevokes(t *testing.T) {
	var oauth *mcpauth.Service
	h := newHarness(t, withMCPOAuth(&oauth), withLoopbackProxy)
	ctx := context.Background()
	g := h.agent("helper")
	addr := h.addr(g)
	client, err := oauth.Register(ctx, []byte(`{"client_name":"Claude Code","redirect_uris":["http://127.0.0.1/callback"]}`), "192.0.2.1")
	must(t, err)
	verifier := strings.Repeat("v", 43)
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {client.ID}, "redirect_uri": {"http://127.0.0.1:6000/callback"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}}
	req, err := oauth.CheckRequest(ctx, q, addr+"/mcp", "192.0.2.1")
	must(t, err)
	to, err := oauth.Approve(ctx, req, switchboard.OAuthTarget{AccountID: g.AccountID, AgentID: g.ID}, addr)
	must(t, err)
	u, err := url.Parse(to)
	must(t, err)
	redeem := url.Values{"grant_type": {"authorization_code"}, "code": {u.Query().Get("code")}, "client_id": {client.ID},
		"code_verifier": {verifier}, "redirect_uri": {"http://127.0.0.1:6000/callback"}}

	first := h.form(addr+"/oauth/token", "192.0.2.1", redeem)
	access, _ := first.json["access_token"].(string)
	refresh, _ := first.json["refresh_token"].(string)
	if first.status != http.StatusOK || access == "" || refresh == "" {
		t.Fatalf("the first redemption: %d %s", first.status, first.body)
	}
	if got := h.mcpCall(addr+"/mcp", access); got != http.StatusOK {
		t.Fatalf("the first access token at %s/mcp: HTTP %d", addr, got)
	}
	wantOAuthError(t, h.form(addr+"/oauth/token", "192.0.2.1", redeem), http.StatusBadRequest, "invalid_grant")
	if got := h.mcpCall(addr+"/mcp", access); got != http.StatusUnauthorized {
		t.Fatalf("the first access token after the code was replayed: HTTP %d, want 401", got)
	}
	wantOAuthError(t, h.form(addr+"/oauth/token", "192.0.2.1", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}),
		http.StatusBadRequest, "invalid_grant")
}
