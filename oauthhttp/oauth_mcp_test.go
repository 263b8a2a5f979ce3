package oauthhttp_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/facetest"
	"github.com/switchboard-dev/switchboard/mcpauth"
	"github.com/switchboard-dev/switchboard/pairing"
)

// form posts a form from the address (through the trusted loopback
// proxy).
func form(h *facetest.Harness, u, from string, f url.Values) *facetest.Response {
	return h.Do("POST", u, map[string]string{"Content-Type": "application/x-www-form-urlencoded", "X-Forwarded-For": from}, f.Encode())
}

// mcpCall lists the tools of an MCP endpoint with the token and returns
// the HTTP status.
func mcpCall(h *facetest.Harness, endpoint, token string) int {
	return h.Do("POST", endpoint, map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json",
		"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"},
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`).Status
}

// TestOAuthRevokeRateLimit: /oauth/revoke, at an address and at the root,
// counts against the client's address in one count with the token
// requests: past pairing.DefaultPollsPerMinute in a minute it answers 429
// slow_down with Retry-After, and so does the token endpoint for that
// address, while another address is served.
func TestOAuthRevokeRateLimit(t *testing.T) {
	var oauth *mcpauth.Service
	h := facetest.New(t, facetest.WithMCPOAuth(&oauth), withLoopbackProxy)
	addr := h.Addr(h.Agent("helper"))
	revoke := url.Values{"token": {"sbr_made-up"}}
	for i := range pairing.DefaultPollsPerMinute {
		u := addr + "/oauth/revoke"
		if i%2 == 1 {
			u = h.Server.URL + "/oauth/revoke"
		}
		if r := form(h, u, "198.51.100.1", revoke); r.Status != http.StatusOK {
			t.Fatalf("revocation %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	for _, u := range []string{addr + "/oauth/revoke", h.Server.URL + "/oauth/revoke"} {
		r := form(h, u, "198.51.100.1", revoke)
		facetest.WantOAuthError(t, r, http.StatusTooManyRequests, "slow_down")
		if r.Header.Get("Retry-After") == "" {
			t.Fatalf("%s past the limit: no Retry-After", u)
		}
	}
	r := form(h, addr+"/oauth/token", "198.51.100.1", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"sbr_made-up"}})
	facetest.WantOAuthError(t, r, http.StatusTooManyRequests, "slow_down")
	if r := form(h, addr+"/oauth/revoke", "198.51.100.2", revoke); r.Status != http.StatusOK {
		t.Fatalf("another address: %d %s", r.Status, r.Body)
	}
}

// TestOAuthRegisterPerAddress: registrations count per address, an IPv6
// client by its /64: ten from hosts of one /64 are taken, the eleventh is
// refused with 429, and another /64 registers.
func TestOAuthRegisterPerAddress(t *testing.T) {
	var oauth *mcpauth.Service
	h := facetest.New(t, facetest.WithMCPOAuth(&oauth), withLoopbackProxy)
	register := func(from string) *facetest.Response {
		return h.Do("POST", h.Server.URL+"/oauth/register", map[string]string{"Content-Type": "application/json", "X-Forwarded-For": from},
			`{"client_name":"c","redirect_uris":["http://127.0.0.1/callback"]}`)
	}
	for i := range mcpauth.RegistrationsPerHour {
		if r := register(fmt.Sprintf("2001:db8:1:2::%x", i+1)); r.Status != http.StatusCreated {
			t.Fatalf("registration %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	facetest.WantOAuthError(t, register("2001:db8:1:2:ffff::1"), http.StatusTooManyRequests, "slow_down")
	if r := register("2001:db8:1:3::1"); r.Status != http.StatusCreated {
		t.Fatalf("another /64: %d %s", r.Status, r.Body)
	}
}

// approvedCode starts a server with MCP OAuth and an agent "helper",
// registers a client from 192.0.2.1, approves its request for the agent's
// MCP endpoint, and returns the form that redeems the code.
func approvedCode(t *testing.T) (h *facetest.Harness, g *switchboard.Agent, client *switchboard.OAuthClient, redeem url.Values) {
	t.Helper()
	var oauth *mcpauth.Service
	h = facetest.New(t, facetest.WithMCPOAuth(&oauth), withLoopbackProxy)
	ctx := context.Background()
	g = h.Agent("helper")
	addr := h.Addr(g)
	client, err := oauth.Register(ctx, []byte(`{"client_name":"Claude Code","redirect_uris":["http://127.0.0.1/callback"]}`), "192.0.2.1")
	facetest.Must(t, err)
	verifier := strings.Repeat("v", 43)
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {client.ID}, "redirect_uri": {"http://127.0.0.1:6000/callback"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}}
	req, err := oauth.CheckRequest(ctx, q, addr+"/mcp", "192.0.2.1")
	facetest.Must(t, err)
	to, err := oauth.Approve(ctx, req, switchboard.OAuthTarget{AccountID: g.AccountID, AgentID: g.ID}, addr)
	facetest.Must(t, err)
	u, err := url.Parse(to)
	facetest.Must(t, err)
	return h, g, client, url.Values{"grant_type": {"authorization_code"}, "code": {u.Query().Get("code")}, "client_id": {client.ID},
		"code_verifier": {verifier}, "redirect_uri": {"http://127.0.0.1:6000/callback"}}
}

// TestOAuthCodeReplayRevokes: an authorization code redeemed twice at the
// agent's token endpoint answers invalid_grant the second time, and the
// MCP token of the first redemption no longer opens {address}/mcp; its
// refresh token is refused.
func TestOAuthCodeReplayRevokes(t *testing.T) {
	h, g, _, redeem := approvedCode(t)
	addr := h.Addr(g)

	first := form(h, addr+"/oauth/token", "192.0.2.1", redeem)
	access, _ := first.JSON["access_token"].(string)
	refresh, _ := first.JSON["refresh_token"].(string)
	if first.Status != http.StatusOK || access == "" || refresh == "" {
		t.Fatalf("the first redemption: %d %s", first.Status, first.Body)
	}
	if got := mcpCall(h, addr+"/mcp", access); got != http.StatusOK {
		t.Fatalf("the first access token at %s/mcp: HTTP %d", addr, got)
	}
	facetest.WantOAuthError(t, form(h, addr+"/oauth/token", "192.0.2.1", redeem), http.StatusBadRequest, "invalid_grant")
	if got := mcpCall(h, addr+"/mcp", access); got != http.StatusUnauthorized {
		t.Fatalf("the first access token after the code was replayed: HTTP %d, want 401", got)
	}
	facetest.WantOAuthError(t, form(h, addr+"/oauth/token", "192.0.2.1", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}),
		http.StatusBadRequest, "invalid_grant")
}

// TestOAuthTokensAudited: an MCP token taken with a code is recorded as
// issued, and one taken with the refresh token as rotated, each by the
// MCP client from its address, in the account of the agent it opens.
func TestOAuthTokensAudited(t *testing.T) {
	h, g, client, redeem := approvedCode(t)
	addr := h.Addr(g)
	ctx := context.Background()
	first := form(h, addr+"/oauth/token", "192.0.2.1", redeem)
	refresh, _ := first.JSON["refresh_token"].(string)
	if first.Status != http.StatusOK || refresh == "" {
		t.Fatalf("the code's redemption: %d %s", first.Status, first.Body)
	}
	second := form(h, addr+"/oauth/token", "192.0.2.7", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {client.ID}})
	if second.Status != http.StatusOK {
		t.Fatalf("the refresh: %d %s", second.Status, second.Body)
	}
	page, _, err := h.DB.FindAuditEntries(ctx, switchboard.AuditFilter{Actor: client.ID})
	facetest.Must(t, err)
	want := []struct {
		action switchboard.AuditAction
		from   string
	}{{switchboard.AuditTokenRotate, "192.0.2.7"}, {switchboard.AuditTokenIssue, "192.0.2.1"}} // newest first
	if len(page) != len(want) {
		t.Fatalf("%d entries by the client, want %d: %+v", len(page), len(want), page)
	}
	for i, e := range page {
		if e.Action != want[i].action || e.ClientAddr != want[i].from || e.ActorKind != switchboard.AuditMCPClient ||
			e.AccountID != g.AccountID || e.TargetKind != "token" || !strings.HasPrefix(e.TargetID, string(switchboard.TokenMCP)) ||
			e.Detail != "agent helper, by OAuth" || e.Outcome != switchboard.AuditOK {
			t.Errorf("entry %d: %+v, want %s from %s", i, e, want[i].action, want[i].from)
		}
	}
}
