package peers_test

import (
	"context"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/peers"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// TestIssueRotateRevoke: a token is issued once per label (EINVALID for a
// bad label, ECONFLICT for a taken one), a rotation replaces it and hints
// the address's tokens subject, and a revocation ends it (ENOTFOUND when
// there is none to revoke).
func TestIssueRotateRevoke(t *testing.T) {
	ctx := context.Background()
	db, err := sqlstore.OpenSQLite(ctx, sqlitetest.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	bus := membus.New()
	t.Cleanup(func() { _ = bus.Close() })
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "alice", Role: switchboard.RoleOwner}
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "helper", Name: "Helper", Mode: switchboard.ModeInbox, Version: "1"}
	if err := db.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateAgent(ctx, g); err != nil {
		t.Fatal(err)
	}
	s := peers.New(db, bus, nil)
	subject := switchboard.TokensSubject(g.ID)
	scope := switchboard.Token{AgentID: g.ID}

	if _, _, err := s.Issue(ctx, scope, "no spaces", false, subject); switchboard.ErrorCode(err) != switchboard.EINVALID {
		t.Fatalf("bad label: %v", err)
	}
	first, tok, err := s.Issue(ctx, scope, "bob", false, subject)
	if err != nil || tok.Label != "bob" || tok.Kind != switchboard.TokenPeer || tok.Hash != switchboard.HashToken(first) {
		t.Fatalf("issue: %+v %v", tok, err)
	}
	if _, _, err := s.Issue(ctx, scope, "bob", false, subject); switchboard.ErrorCode(err) != switchboard.ECONFLICT {
		t.Fatalf("taken label: %v", err)
	}
	w, err := bus.Watch(ctx, subject)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	second, _, err := s.Issue(ctx, scope, "bob", true, subject)
	if err != nil {
		t.Fatal(err)
	}
	<-w.C() // the old token's streams are told
	if _, err := db.FindTokenByHash(ctx, switchboard.HashToken(first)); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("the rotated token: %v", err)
	}
	kind := switchboard.TokenPeer
	f := switchboard.TokenFilter{Kind: &kind, AgentID: &g.ID}
	if err := s.Revoke(ctx, f, "bob", subject); err != nil {
		t.Fatal(err)
	}
	<-w.C()
	if _, err := db.FindTokenByHash(ctx, switchboard.HashToken(second)); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("the revoked token: %v", err)
	}
	if err := s.Revoke(ctx, f, "bob", subject); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("revoke again: %v", err)
	}
}
