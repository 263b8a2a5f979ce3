package sqlstore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// TestIdentityCacheNeverOutlivesAChange checks that a SQLite store serves
// agents and tokens from memory, and that every change through the store
// (an agent updated, a token revoked, an account disabled) is seen by the
// next lookup. The rows are also changed behind the store's back, so a
// lookup that still read the database would not show the cache at work.
func TestIdentityCacheNeverOutlivesAChange(t *testing.T) {
	ctx := context.Background()
	db, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "identities.db"))
	must(t, err)
	defer db.Close()
	acct, g := mustIdentities(t, db)

	// A first lookup reads and keeps; a change behind the store's back is
	// not seen while the entry is good.
	got, err := db.FindAgentByHandle(ctx, "g")
	must(t, err)
	got.Name = "changed by the caller" // the caller's copy
	if _, err := db.FindTokenByHash(ctx, "h1"); err != nil {
		t.Fatal(err)
	}
	_, err = db.write.ExecContext(ctx, `UPDATE agents SET name = 'behind' WHERE id = $1`, g.ID)
	must(t, err)
	_, err = db.write.ExecContext(ctx, `UPDATE tokens SET label = 'behind' WHERE hash = 'h1'`)
	must(t, err)
	if got, err := db.FindAgentByHandle(ctx, "g"); err != nil || got.Name != "before" {
		t.Fatalf("cached agent: %+v, %v (want the name it was read with)", got, err)
	}
	if got, err := db.FindTokenByHash(ctx, "h1"); err != nil || got.Label != "peer" {
		t.Fatalf("cached token: %+v, %v", got, err)
	}
	// A fresh read (a check a hint asked for) reads the database.
	fresh := switchboard.FreshRead(ctx)
	if got, err := db.FindAgentByHandle(fresh, "g"); err != nil || got.Name != "behind" {
		t.Fatalf("fresh agent: %+v, %v", got, err)
	}
	if got, err := db.FindTokenByHash(fresh, "h1"); err != nil || got.Label != "behind" {
		t.Fatalf("fresh token: %+v, %v", got, err)
	}
	if got, err := db.FindAgentByHandle(ctx, "g"); err != nil || got.Name != "before" {
		t.Fatalf("cached agent after a fresh read: %+v, %v (the cache still holds what it read)", got, err)
	}

	// A change through the store is seen at once, with everything committed
	// before it.
	name := "after"
	_, err = db.UpdateAgent(ctx, g.ID, switchboard.AgentUpdate{Name: &name})
	must(t, err)
	if got, err := db.FindAgentByHandle(ctx, "g"); err != nil || got.Name != "after" {
		t.Fatalf("after UpdateAgent: %+v, %v", got, err)
	}
	if got, err := db.FindTokenByHash(ctx, "h1"); err != nil || got.Label != "behind" {
		t.Fatalf("token after a change: %+v, %v", got, err)
	}
	n, err := db.RevokeTokens(ctx, switchboard.TokenFilter{AgentID: &g.ID})
	must(t, err)
	if _, err := db.FindTokenByHash(ctx, "h1"); n != 1 || switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("revoked %d; lookup after: %v", n, err)
	}
	disabled := true
	_, err = db.UpdateAccount(ctx, acct.ID, switchboard.AccountUpdate{Disabled: &disabled})
	must(t, err)
	if got, err := db.FindAgentByHandle(ctx, "g"); err != nil || !got.AccountDisabled {
		t.Fatalf("after disabling the account: %+v, %v", got, err)
	}
	must(t, db.DeleteAgent(ctx, g.ID))
	if _, err := db.FindAgentByHandle(ctx, "g"); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("deleted agent: %v", err)
	}
}

// mustIdentities creates, through db, an account, its agent "g" (named
// "before") and a peer token of the agent, hash "h1", label "peer".
func mustIdentities(t *testing.T, db *DB) (*switchboard.Account, *switchboard.Agent) {
	t.Helper()
	ctx := context.Background()
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "a", Role: switchboard.RoleOwner}
	must(t, db.CreateAccount(ctx, acct))
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "g", Name: "before", Mode: switchboard.ModeInbox, AcceptsTasks: true}
	must(t, db.CreateAgent(ctx, g))
	must(t, db.CreateToken(ctx, &switchboard.Token{Hash: "h1", Kind: switchboard.TokenPeer, AgentID: g.ID, Label: "peer"}, false))
	return acct, g
}

// TestIdentityCacheRules checks the cache's own rules: a read that a change
// overtook is not kept, an entry expires, misses are not kept, and the map
// stays bounded.
func TestIdentityCacheRules(t *testing.T) {
	c := newIdentityCache()
	gen := c.generation()
	c.changed() // a change commits while a read is under way
	keep(c, c.tokens, "h", switchboard.Token{Hash: "h"}, gen, time.Now())
	if _, ok := lookup(c, c.tokens, "h"); ok {
		t.Fatal("a read overtaken by a change was kept")
	}
	keep(c, c.tokens, "h", switchboard.Token{Hash: "h"}, c.generation(), time.Now().Add(-identityTTL-time.Millisecond))
	if _, ok := lookup(c, c.tokens, "h"); ok {
		t.Fatal("an expired entry was used")
	}
	keep(c, c.tokens, "h", switchboard.Token{Hash: "h"}, c.generation(), time.Now())
	if _, ok := lookup(c, c.tokens, "h"); !ok {
		t.Fatal("a good entry was not used")
	}
	for i := range identityCacheSize + 10 {
		keep(c, c.agents, string(rune('a'+i%26))+time.Duration(i).String(), switchboard.Agent{}, c.generation(), time.Now())
	}
	if len(c.agents) > identityCacheSize {
		t.Fatalf("%d agents kept, the bound is %d", len(c.agents), identityCacheSize)
	}
}

// TestIdentityCacheCommunities: a community read through the cache is
// read again once a change to it commits (closing it), and a change
// behind the store's back is not seen while the entry is good.
func TestIdentityCacheCommunities(t *testing.T) {
	ctx := context.Background()
	db, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "communities.db"))
	must(t, err)
	defer db.Close()
	c := &switchboard.Community{Name: "crew"}
	_, err = db.SaveCommunity(ctx, c)
	must(t, err)
	if got, err := db.LookupCommunity(ctx, "crew"); err != nil || got.Closed {
		t.Fatalf("lookup: %+v, %v", got, err)
	}
	_, err = db.write.ExecContext(ctx, `UPDATE communities SET closed = 1 WHERE name = 'crew'`)
	must(t, err)
	if got, err := db.LookupCommunity(ctx, "crew"); err != nil || got.Closed {
		t.Fatalf("cached community: %+v, %v (want it as it was read)", got, err)
	}
	c.Closed = false
	_, err = db.write.ExecContext(ctx, `UPDATE communities SET closed = 0 WHERE name = 'crew'`)
	must(t, err)
	c.Closed = true
	_, err = db.SaveCommunity(ctx, c)
	must(t, err)
	if got, err := db.LookupCommunity(ctx, "crew"); err != nil || !got.Closed {
		t.Fatalf("after SaveCommunity closed it: %+v, %v", got, err)
	}
}

// mustAgent creates an inbox agent of acct.
func mustAgent(t *testing.T, db *DB, acct *switchboard.Account, handle string) *switchboard.Agent {
	t.Helper()
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: handle, Mode: switchboard.ModeInbox}
	must(t, db.CreateAgent(context.Background(), g))
	return g
}

// TestIdentityCacheDomains: an agent found by its domain is kept (a
// change behind the store's back is not seen while the entry is good),
// and every change through the store is seen by the next lookup: a new
// domain, the old one free, the account disabled, the agent deleted.
func TestIdentityCacheDomains(t *testing.T) {
	ctx := context.Background()
	db, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "domains.db"))
	must(t, err)
	defer db.Close()
	acct, g := mustIdentities(t, db)
	d := "bot.example.com"
	_, err = db.UpdateAgent(ctx, g.ID, switchboard.AgentUpdate{Domain: &d})
	must(t, err)
	got, err := db.FindAgentByDomain(ctx, d)
	must(t, err)
	got.Name = "changed by the caller"
	_, err = db.write.ExecContext(ctx, `UPDATE agents SET name = 'behind' WHERE id = $1`, g.ID)
	must(t, err)
	if got, err := db.FindAgentByDomain(ctx, d); err != nil || got.Name != "before" {
		t.Fatalf("cached agent: %+v, %v (want the name it was read with)", got, err)
	}
	if got, err := db.FindAgentByDomain(switchboard.FreshRead(ctx), d); err != nil || got.Name != "behind" {
		t.Fatalf("fresh agent: %+v, %v", got, err)
	}
	// A host no agent holds is kept as such: a row written behind the
	// store's back is not seen while the entry is good, and a change
	// through the store drops it.
	if _, err := db.FindAgentByDomain(ctx, "internal.example"); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("a host no agent holds: %v", err)
	}
	_, err = db.write.ExecContext(ctx, `UPDATE agents SET domain = 'internal.example' WHERE id = $1`, g.ID)
	must(t, err)
	if _, err := db.FindAgentByDomain(ctx, "internal.example"); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("the kept miss: %v (want it as it was read)", err)
	}
	if got, err := db.FindAgentByDomain(switchboard.FreshRead(ctx), "internal.example"); err != nil || got.ID != g.ID {
		t.Fatalf("a fresh read of the miss: %+v, %v", got, err)
	}
	_, err = db.write.ExecContext(ctx, `UPDATE agents SET domain = $1 WHERE id = $2`, d, g.ID)
	must(t, err)
	other := "other.example.com"
	if _, err := db.FindAgentByDomain(ctx, other); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("a host no agent holds yet: %v", err)
	}
	_, err = db.UpdateAgent(ctx, mustAgent(t, db, acct, "h2").ID, switchboard.AgentUpdate{Domain: &other})
	must(t, err)
	if got, err := db.FindAgentByDomain(ctx, other); err != nil || got.Handle != "h2" {
		t.Fatalf("a domain just set, after a miss of it: %+v, %v", got, err)
	}

	moved := "new.example.com"
	_, err = db.UpdateAgent(ctx, g.ID, switchboard.AgentUpdate{Domain: &moved})
	must(t, err)
	if _, err := db.FindAgentByDomain(ctx, d); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("the old domain after a move: %v", err)
	}
	if got, err := db.FindAgentByDomain(ctx, moved); err != nil || got.ID != g.ID {
		t.Fatalf("the new domain: %+v, %v", got, err)
	}
	disabled := true
	_, err = db.UpdateAccount(ctx, acct.ID, switchboard.AccountUpdate{Disabled: &disabled})
	must(t, err)
	if got, err := db.FindAgentByDomain(ctx, moved); err != nil || !got.AccountDisabled {
		t.Fatalf("after disabling the account: %+v, %v", got, err)
	}
	must(t, db.DeleteAgent(ctx, g.ID))
	if _, err := db.FindAgentByDomain(ctx, moved); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("deleted agent: %v", err)
	}
}
