package sqlstore

import (
	"context"
	"database/sql"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// identityCache keeps the agents (by handle, and by domain: every request
// to a host not the deployment's own looks its name up), the active
// tokens (by hash) and the communities (by name) that every A2A request
// looks up, so that a request need not read them again: at a few thousand
// requests a second those reads cost a tenth of the server's time.
//
// Every change to accounts, agents, tokens or communities goes through
// writeIdentities, which moves the generation on once the change has
// committed. Every change to a SQLite database goes through this process's
// writer; on PostgreSQL, the changes other instances make move the
// generation on when their notifications arrive (identitylisten.go). An entry is
// used only while the generation it was read in is still the current one,
// and it is stored only if no change began while it was being read; so a
// lookup never returns what a committed change replaced. An entry also
// expires identityTTL after it was read, a bound on what a change made
// behind the server's back (an import into a running server, which is
// documented as unsupported) could leave stale. Misses are not kept, so
// guessed tokens cannot fill the cache, but for host names no agent
// holds, kept apart (noDomains), so that a host the deployment is
// reached by under another name costs no read per request, and names
// sent to fill that map push no agent out; each map holds at most
// identityCacheSize entries (a full one forgets an entry at random).
type identityCache struct {
	gen         atomic.Uint64
	reach       atomic.Uint64 // changes that took an agent's reach away (reachgen.go)
	off         atomic.Bool   // PostgreSQL: nobody listens for changes (identitylisten.go)
	mu          sync.Mutex
	agents      map[string]cachedIdentity[switchboard.Agent]
	domains     map[string]cachedIdentity[switchboard.Agent] // by domain
	noDomains   map[string]cachedIdentity[struct{}]          // host names no agent held
	tokens      map[string]cachedIdentity[switchboard.Token]
	communities map[string]cachedIdentity[switchboard.Community] // by name: a community's address reads it per request
}

// identityCacheSize bounds each of the cache's maps: a few MB of agents
// with large cards at most.
const identityCacheSize = 4096

// identityTTL is how long an entry is used at most.
const identityTTL = 2 * time.Second

// cachedIdentity is a row as read in generation gen, at time read.
type cachedIdentity[T any] struct {
	gen  uint64
	read time.Time
	v    T
}

func newIdentityCache() *identityCache {
	return &identityCache{
		agents:      make(map[string]cachedIdentity[switchboard.Agent]),
		domains:     make(map[string]cachedIdentity[switchboard.Agent]),
		noDomains:   make(map[string]cachedIdentity[struct{}]),
		tokens:      make(map[string]cachedIdentity[switchboard.Token]),
		communities: make(map[string]cachedIdentity[switchboard.Community]),
	}
}

// generation returns the generation to read an entry in.
func (c *identityCache) generation() uint64 { return c.gen.Load() }

// changed ends the generation: every entry read before is not used again.
func (c *identityCache) changed() {
	c.gen.Add(1)
	c.mu.Lock()
	clear(c.agents)
	clear(c.domains)
	clear(c.noDomains)
	clear(c.tokens)
	clear(c.communities)
	c.mu.Unlock()
}

// pause turns the cache off: nothing is kept or used until resume.
func (c *identityCache) pause() {
	c.off.Store(true)
	c.changed() // reads under way keep nothing
}

// resume turns the cache on again, with nothing read before in it.
func (c *identityCache) resume() {
	c.changed()
	c.off.Store(false)
}

// lookup returns the entry for key if it is still good.
func lookup[T any](c *identityCache, m map[string]cachedIdentity[T], key string) (T, bool) {
	if c.off.Load() {
		var zero T
		return zero, false
	}
	c.mu.Lock()
	e, ok := m[key]
	c.mu.Unlock()
	if !ok || e.gen != c.gen.Load() || time.Since(e.read) > identityTTL {
		var zero T
		return zero, false
	}
	return e.v, true
}

// keep stores v, read in generation gen starting at time read, unless the
// generation has moved on since.
func keep[T any](c *identityCache, m map[string]cachedIdentity[T], key string, v T, gen uint64, read time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen.Load() != gen || c.off.Load() {
		return
	}
	if _, ok := m[key]; !ok && len(m) >= identityCacheSize {
		for k := range m {
			delete(m, k)
			break
		}
	}
	m[key] = cachedIdentity[T]{gen: gen, read: read, v: v}
}

// identitiesFor returns the cache a lookup under ctx may use: none when
// there is none, or when ctx asks for a fresh read (switchboard.FreshRead).
func (db *DB) identitiesFor(ctx context.Context) *identityCache {
	if switchboard.IsFreshRead(ctx) {
		return nil
	}
	return db.identities
}

// cachedAgent returns the agent with the handle, read through the cache
// where there is one. The caller gets its own copy.
func (db *DB) cachedAgent(ctx context.Context, handle string) (*switchboard.Agent, error) {
	c := db.identitiesFor(ctx)
	if c == nil {
		return db.findAgent(ctx, db.read, `g.handle = $1`, handle)
	}
	if g, ok := lookup(c, c.agents, handle); ok {
		return cloneAgent(&g), nil
	}
	gen, read := c.generation(), time.Now()
	g, err := db.findAgent(ctx, db.read, `g.handle = $1`, handle)
	if err == nil {
		keep(c, c.agents, handle, *cloneAgent(g), gen, read)
	}
	return g, err
}

// cachedAgentByDomain returns the agent whose domain is domain, read
// through the cache where there is one. The caller gets its own copy.
func (db *DB) cachedAgentByDomain(ctx context.Context, domain string) (*switchboard.Agent, error) {
	c := db.identitiesFor(ctx)
	if c == nil {
		return db.findAgent(ctx, db.read, `g.domain = $1`, domain)
	}
	if g, ok := lookup(c, c.domains, domain); ok {
		return cloneAgent(&g), nil
	}
	if _, ok := lookup(c, c.noDomains, domain); ok {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "agent not found")
	}
	gen, read := c.generation(), time.Now()
	g, err := db.findAgent(ctx, db.read, `g.domain = $1`, domain)
	switch {
	case err == nil:
		keep(c, c.domains, domain, *cloneAgent(g), gen, read)
	case switchboard.ErrorCode(err) == switchboard.ENOTFOUND:
		keep(c, c.noDomains, domain, struct{}{}, gen, read)
	}
	return g, err
}

// cachedToken returns the active token with the hash, read through the
// cache where there is one. The caller gets its own copy.
func (db *DB) cachedToken(ctx context.Context, hash string) (*switchboard.Token, error) {
	c := db.identitiesFor(ctx)
	if c == nil {
		return db.findToken(ctx, hash)
	}
	if t, ok := lookup(c, c.tokens, hash); ok {
		return &t, nil
	}
	gen, read := c.generation(), time.Now()
	t, err := db.findToken(ctx, hash)
	if err == nil && t.RevokedAt == nil {
		keep(c, c.tokens, hash, *t, gen, read)
	}
	return t, err
}

// cachedCommunity returns the community with the name, read through the
// cache where there is one. The caller gets its own copy.
func (db *DB) cachedCommunity(ctx context.Context, name string) (*switchboard.Community, error) {
	c := db.identitiesFor(ctx)
	if c == nil {
		return db.findCommunity(ctx, name)
	}
	if v, ok := lookup(c, c.communities, name); ok {
		return &v, nil
	}
	gen, read := c.generation(), time.Now()
	v, err := db.findCommunity(ctx, name)
	if err == nil {
		keep(c, c.communities, name, *v, gen, read)
	}
	return v, err
}

// writeIdentities runs fn as a write transaction that may change accounts,
// agents, tokens or communities, and ends the cache's generation once it has committed
// (or failed: either way, what was read before is not used again).
func (db *DB) writeIdentities(ctx context.Context, fn func(context.Context, *sql.Tx) error) error {
	if n := db.dialect.identityNotify; n != "" {
		write := fn
		fn = func(ctx context.Context, tx *sql.Tx) error {
			if err := write(ctx, tx); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, n) // delivered to every instance on commit
			return err
		}
	}
	err := db.inTx(ctx, fn)
	if db.identities != nil {
		db.identities.changed()
	}
	return err
}

// cloneAgent copies g, with slices of its own, so that a caller changing its
// agent leaves the cached one as it was.
func cloneAgent(g *switchboard.Agent) *switchboard.Agent {
	c := *g
	c.Skills = slices.Clone(g.Skills)
	c.ExtendedSkills = slices.Clone(g.ExtendedSkills)
	return &c
}
