package pairing_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/pairing"
)

// TestAuthorizeRepairing: a request is a re-pairing only when it presents
// an active peer token of the same agent; another agent's peer token, an
// agent's other kind of token or a revoked one makes a new pairing. A
// re-pairing approved under its token's label replaces that token; under
// another label, the token stays.
func TestAuthorizeRepairing(t *testing.T) {
	w := newWorld(t, pairing.Config{}, 60)
	ctx := context.Background()
	other := w.newAgent("other")
	mcp, mcpHash := switchboard.NewToken(switchboard.TokenMCP)
	must(t, w.db.CreateToken(ctx, &switchboard.Token{Hash: mcpHash, Kind: switchboard.TokenMCP, AccountID: w.acct.ID, AgentID: w.agent.ID, Label: "mcp"}, false))
	revoked := w.peerToken(w.agent, "gone")
	kind, label := switchboard.TokenPeer, "gone"
	_, err := w.db.RevokeTokens(ctx, switchboard.TokenFilter{Kind: &kind, AgentID: &w.agent.ID, Label: &label})
	must(t, err)
	for name, bearer := range map[string]string{"OtherAgent": w.peerToken(other, "theirs"), "MCPToken": mcp, "Revoked": revoked, "Made-up": "sbp_nope"} {
		g, err := w.svc.Authorize(ctx, w.agent, pairing.Request{ClientName: "x", Requester: "192.0.2." + name, Bearer: bearer})
		must(t, err)
		if g.ReplacesLabel != "" {
			t.Fatalf("%s: a re-pairing of %q", name, g.ReplacesLabel)
		}
	}

	redeem := func(label string) (old string, tok *pairing.Token) {
		t.Helper()
		old = w.peerToken(w.agent, "mine-"+label)
		g, err := w.svc.Authorize(ctx, w.agent, pairing.Request{ClientName: "x", Requester: "192.0.2.9", Bearer: old})
		must(t, err)
		if g.ReplacesLabel != "mine-"+label {
			t.Fatalf("a re-pairing replaces %q", g.ReplacesLabel)
		}
		if label == "same" {
			label = ""
		}
		_, err = w.svc.Approve(ctx, w.agent, g.UserCode, label, pairing.ByOwner)
		must(t, err)
		tok, err = w.svc.Redeem(ctx, w.agent, g.DeviceCode, "192.0.2.9")
		must(t, err)
		return old, tok
	}
	old, tok := redeem("same")
	if _, err := w.db.FindTokenByHash(ctx, switchboard.HashToken(old)); switchboard.ErrorCode(err) != switchboard.ENOTFOUND || !tok.Replaced || tok.Label != "mine-same" {
		t.Fatalf("re-paired under its label: the old token %v, the new %+v", err, tok)
	}
	old, tok = redeem("elsewhere")
	if _, err := w.db.FindTokenByHash(ctx, switchboard.HashToken(old)); err != nil || tok.Replaced || tok.Label != "elsewhere" {
		t.Fatalf("re-paired under another label: the old token %v, the new %+v", err, tok)
	}
}

// TestRedeemRepairingEnds: the redemption of a re-pairing that replaces
// its token ends the old token's streams (a hint on the agent's tokens
// subject); when the old token was revoked before the redemption, the new
// one gets a fresh label and replaces nothing.
func TestRedeemRepairingEnds(t *testing.T) {
	w := newWorld(t, pairing.Config{}, 60)
	ctx := context.Background()
	watch, err := w.bus.Watch(ctx, switchboard.TokensSubject(w.agent.ID))
	must(t, err)
	defer watch.Close()
	approved := func(label string) (old string, g *pairing.Grant) {
		t.Helper()
		old = w.peerToken(w.agent, label)
		g, err := w.svc.Authorize(ctx, w.agent, pairing.Request{ClientName: "x", Requester: "192.0.2." + label, Bearer: old})
		must(t, err)
		_, err = w.svc.Approve(ctx, w.agent, g.UserCode, "", pairing.ByOwner)
		must(t, err)
		return old, g
	}

	_, g := approved("kept")
	tok, err := w.svc.Redeem(ctx, w.agent, g.DeviceCode, "192.0.2.1")
	must(t, err)
	select {
	case <-watch.C():
	default:
		t.Fatalf("a re-pairing replaced %+v and hinted nothing", tok)
	}

	old, g := approved("gone")
	kind, label := switchboard.TokenPeer, "gone"
	_, err = w.db.RevokeTokens(ctx, switchboard.TokenFilter{Kind: &kind, AgentID: &w.agent.ID, Label: &label})
	must(t, err)
	tok, err = w.svc.Redeem(ctx, w.agent, g.DeviceCode, "192.0.2.1")
	must(t, err)
	if tok.Replaced || tok.Label != "gone-2" {
		t.Fatalf("a re-pairing whose token was revoked meanwhile: %+v", tok)
	}
	if _, err := w.db.FindTokenByHash(ctx, switchboard.HashToken(old)); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("the revoked token: %v", err)
	}
}

// TestRedeemChecksLabel: an approval stored with a label that is not a
// valid label (the store takes what it is given) redeems no token.
func TestRedeemChecksLabel(t *testing.T) {
	w := newWorld(t, pairing.Config{}, 60)
	ctx := context.Background()
	g, err := w.ask(w.agent, "192.0.2.1")
	must(t, err)
	_, err = w.db.DecidePairing(ctx, w.agent.ID, g.UserCode, switchboard.PairingApproved, "bad label!", pairing.ByOwner, *w.now)
	must(t, err)
	_, err = w.svc.Redeem(ctx, w.agent, g.DeviceCode, "192.0.2.1")
	wantCode(t, err, switchboard.EINVALID)
	kind := switchboard.TokenPeer
	if toks, err := w.db.FindTokens(ctx, switchboard.TokenFilter{Kind: &kind, AgentID: &w.agent.ID}); err != nil || len(toks) != 0 {
		t.Fatalf("tokens: %d, %v", len(toks), err)
	}
}

// TestRedeemAnswers: a poll is counted per address (past the limit, 429
// slow_down with Retry-After); it needs a device code, of the agent's own
// requests; it answers as the request stands; a token is redeemed once.
func TestRedeemAnswers(t *testing.T) {
	w := newWorld(t, pairing.Config{}, 9)
	ctx := context.Background()
	other := w.newAgent("other")
	_, err := w.svc.Redeem(ctx, w.agent, "", "192.0.2.1")
	wantOAuth(t, err, pairing.ErrInvalidRequest)
	_, err = w.svc.Redeem(ctx, w.agent, "made-up", "192.0.2.1")
	wantOAuth(t, err, pairing.ErrInvalidGrant)

	g, err := w.ask(w.agent, "192.0.2.1")
	must(t, err)
	_, err = w.svc.Redeem(ctx, other, g.DeviceCode, "192.0.2.1")
	wantOAuth(t, err, pairing.ErrInvalidGrant) // another agent's address
	_, err = w.svc.Redeem(ctx, w.agent, g.DeviceCode, "192.0.2.1")
	wantOAuth(t, err, pairing.ErrAuthorizationPending)
	_, err = w.svc.Redeem(ctx, w.agent, g.DeviceCode, "192.0.2.1")
	wantOAuth(t, err, pairing.ErrSlowDown) // too soon
	*w.now = w.now.Add(time.Minute)
	_, err = w.svc.Approve(ctx, w.agent, g.UserCode, "", pairing.ByOwner)
	must(t, err)
	tok, err := w.svc.Redeem(ctx, w.agent, g.DeviceCode, "192.0.2.1")
	must(t, err)
	if peer, err := w.db.FindTokenByHash(ctx, switchboard.HashToken(tok.Secret)); err != nil || peer.AgentID != w.agent.ID || peer.Kind != switchboard.TokenPeer {
		t.Fatalf("the redeemed token: %+v, %v", peer, err)
	}
	_, err = w.svc.Redeem(ctx, w.agent, g.DeviceCode, "192.0.2.1")
	wantOAuth(t, err, pairing.ErrInvalidGrant) // once

	denied, err := w.ask(w.agent, "192.0.2.1")
	must(t, err)
	_, err = w.svc.Deny(ctx, w.agent, denied.UserCode, pairing.ByOwner)
	must(t, err)
	_, err = w.svc.Redeem(ctx, w.agent, denied.DeviceCode, "192.0.2.1")
	wantOAuth(t, err, pairing.ErrAccessDenied)

	expired, err := w.ask(w.agent, "192.0.2.1")
	must(t, err)
	*w.now = w.now.Add(pairing.DefaultTTL)
	_, err = w.svc.Redeem(ctx, w.agent, expired.DeviceCode, "192.0.2.1")
	wantOAuth(t, err, pairing.ErrExpiredToken)

	oe := wantOAuth(t, func() error { // the tenth poll from one address this minute
		_, err := w.svc.Redeem(ctx, w.agent, "made-up", "192.0.2.1")
		return err
	}(), pairing.ErrSlowDown)
	if oe.Status != http.StatusTooManyRequests || oe.RetryAfter < time.Second {
		t.Fatalf("past the poll limit: %+v", oe)
	}
	_, err = w.svc.Redeem(ctx, w.agent, "made-up", "192.0.2.2") // another address
	wantOAuth(t, err, pairing.ErrInvalidGrant)
}
