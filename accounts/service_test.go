package accounts_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/accounts"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

func newService(t *testing.T) (*accounts.Service, *sqlstore.DB) {
	t.Helper()
	db, err := sqlstore.OpenSQLite(context.Background(), sqlitetest.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	bus := membus.New()
	t.Cleanup(func() { _ = bus.Close() })
	return accounts.New(db, db, db, bus, nil), db
}

// TestAccounts: a created account's token works until rotated; the
// operator cannot disable itself; names are checked.
func TestAccounts(t *testing.T) {
	s, db := newService(t)
	ctx := context.Background()
	op := &switchboard.Account{ID: switchboard.NewID(), Name: "operator", Role: switchboard.RoleOperator}
	if err := db.CreateAccount(ctx, op); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Create(ctx, "  "); switchboard.ErrorCode(err) != switchboard.EINVALID {
		t.Fatalf("an empty name: %v", err)
	}
	acct, secret, err := s.Create(ctx, " alice ")
	if err != nil || acct.Name != "alice" || acct.Role != switchboard.RoleOwner {
		t.Fatalf("create: %+v %v", acct, err)
	}
	if _, _, err := s.Create(ctx, "alice"); switchboard.ErrorCode(err) != switchboard.ECONFLICT {
		t.Fatalf("a taken name: %v", err)
	}
	if tok, err := db.FindTokenByHash(ctx, switchboard.HashToken(secret)); err != nil || tok.AccountID != acct.ID {
		t.Fatalf("the new owner token: %+v %v", tok, err)
	}
	again, err := s.RotateOwnerToken(ctx, acct.ID)
	if err != nil || again == secret {
		t.Fatalf("rotate: %v", err)
	}
	if _, err := db.FindTokenByHash(ctx, switchboard.HashToken(secret)); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("the rotated token still works: %v", err)
	}
	yes, no := true, false
	if _, err := s.Update(ctx, op, op.ID, switchboard.AccountUpdate{Disabled: &yes}); switchboard.ErrorCode(err) != switchboard.EINVALID {
		t.Fatalf("the operator disables itself: %v", err)
	}
	if got, err := s.Update(ctx, op, acct.ID, switchboard.AccountUpdate{Disabled: &yes}); err != nil || !got.Disabled {
		t.Fatalf("disable: %+v %v", got, err)
	}
	if got, err := s.Update(ctx, op, acct.ID, switchboard.AccountUpdate{Disabled: &no}); err != nil || got.Disabled {
		t.Fatalf("enable: %+v %v", got, err)
	}
}

// TestAgentCredentials: an agent token is for connector agents and
// replaces the old one; a deleted agent is gone.
func TestAgentCredentials(t *testing.T) {
	s, db := newService(t)
	ctx := context.Background()
	acct, _, err := s.Create(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "helper", Name: "Helper",
		Mode: switchboard.ModeConnector, Version: "1.0.0", AcceptsTasks: true, Approved: true}
	desk := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "desk", Name: "Desk",
		Mode: switchboard.ModeInbox, Version: "1.0.0", AcceptsTasks: true, Approved: true}
	for _, a := range []*switchboard.Agent{g, desk} {
		if err := db.CreateAgent(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	// An inbox agent has an agent token too (its identity on the network).
	if tok, err := s.RotateAgentToken(ctx, desk); err != nil || !strings.HasPrefix(tok, "sba_") {
		t.Fatalf("an inbox agent's token: %q %v", tok, err)
	}
	first, err := s.RotateAgentToken(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.RotateAgentToken(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.FindTokenByHash(ctx, switchboard.HashToken(first)); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("the old agent token still works: %v", err)
	}
	if tok, err := db.FindTokenByHash(ctx, switchboard.HashToken(second)); err != nil || tok.AgentID != g.ID {
		t.Fatalf("the new agent token: %+v %v", tok, err)
	}
	if err := s.DeleteAgent(ctx, g); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FindAgentByID(ctx, g.ID); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("the deleted agent is found: %v", err)
	}
	if _, err := db.FindTokenByHash(ctx, switchboard.HashToken(second)); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("the deleted agent's token still works: %v", err)
	}
}

// TestAccountNamesRefuseControlAndBidi: an account's name, new or
// changed, with a control or bidirectional formatting character is
// EUNPROCESSABLE, and the message names the field.
func TestAccountNamesRefuseControlAndBidi(t *testing.T) {
	s, db := newService(t)
	ctx := context.Background()
	op := &switchboard.Account{ID: switchboard.NewID(), Name: "operator", Role: switchboard.RoleOperator}
	if err := db.CreateAccount(ctx, op); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"nul\x00", "esc\x1b[0m", "evil\u202eecila", "\u2066iso\u2069", "c1\u0085x"} {
		if _, _, err := s.Create(ctx, name); switchboard.ErrorCode(err) != switchboard.EUNPROCESSABLE || !strings.HasPrefix(switchboard.ErrorMessage(err), "name ") {
			t.Errorf("create %q: %v", name, err)
		}
	}
	acct, _, err := s.Create(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	bad := "ali\u202ece"
	if _, err := s.Update(ctx, op, acct.ID, switchboard.AccountUpdate{Name: &bad}); switchboard.ErrorCode(err) != switchboard.EUNPROCESSABLE {
		t.Fatalf("rename to %q: %v", bad, err)
	}
	if got, err := db.FindAccountByID(ctx, acct.ID); err != nil || got.Name != "alice" {
		t.Fatalf("after a refused rename: %+v %v", got, err)
	}
}
