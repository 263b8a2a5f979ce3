package dashboard

import (
	"context"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// TestStreamsWatchTheViewersAccounts: an owner's event stream watches the
// hints of its own account only, and not the creation of accounts; the
// operator's watches every account and the creation of new ones. (The bus
// runs the watches as it is notified, so what the channels hold after
// Notify is all there will be.)
func TestStreamsWatchTheViewersAccounts(t *testing.T) {
	ctx := context.Background()
	db, err := sqlstore.OpenSQLite(ctx, sqlitetest.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	bus := membus.New()
	t.Cleanup(func() { _ = bus.Close() })
	var accts []*switchboard.Account
	for _, a := range []struct {
		name string
		role switchboard.Role
	}{{"alice", switchboard.RoleOwner}, {"bob", switchboard.RoleOwner}, {"op", switchboard.RoleOperator}} {
		acct := &switchboard.Account{ID: switchboard.NewID(), Name: a.name, Role: a.role}
		if err := db.CreateAccount(ctx, acct); err != nil {
			t.Fatal(err)
		}
		accts = append(accts, acct)
	}
	alice, bob, op := accts[0], accts[1], accts[2]
	c := &Console{Deps: Deps{Accounts: db, Bus: bus}}
	signalled := func(ch chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	for _, tc := range []struct {
		viewer              *switchboard.Account
		own, other, created bool
	}{{alice, true, false, false}, {op, true, true, true}} {
		v := &viewer{account: tc.viewer}
		hint, created := make(chan struct{}, 1), make(chan struct{}, 1)
		watches, err := c.watchAccounts(ctx, v, hint)
		if err != nil {
			t.Fatal(err)
		}
		w, err := c.watchNewAccounts(ctx, v, created)
		if err != nil {
			t.Fatal(err)
		}
		if w != nil {
			watches = append(watches, w)
		}
		must := func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		}
		must(bus.Notify(ctx, switchboard.AccountAgentsSubject(bob.ID)))
		if got := signalled(hint); got != tc.other {
			t.Errorf("%s's stream, bob's agents changed: signalled %v, want %v", tc.viewer.Name, got, tc.other)
		}
		must(bus.Notify(ctx, switchboard.AccountsSubject))
		if got := signalled(created); got != tc.created {
			t.Errorf("%s's stream, an account created: signalled %v, want %v", tc.viewer.Name, got, tc.created)
		}
		must(bus.Notify(ctx, switchboard.AccountAgentsSubject(alice.ID)))
		if got := signalled(hint); got != tc.own {
			t.Errorf("%s's stream, alice's agents changed: signalled %v, want %v", tc.viewer.Name, got, tc.own)
		}
		for _, w := range watches {
			w.Close()
		}
	}
}
