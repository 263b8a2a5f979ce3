package accounts_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/accounts"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// watched records which of some subjects were notified.
type watched map[string]switchboard.Watch

func watch(t *testing.T, bus switchboard.Bus, subjects ...string) watched {
	t.Helper()
	w := make(watched)
	for _, s := range subjects {
		wt, err := bus.Watch(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(wt.Close)
		w[s] = wt
	}
	return w
}

// wantNotified fails unless every watched subject was notified (membus
// notifies before Notify returns).
func (w watched) wantNotified(t *testing.T, what string) {
	t.Helper()
	for s, wt := range w {
		select {
		case <-wt.C():
		case <-time.After(10 * time.Second):
			t.Errorf("%s: %s was not notified", what, s)
		}
	}
}

// TestChangesReachConnections: disabling an account, replacing an agent
// token and deleting an agent notify the subjects that the holders of the
// agent's connection, its peers' streams and the consoles watch, so that
// a disabled account's agents, an old token and a deleted agent lose their
// connections at once.
func TestChangesReachConnections(t *testing.T) {
	db, err := sqlstore.OpenSQLite(context.Background(), sqlitetest.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	bus := membus.New()
	t.Cleanup(func() { _ = bus.Close() })
	s := accounts.New(db, db, db, bus, nil)
	ctx := context.Background()
	op := &switchboard.Account{ID: switchboard.NewID(), Name: "operator", Role: switchboard.RoleOperator}
	if err := db.CreateAccount(ctx, op); err != nil {
		t.Fatal(err)
	}
	acct, _, err := s.Create(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "helper", Name: "Helper",
		Mode: switchboard.ModeConnector, Version: "1.0.0", AcceptsTasks: true, Approved: true}
	if err := db.CreateAgent(ctx, g); err != nil {
		t.Fatal(err)
	}
	all := []string{switchboard.AgentChangeSubject(g.ID), switchboard.TokensSubject(g.ID), switchboard.AccountAgentsSubject(acct.ID)}

	for _, disabled := range []bool{true, false} {
		w := watch(t, bus, all...)
		if _, err := s.Update(ctx, op, acct.ID, switchboard.AccountUpdate{Disabled: &disabled}); err != nil {
			t.Fatal(err)
		}
		w.wantNotified(t, "disabled set to "+map[bool]string{true: "true", false: "false"}[disabled])
	}

	w := watch(t, bus, switchboard.AgentChangeSubject(g.ID))
	if _, err := s.RotateAgentToken(ctx, g); err != nil {
		t.Fatal(err)
	}
	w.wantNotified(t, "a new agent token")

	w = watch(t, bus, all...)
	if err := s.DeleteAgent(ctx, g); err != nil {
		t.Fatal(err)
	}
	w.wantNotified(t, "the agent deleted")
}
