package sqlstore_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/pgtest"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/seal"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// testOutboundPeerSealing: a synced alias's token is sealed for its row (a
// copy in another row does not open), never kept as it is (the export
// shows none), sealed again by a rotation, and one that no longer opens
// reads as Unreadable without stopping ResealSecrets.
func testOutboundPeerSealing(t *testing.T, db *sqlstore.DB, raw func(q string, args ...any)) {
	ctx := context.Background()
	key := seal.NewKey()
	ring, _ := seal.NewKeyring(key)
	db.Secrets = ring
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "alice", Role: switchboard.RoleOwner}
	must(t, db.CreateAccount(ctx, acct))
	var agents []*switchboard.Agent
	for _, h := range []string{"one", "two"} {
		g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: h, Mode: switchboard.ModeInbox, AcceptsTasks: true}
		must(t, db.CreateAgent(ctx, g))
		agents = append(agents, g)
	}
	const secret = "sbp_outbound-peer-token-0123456789"
	for _, p := range []*switchboard.OutboundPeer{
		{AgentID: agents[0].ID, Alias: "bob", URL: "https://b.example", Token: secret},
		{AgentID: agents[0].ID, Alias: "carol", URL: "https://c.example", Token: "sbp_carol"},
		{AgentID: agents[1].ID, Alias: "bob", URL: "https://b.example", Token: "sbp_two"},
	} {
		_, err := db.PutOutboundPeer(ctx, p)
		must(t, err)
	}
	var buf bytes.Buffer
	_, err := db.Export(ctx, &buf)
	must(t, err)
	if strings.Contains(buf.String(), secret) {
		t.Fatal("the export holds a synced token as it is")
	}

	// One agent's sealed token copied into another row opens nowhere.
	raw(`UPDATE outbound_peers SET token = (SELECT token FROM outbound_peers WHERE agent_id = $1 AND alias = 'bob') WHERE agent_id = $1 AND alias = 'carol'`, agents[0].ID)
	raw(`UPDATE outbound_peers SET token = (SELECT token FROM outbound_peers WHERE agent_id = $1 AND alias = 'bob') WHERE agent_id = $2 AND alias = 'bob'`, agents[0].ID, agents[1].ID)
	for _, c := range []struct{ agent, alias string }{{agents[0].ID, "carol"}, {agents[1].ID, "bob"}} {
		p, err := db.FindOutboundPeer(ctx, c.agent, c.alias)
		must(t, err)
		if !p.Unreadable || p.Token != "" {
			t.Fatalf("a token moved to %s: %+v", c.alias, p)
		}
	}
	p, err := db.FindOutboundPeer(ctx, agents[0].ID, "bob")
	must(t, err)
	if p.Token != secret || p.Unreadable {
		t.Fatalf("bob: %+v", p)
	}

	// Rotation: sealed again with the new key, readable with it alone;
	// the moved tokens are left as they are, and do not stop it.
	newKey := seal.NewKey()
	rotated, _ := seal.NewKeyring(newKey, key)
	db.Secrets = rotated
	if n, err := db.ResealSecrets(ctx); err != nil || n != 1 {
		t.Fatalf("ResealSecrets after rotation = %d, %v; want 1", n, err)
	}
	onlyNew, _ := seal.NewKeyring(newKey)
	db.Secrets = onlyNew
	if p, err := db.FindOutboundPeer(ctx, agents[0].ID, "bob"); err != nil || p.Token != secret {
		t.Fatalf("bob with the new key alone: %+v, %v", p, err)
	}

	// Keys lost: the server still starts; every token reads as
	// Unreadable until the owner syncs it again.
	stranger, _ := seal.NewKeyring(seal.NewKey())
	db.Secrets = stranger
	if n, err := db.ResealSecrets(ctx); err != nil || n != 0 {
		t.Fatalf("ResealSecrets with foreign keys = %d, %v; want 0, nil", n, err)
	}
	all, err := db.FindOutboundPeers(ctx, agents[0].ID)
	must(t, err)
	for _, p := range all {
		if !p.Unreadable {
			t.Fatalf("%s reads with foreign keys: %+v", p.Alias, p)
		}
	}
	_, err = db.PutOutboundPeer(ctx, &switchboard.OutboundPeer{AgentID: agents[0].ID, Alias: "bob", URL: "https://b.example", Token: secret})
	must(t, err)
	if p, err := db.FindOutboundPeer(ctx, agents[0].ID, "bob"); err != nil || p.Token != secret || p.Unreadable {
		t.Fatalf("bob synced again: %+v, %v", p, err)
	}
}

func TestSQLiteOutboundPeerSealing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sb.db")
	db := mustOpenSQLiteAt(t, path)
	testOutboundPeerSealing(t, db, func(q string, args ...any) { rawExec(t, "sqlite", sqlitetest.DSN(path), q, args...) })
}

func TestPostgresOutboundPeerSealing(t *testing.T) {
	dsn := pgtest.DSN(t)
	db, err := sqlstore.OpenPostgres(context.Background(), dsn, sqlstore.PostgresOptions{})
	must(t, err)
	t.Cleanup(func() { _ = db.Close() })
	testOutboundPeerSealing(t, db, func(q string, args ...any) { rawExec(t, "pgx", dsn, q, args...) })
}
