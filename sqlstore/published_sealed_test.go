package sqlstore_test

import (
	"context"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/seal"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// testPublishedTargetAtRest: the local server a forwarding connector
// names in its published card is sealed as it is written; one kept before
// (unsealed) stays readable and is sealed by ResealSecrets.
func testPublishedTargetAtRest(t *testing.T, open func(t *testing.T) *sqlstore.DB) {
	ctx := context.Background()
	const target = "http://127.0.0.1:8080/a2a?api_key=local-target-secret-0123"
	db := open(t)
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "owner", Role: switchboard.RoleOwner}
	must(t, db.CreateAccount(ctx, acct))
	publish := func(handle string) *switchboard.Agent {
		g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: handle, Mode: switchboard.ModeConnector, AcceptsTasks: true}
		must(t, db.CreateAgent(ctx, g))
		must(t, db.PublishCard(ctx, &switchboard.PublishedCard{AgentID: g.ID, Target: target, Card: []byte(`{"name":"x"}`)}))
		return g
	}
	readBack := func(g *switchboard.Agent) {
		t.Helper()
		c, err := db.FindPublishedCard(ctx, g.ID)
		must(t, err)
		if c.Target != target || string(c.Card) != `{"name":"x"}` {
			t.Fatalf("published card read back as %q, %s", c.Target, c.Card)
		}
	}
	old := publish("old") // kept before targets were sealed
	if !exportHolds(t, db, "local-target-secret-0123") {
		t.Fatal("without a sealer, the target is not kept as it is")
	}
	keys, _ := seal.NewKeyring(seal.NewKey())
	db.Secrets = keys
	readBack(old)
	if n, err := db.ResealSecrets(ctx); err != nil || n != 1 {
		t.Fatalf("ResealSecrets = %d, %v; want 1", n, err)
	}
	if exportHolds(t, db, "local-target-secret-0123") {
		t.Fatal("the export holds the target as it is once sealed")
	}
	readBack(old)
	readBack(publish("new"))
	if exportHolds(t, db, "local-target-secret-0123") {
		t.Fatal("a new published card's target is kept as it is")
	}
}

func TestSQLitePublishedTargetAtRest(t *testing.T) {
	testPublishedTargetAtRest(t, func(t *testing.T) *sqlstore.DB { return MustOpenSQLite(t) })
}

func TestPostgresPublishedTargetAtRest(t *testing.T) {
	testPublishedTargetAtRest(t, func(t *testing.T) *sqlstore.DB { return MustOpenPostgres(t) })
}
