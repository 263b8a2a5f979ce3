package mcpauth_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/mcpauth"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// TestExchangeCodeReplay: a code redeemed a second time is refused, and
// the tokens its first redemption got stop working (RFC 6749 section
// 4.1.2): the MCP token no longer opens the endpoint and the refresh token
// is refused. Another grant of the same client goes on.
func TestExchangeCodeReplay(t *testing.T) {
	w := newWorld(t, mcpauth.Config{}, nil)
	ctx := context.Background()
	other := w.grant()
	code := w.code()
	first, err := w.svc.Exchange(ctx, w.redeemForm(code), w.ep)
	must(t, err)
	if !w.active(first.AccessToken) {
		t.Fatal("the first redemption's MCP token does not work")
	}
	*w.now = w.now.Add(time.Minute)
	_, err = w.svc.Exchange(ctx, w.redeemForm(code), w.ep)
	wantOAuth(t, err, "invalid_grant")
	if w.active(first.AccessToken) {
		t.Fatal("the MCP token of a replayed code still works")
	}
	_, err = w.refresh(w.ep, first.RefreshToken)
	wantOAuth(t, err, "invalid_grant")
	if !w.active(other.AccessToken) {
		t.Fatal("another grant of the client ended")
	}
	if _, err := w.refresh(w.ep, other.RefreshToken); err != nil {
		t.Fatalf("another grant's refresh: %v", err)
	}
}

// replayBeforeGrant is the store, where a second redemption of a code
// comes between the first's take of the code and its grant.
type replayBeforeGrant struct{ *sqlstore.DB }

func (r replayBeforeGrant) CreateOAuthGrant(ctx context.Context, g *switchboard.OAuthGrant) error {
	if _, err := r.TakeOAuthCode(ctx, g.CodeHash); switchboard.ErrorCode(err) != switchboard.ECONFLICT {
		return err
	}
	return r.DB.CreateOAuthGrant(ctx, g)
}

// TestExchangeCodeReplayBeforeGrant: when the code is presented again
// while its first redemption is under way, the first gets no grant and
// the MCP token it had issued is revoked.
func TestExchangeCodeReplayBeforeGrant(t *testing.T) {
	w := newWorld(t, mcpauth.Config{}, func(db *sqlstore.DB) switchboard.OAuthStore { return replayBeforeGrant{db} })
	ctx := context.Background()
	_, err := w.svc.Exchange(ctx, w.redeemForm(w.code()), w.ep)
	wantOAuth(t, err, "invalid_grant")
	kind := switchboard.TokenMCP
	toks, err := w.db.FindTokens(ctx, switchboard.TokenFilter{Kind: &kind, AgentID: &w.agent.ID, Active: true})
	must(t, err)
	if len(toks) != 0 {
		t.Fatalf("%d MCP tokens left active, want none: %+v", len(toks), toks[0])
	}
	grants, err := w.db.FindOAuthGrants(ctx, switchboard.OAuthGrantFilter{})
	must(t, err)
	if len(grants) != 0 {
		t.Fatalf("grants %+v", grants)
	}
}

// TestExchangeCodeReplayAfterExpiry: a used code is kept past its
// expiry (CodeKeep), also through the sweep of each consent: presented
// again after it expired, it still ends its grant.
func TestExchangeCodeReplayAfterExpiry(t *testing.T) {
	w := newWorld(t, mcpauth.Config{}, nil)
	ctx := context.Background()
	code := w.code()
	first, err := w.svc.Exchange(ctx, w.redeemForm(code), w.ep)
	must(t, err)
	*w.now = w.now.Add(mcpauth.CodeTTL + time.Minute)
	w.code() // a consent sweeps the codes kept long enough
	_, err = w.svc.Exchange(ctx, w.redeemForm(code), w.ep)
	wantOAuth(t, err, "invalid_grant")
	if w.active(first.AccessToken) {
		t.Fatal("the MCP token of a code replayed after its expiry still works")
	}
	_, err = w.refresh(w.ep, first.RefreshToken)
	wantOAuth(t, err, "invalid_grant")
}

// TestExchangeCodeReplayAfterRefresh: the grant a code got is ended by a
// replay of the code also after refreshes: the tokens that replaced the
// first ones stop working.
func TestExchangeCodeReplayAfterRefresh(t *testing.T) {
	w := newWorld(t, mcpauth.Config{}, nil)
	ctx := context.Background()
	code := w.code()
	first, err := w.svc.Exchange(ctx, w.redeemForm(code), w.ep)
	must(t, err)
	next, err := w.refresh(w.ep, first.RefreshToken)
	must(t, err)
	_, err = w.svc.Exchange(ctx, w.redeemForm(code), w.ep)
	wantOAuth(t, err, "invalid_grant")
	if w.active(next.AccessToken) {
		t.Fatal("the refreshed MCP token of a replayed code still works")
	}
	_, err = w.refresh(w.ep, next.RefreshToken)
	wantOAuth(t, err, "invalid_grant")
}
