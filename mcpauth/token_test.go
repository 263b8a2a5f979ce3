package mcpauth_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/mcpauth"
)

// TestExchangeExpiredCode: a code redeems until CodeTTL after the consent,
// not at CodeTTL.
func TestExchangeExpiredCode(t *testing.T) {
	w := newWorld(t, mcpauth.Config{}, nil)
	ctx := context.Background()
	code := w.code()
	*w.now = w.now.Add(mcpauth.CodeTTL)
	_, err := w.svc.Exchange(ctx, w.redeemForm(code), w.ep)
	wantOAuth(t, err, "invalid_grant")

	code = w.code()
	*w.now = w.now.Add(mcpauth.CodeTTL - time.Second)
	if _, err := w.svc.Exchange(ctx, w.redeemForm(code), w.ep); err != nil {
		t.Fatalf("a code a second before it expires: %v", err)
	}
}

// TestExchangeRefusals: a code is redeemed only by its client, with its
// redirect URI (when one is sent), at its endpoint (both the URL and the
// agent), for its resource, with its verifier; each refusal burns the
// code. An unknown code is invalid_grant. A request without code,
// client_id or a verifier of 43 to 128 characters is invalid_request.
func TestExchangeRefusals(t *testing.T) {
	w := newWorld(t, mcpauth.Config{}, nil)
	ctx := context.Background()
	other := w.register("Other", "192.0.2.2")
	otherAgent := w.newAgent(w.acct, "other")
	for name, tc := range map[string]struct {
		set  []string
		ep   mcpauth.Endpoint
		want string
	}{
		"OtherClient":      {set: []string{"client_id", other.ID}, ep: w.ep, want: "invalid_grant"},
		"OtherRedirect":    {set: []string{"redirect_uri", "http://127.0.0.1:6000/other"}, ep: w.ep, want: "invalid_grant"},
		"OtherEndpointURL": {ep: mcpauth.Endpoint{AgentID: w.agent.ID, Resource: "https://sb.example/a/other/mcp"}, want: "invalid_grant"},
		"OtherAgent":       {ep: mcpauth.Endpoint{AgentID: otherAgent.ID, Resource: resource}, want: "invalid_grant"},
		"AccountEndpoint":  {ep: mcpauth.Endpoint{Resource: resource}, want: "invalid_grant"},
		"OtherResource":    {set: []string{"resource", "https://sb.example/a/other/mcp"}, ep: w.ep, want: "invalid_target"},
		"WrongVerifier":    {set: []string{"code_verifier", strings.Repeat("w", 43)}, ep: w.ep, want: "invalid_grant"},
	} {
		t.Run(name, func(t *testing.T) {
			code := w.code()
			_, err := w.svc.Exchange(ctx, w.redeemForm(code, tc.set...), tc.ep)
			wantOAuth(t, err, tc.want)
			_, err = w.svc.Exchange(ctx, w.redeemForm(code), w.ep)
			wantOAuth(t, err, "invalid_grant") // burnt
		})
	}
	for name, set := range map[string][]string{
		"NoCode": {"code", ""}, "NoClient": {"client_id", ""},
		"ShortVerifier": {"code_verifier", strings.Repeat("v", 42)}, "LongVerifier": {"code_verifier", strings.Repeat("v", 129)},
	} {
		t.Run(name, func(t *testing.T) {
			code := w.code()
			_, err := w.svc.Exchange(ctx, w.redeemForm(code, set...), w.ep)
			wantOAuth(t, err, "invalid_request")
			if _, err := w.svc.Exchange(ctx, w.redeemForm(code), w.ep); err != nil {
				t.Fatalf("a code after an invalid request that did not name it: %v", err)
			}
		})
	}
	t.Run("UnknownCode", func(t *testing.T) {
		_, err := w.svc.Exchange(ctx, w.redeemForm("sbx_unknown"), w.ep)
		wantOAuth(t, err, "invalid_grant")
	})
	t.Run("ResourceWithSlash", func(t *testing.T) {
		if _, err := w.svc.Exchange(ctx, w.redeemForm(w.code(), "resource", resource+"/"), w.ep); err != nil {
			t.Fatalf("the resource with a trailing slash: %v", err)
		}
	})
}

// TestRefreshEndsOnMisuse: a refresh with another client_id, or at
// another agent's endpoint, ends the grant: its MCP token and the refresh
// token stop working. A refresh whose MCP token was revoked is refused
// and ends the grant, even when another token took the label since.
func TestRefreshEndsOnMisuse(t *testing.T) {
	w := newWorld(t, mcpauth.Config{}, nil)
	ctx := context.Background()
	otherAgent := w.newAgent(w.acct, "other")
	for name, tc := range map[string]struct {
		set []string
		ep  mcpauth.Endpoint
	}{
		"OtherClient": {set: []string{"client_id", "sbc_other"}, ep: w.ep},
		"OtherAgent":  {ep: mcpauth.Endpoint{AgentID: otherAgent.ID, Resource: "https://sb.example/a/other/mcp"}},
	} {
		t.Run(name, func(t *testing.T) {
			pair := w.grant()
			_, err := w.refresh(tc.ep, pair.RefreshToken, tc.set...)
			wantOAuth(t, err, "invalid_grant")
			if w.active(pair.AccessToken) {
				t.Fatal("the grant's MCP token still works")
			}
			_, err = w.refresh(w.ep, pair.RefreshToken)
			wantOAuth(t, err, "invalid_grant")
		})
	}
	t.Run("SameClient", func(t *testing.T) {
		pair := w.grant()
		next, err := w.refresh(w.ep, pair.RefreshToken, "client_id", w.client.ID)
		must(t, err)
		if w.active(pair.AccessToken) || !w.active(next.AccessToken) || next.Label != pair.Label {
			t.Fatalf("after a refresh: old active %v, new active %v, label %q of %q", w.active(pair.AccessToken), w.active(next.AccessToken), next.Label, pair.Label)
		}
	})
	t.Run("TokenRevoked", func(t *testing.T) {
		pair := w.grant()
		kind, label := switchboard.TokenMCP, pair.Label
		_, err := w.db.RevokeTokens(ctx, switchboard.TokenFilter{Kind: &kind, AgentID: &w.agent.ID, Label: &label})
		must(t, err)
		// The owner mints a token under the same label meanwhile.
		_, hash := switchboard.NewToken(switchboard.TokenMCP)
		must(t, w.db.CreateToken(ctx, &switchboard.Token{Hash: hash, Kind: switchboard.TokenMCP, AccountID: w.acct.ID, AgentID: w.agent.ID, Label: label}, false))
		_, err = w.refresh(w.ep, pair.RefreshToken)
		wantOAuth(t, err, "invalid_grant")
		grants, err := w.db.FindOAuthGrants(ctx, switchboard.OAuthGrantFilter{})
		must(t, err)
		for _, g := range grants {
			if g.Label == label {
				t.Fatalf("the grant of a revoked token goes on: %+v", g)
			}
		}
	})
	t.Run("NoToken", func(t *testing.T) {
		_, err := w.refresh(w.ep, "")
		wantOAuth(t, err, "invalid_request")
		_, err = w.refresh(w.ep, "sbr_unknown")
		wantOAuth(t, err, "invalid_grant")
	})
}

// TestRefreshKeepsCreatedAgent: an account MCP token that created an
// agent keeps it through a refresh, and so creates no other.
func TestRefreshKeepsCreatedAgent(t *testing.T) {
	w := newWorld(t, mcpauth.Config{}, nil)
	ctx := context.Background()
	ep := mcpauth.Endpoint{Resource: accountResource}
	code := w.codeFor(w.client, accountResource, switchboard.OAuthTarget{AccountID: w.acct.ID, Agents: []string{w.agent.ID}})
	pair, err := w.svc.Exchange(ctx, w.redeemForm(code), ep)
	must(t, err)
	created := w.newAgent(w.acct, "created")
	must(t, w.db.RecordCreatedAgent(ctx, switchboard.HashToken(pair.AccessToken), created.ID))
	next, err := w.refresh(ep, pair.RefreshToken)
	must(t, err)
	tok, err := w.db.FindTokenByHash(ctx, switchboard.HashToken(next.AccessToken))
	must(t, err)
	if tok.CreatedAgent != created.ID || !tok.MayActFor(created.ID) || !tok.MayActFor(w.agent.ID) {
		t.Fatalf("the refreshed token: %+v", tok)
	}
}

// TestRevokeEndsOnlyItsGrant: revoking either token of a grant ends it,
// and no other: not the grant of another agent, or of another account's
// account endpoint, whose token has the same label.
func TestRevokeEndsOnlyItsGrant(t *testing.T) {
	w := newWorld(t, mcpauth.Config{}, nil)
	ctx := context.Background()
	for _, by := range []string{"refresh", "access"} {
		pair := w.grant()
		token := pair.RefreshToken
		if by == "access" {
			token = pair.AccessToken
		}
		must(t, w.svc.Revoke(ctx, token))
		if w.active(pair.AccessToken) {
			t.Fatalf("revoked by its %s token: the MCP token still works", by)
		}
		_, err := w.refresh(w.ep, pair.RefreshToken)
		wantOAuth(t, err, "invalid_grant")
	}
	must(t, w.svc.Revoke(ctx, ""))
	must(t, w.svc.Revoke(ctx, "sbr_unknown"))

	// Two agents of the account, and two accounts' account endpoints,
	// each with a grant labelled mcp-claude-code.
	second := w.newAgent(w.acct, "second")
	here := w.grant()
	there, err := w.svc.Exchange(ctx, w.redeemForm(w.codeFor(w.client, "https://sb.example/a/second/mcp",
		switchboard.OAuthTarget{AccountID: w.acct.ID, AgentID: second.ID})), mcpauth.Endpoint{AgentID: second.ID, Resource: "https://sb.example/a/second/mcp"})
	must(t, err)
	bob := &switchboard.Account{ID: switchboard.NewID(), Name: "bob", Role: switchboard.RoleOwner}
	must(t, w.db.CreateAccount(ctx, bob))
	bobs := w.newAgent(bob, "desk")
	ep := mcpauth.Endpoint{Resource: accountResource}
	mine, err := w.svc.Exchange(ctx, w.redeemForm(w.codeFor(w.client, accountResource, switchboard.OAuthTarget{AccountID: w.acct.ID, Agents: []string{w.agent.ID}})), ep)
	must(t, err)
	his, err := w.svc.Exchange(ctx, w.redeemForm(w.codeFor(w.client, accountResource, switchboard.OAuthTarget{AccountID: bob.ID, Agents: []string{bobs.ID}})), ep)
	must(t, err)
	if here.Label != there.Label || mine.Label != his.Label {
		t.Fatalf("labels %q %q %q %q", here.Label, there.Label, mine.Label, his.Label)
	}
	must(t, w.svc.Revoke(ctx, here.RefreshToken))
	must(t, w.svc.Revoke(ctx, mine.RefreshToken))
	if w.active(here.AccessToken) || w.active(mine.AccessToken) {
		t.Fatal("a revoked grant's MCP token still works")
	}
	if !w.active(there.AccessToken) || !w.active(his.AccessToken) {
		t.Fatalf("a grant with the same label ended: another agent's %v, another account's %v", w.active(there.AccessToken), w.active(his.AccessToken))
	}
}

// TestApproveMaxGrants: an endpoint holds at most MaxGrants OAuth MCP
// tokens; consent beyond is refused with ECONFLICT, and room is made by
// revoking one.
func TestApproveMaxGrants(t *testing.T) {
	w := newWorld(t, mcpauth.Config{}, nil)
	ctx := context.Background()
	var last *mcpauth.TokenPair
	for range mcpauth.MaxGrants {
		last = w.grant()
	}
	req, err := w.svc.CheckRequest(ctx, request(w.client), resource, "192.0.2.1")
	must(t, err)
	tg := switchboard.OAuthTarget{AccountID: w.acct.ID, AgentID: w.agent.ID}
	if _, err := w.svc.Approve(ctx, req, tg, "https://sb.example/a/helper"); switchboard.ErrorCode(err) != switchboard.ECONFLICT {
		t.Fatalf("consent past %d grants: %v, want ECONFLICT", mcpauth.MaxGrants, err)
	}
	must(t, w.svc.Revoke(ctx, last.AccessToken))
	if _, err := w.svc.Approve(ctx, req, tg, "https://sb.example/a/helper"); err != nil {
		t.Fatalf("consent after a revocation: %v", err)
	}
}
