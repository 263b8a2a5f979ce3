package sqlstore

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/pgtest"
	"github.com/switchboard-dev/switchboard/internal/testwait"
)

// listeningInstances opens two stores on one PostgreSQL schema, as two
// instances, once both listen for each other's changes.
func listeningInstances(t *testing.T) (a, b *DB) {
	t.Helper()
	dsn := pgtest.DSN(t)
	open := func() *DB {
		db, err := OpenPostgres(context.Background(), dsn, PostgresOptions{MaxConns: 2})
		must(t, err)
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	a, b = open(), open()
	listening := func(db *DB) func() bool { return func() bool { return !db.identities.off.Load() } }
	testwait.For(t, "instance a to listen", listening(a))
	testwait.For(t, "instance b to listen", listening(b))
	return a, b
}

// TestIdentityCachePostgresInstances: two stores on one PostgreSQL
// database, as two instances. Each serves agents and tokens from memory,
// a change made through one is seen by the other once its notification
// arrives, and while an instance cannot hear notifications it reads the
// database for every lookup.
func TestIdentityCachePostgresInstances(t *testing.T) {
	ctx := context.Background()
	a, b := listeningInstances(t)
	var err error

	_, g := mustIdentities(t, b)

	// Notifications arrive some time after their commits: settle waits
	// until a has heard all of them. Each identity write notifies once:
	// CreateAccount, CreateAgent, CreateToken.
	notified := int64(3)
	settle := func() {
		t.Helper()
		testwait.For(t, "a to hear the changes made so far", func() bool { return a.listener.heard.Load() == notified })
	}
	settle()

	// A change in another schema of the database leaves a's cache alone.
	gen := a.identities.generation()
	_, err = b.write.ExecContext(ctx, `SELECT pg_notify('`+identityChannel+`', 'another_schema')`)
	must(t, err)
	_, err = b.write.ExecContext(ctx, notifyIdentitiesSQL) // arrives after the other schema's
	must(t, err)
	notified++
	settle()
	if got := a.identities.generation(); got != gen+1 {
		t.Fatalf("generation moved from %d to %d on one notification of this schema and one of another", gen, got)
	}

	// a reads and keeps; a change behind the stores' backs (no
	// notification) is not seen while the entries are good.
	if _, err := a.FindAgentByHandle(ctx, "g"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.FindTokenByHash(ctx, "h1"); err != nil {
		t.Fatal(err)
	}
	_, err = a.write.ExecContext(ctx, `UPDATE agents SET name = 'behind' WHERE id = $1`, g.ID)
	must(t, err)
	if got, err := a.FindAgentByHandle(ctx, "g"); err != nil || got.Name != "before" {
		t.Fatalf("cached agent: %+v, %v (want the name it was read with)", got, err)
	}

	// b revokes the token: a refuses it once the notification arrives, and
	// reads the agent again too.
	if n, err := b.RevokeTokens(ctx, switchboard.TokenFilter{AgentID: &g.ID}); err != nil || n != 1 {
		t.Fatalf("revoke: %d, %v", n, err)
	}
	testwait.For(t, "instance a to refuse the token b revoked", func() bool {
		_, err := a.FindTokenByHash(ctx, "h1")
		return switchboard.ErrorCode(err) == switchboard.ENOTFOUND
	})
	if got, err := a.FindAgentByHandle(ctx, "g"); err != nil || got.Name != "behind" {
		t.Fatalf("agent after a change on b: %+v, %v", got, err)
	}

	// a's listening connection is cut: until it listens again a reads the
	// database every time, and once it does, it keeps entries again.
	var pid uint32
	testwait.For(t, "a's listening connection", func() bool { pid = a.listener.pid.Load(); return pid != 0 })
	var cut bool
	must(t, b.read.QueryRowContext(ctx, `SELECT pg_terminate_backend($1)`, int64(pid)).Scan(&cut))
	if !cut {
		t.Fatal("the listening connection was not terminated")
	}
	testwait.For(t, "a to listen again on a new connection", func() bool {
		return a.listener.pid.Load() != pid && !a.identities.off.Load()
	})
	_, err = a.write.ExecContext(ctx, `UPDATE agents SET name = 'while deaf' WHERE id = $1`, g.ID)
	must(t, err)
	if got, err := a.FindAgentByHandle(ctx, "g"); err != nil || got.Name != "while deaf" {
		t.Fatalf("agent after listening again: %+v, %v (an entry from before was used)", got, err)
	}
	_, err = a.write.ExecContext(ctx, `UPDATE agents SET name = 'behind again' WHERE id = $1`, g.ID)
	must(t, err)
	if got, err := a.FindAgentByHandle(ctx, "g"); err != nil || got.Name != "while deaf" {
		t.Fatalf("agent: %+v, %v (the cache is not on again)", got, err)
	}
}

// TestIdentityCacheOffWhileDeaf: a store that cannot hear notifications
// keeps nothing.
func TestIdentityCacheOffWhileDeaf(t *testing.T) {
	c := newIdentityCache()
	c.pause()
	keep(c, c.tokens, "h", switchboard.Token{Hash: "h"}, c.generation(), time.Now())
	if _, ok := lookup(c, c.tokens, "h"); ok {
		t.Fatal("an entry was kept while the cache was off")
	}
	gen := c.generation()
	c.resume()
	keep(c, c.tokens, "h", switchboard.Token{Hash: "h"}, gen, time.Now())
	if _, ok := lookup(c, c.tokens, "h"); ok {
		t.Fatal("a read begun while the cache was off was kept")
	}
	keep(c, c.tokens, "h", switchboard.Token{Hash: "h"}, c.generation(), time.Now())
	if _, ok := lookup(c, c.tokens, "h"); !ok {
		t.Fatal("the cache is not on again")
	}
}

// TestDiscoveryGenerationPostgresInstances: a change that takes an
// agent's reach away on one instance moves the discovery generation of
// the others once its notification arrives, and leaves their identity
// caches alone.
func TestDiscoveryGenerationPostgresInstances(t *testing.T) {
	ctx := context.Background()
	a, b := listeningInstances(t)

	gen, _ := a.DiscoveryGeneration()
	identities := a.identities.generation()
	must(t, b.CloseSessions(ctx, []string{"a-holder-nobody-has"}))
	testwait.For(t, "a to hear b's session end", func() bool { g, _ := a.DiscoveryGeneration(); return g != gen })
	if got := a.identities.generation(); got != identities {
		t.Errorf("a reach change moved a's identity generation from %d to %d", identities, got)
	}

	// A sweep on b that puts nothing back tells nobody.
	gen, _ = a.DiscoveryGeneration()
	_, err := b.RequeueStaleOffers(ctx, time.Now().Add(-time.Hour))
	must(t, err)
	must(t, b.CloseSessions(ctx, []string{"another-holder"})) // a marker that is heard
	testwait.For(t, "a to hear the marker", func() bool { g, _ := a.DiscoveryGeneration(); return g != gen })
	if g, _ := a.DiscoveryGeneration(); g != gen+1 {
		t.Errorf("a's generation moved by %d, want 1 (the marker alone)", g-gen)
	}
}

// TestIdentityCacheDomainsPostgresInstances: an instance that found no
// agent at a host name, and kept that, finds the agent once another
// instance gives it the domain and the notification arrives; and loses
// it when the other takes the domain away.
func TestIdentityCacheDomainsPostgresInstances(t *testing.T) {
	ctx := context.Background()
	a, b := listeningInstances(t)
	_, g := mustIdentities(t, b)
	const d = "bot.example.com"
	if _, err := a.FindAgentByDomain(ctx, d); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("before: %v", err)
	}
	domain := d
	_, err := b.UpdateAgent(ctx, g.ID, switchboard.AgentUpdate{Domain: &domain})
	must(t, err)
	testwait.For(t, "instance a to find the domain b set", func() bool {
		got, err := a.FindAgentByDomain(ctx, d)
		return err == nil && got.ID == g.ID
	})
	none := ""
	_, err = b.UpdateAgent(ctx, g.ID, switchboard.AgentUpdate{Domain: &none})
	must(t, err)
	testwait.For(t, "instance a to lose the domain b removed", func() bool {
		_, err := a.FindAgentByDomain(ctx, d)
		return switchboard.ErrorCode(err) == switchboard.ENOTFOUND
	})
}
