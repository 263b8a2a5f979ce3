package reach

import (
	"context"
	"crypto/x509"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// Defaults of a Checker.
const (
	// DefaultTimeout bounds one address's checks, all three.
	DefaultTimeout = 5 * time.Second
	// DefaultTTL is how long a result is reused.
	DefaultTTL = time.Minute
	// DefaultPort is the port HTTPS is dialed on.
	DefaultPort = 443
	// parallel is how many addresses CheckAll checks at once.
	parallel = 8
)

// Config configures a Checker. Zero values mean defaults.
type Config struct {
	// PublicURL is the deployment's base URL (serve --public-url); only
	// an https one on a domain name has addresses to check.
	PublicURL string
	// Domains are the deployment's own names besides the public URL's
	// host (serve --domain). The addresses they resolve to are this
	// server's: an agent's domain must resolve to one of them.
	Domains []string
	// Resolver answers the DNS lookups (nil: the system's; serve
	// --dns-resolver points it at another server).
	Resolver *net.Resolver
	// Roots are the roots certificates must chain to (nil: the system's).
	Roots *x509.CertPool
	// Guard says which addresses may be dialed: one it refuses is
	// reported as unreachable from the internet.
	Guard netguard.Options
	// Port is the port HTTPS is dialed on (DefaultPort; tests).
	Port int
	// Timeout bounds one address's checks (DefaultTimeout); TTL is how
	// long a result is reused (DefaultTTL).
	Timeout, TTL time.Duration
	// Now returns the time (time.Now).
	Now func() time.Time
}

// Checker checks public addresses and keeps each result for TTL. It is
// safe for concurrent use; checks of one target asked for at once run
// once.
type Checker struct {
	cfg Config   // immutable after New
	own []string // immutable after New: the deployment's own names

	mu     sync.Mutex
	cache  map[Target]*entry // guarded by mu
	ours   []netip.Addr      // guarded by mu: the addresses of the deployment's names
	oursAt time.Time         // guarded by mu: when ours was looked up
}

// entry is one target's result, or the check under way.
type entry struct {
	done chan struct{} // closed when res is set
	res  ownerapi.Reachability
	at   time.Time // guarded by Checker.mu: when res was set; zero while under way
}

// New returns a Checker.
func New(cfg Config) *Checker {
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.Port <= 0 {
		cfg.Port = DefaultPort
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	return &Checker{cfg: cfg, own: ownNames(cfg.PublicURL, cfg.Domains), cache: make(map[Target]*entry)}
}

// Check returns how the world reaches t: the result of a check less than
// TTL old, or of one run now (within Timeout; one run at a time per
// target, whose callers all get its result). A caller whose ctx ends
// first gets a failing result saying so; the check goes on for the
// others.
func (c *Checker) Check(ctx context.Context, t Target) ownerapi.Reachability {
	now := c.cfg.Now()
	c.mu.Lock()
	e := c.cache[t]
	fresh := e != nil && (e.at.IsZero() || now.Sub(e.at) < c.cfg.TTL)
	if !fresh {
		c.sweepLocked(now)
		e = &entry{done: make(chan struct{})}
		c.cache[t] = e
	}
	c.mu.Unlock()
	if !fresh {
		go c.run(context.WithoutCancel(ctx), t, e)
	}
	select {
	case <-e.done:
		return e.res
	case <-ctx.Done():
		r := ownerapi.Reachability{Kind: t.Kind, Agent: t.Agent, Name: t.Name, URL: t.URL, State: ownerapi.ReachFailing,
			Problem: "the check did not finish: " + ctx.Err().Error(), CheckedAt: now}
		return r
	}
}

// CheckAll checks every target, a few at a time, and returns the results
// in the targets' order.
func (c *Checker) CheckAll(ctx context.Context, targets []Target) []ownerapi.Reachability {
	out := make([]ownerapi.Reachability, len(targets))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i] = c.Check(ctx, t)
		}()
	}
	wg.Wait()
	return out
}

// run checks t and publishes the result in e.
func (c *Checker) run(ctx context.Context, t Target, e *entry) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	res := c.check(ctx, t)
	c.mu.Lock()
	e.res, e.at = res, c.cfg.Now()
	c.mu.Unlock()
	close(e.done)
}

// sweepLocked forgets the results older than TTL.
func (c *Checker) sweepLocked(now time.Time) {
	for t, e := range c.cache {
		if !e.at.IsZero() && now.Sub(e.at) >= c.cfg.TTL {
			delete(c.cache, t)
		}
	}
}

// check runs the three checks of t, each skipped when an earlier one
// leaves it nothing to check.
func (c *Checker) check(ctx context.Context, t Target) ownerapi.Reachability {
	res := ownerapi.Reachability{Kind: t.Kind, Agent: t.Agent, Name: t.Name, URL: t.URL, CheckedAt: c.cfg.Now()}
	addrs := c.checkDNS(ctx, t, &res.DNS)
	conn := c.checkCertificate(ctx, t, addrs, &res.Certificate)
	fetch := &ownerapi.ReachFetch{URL: t.Fetch}
	if t.Card {
		res.Card = fetch
	} else {
		res.Health = fetch
	}
	c.fetch(ctx, t, conn, res.Certificate.State, fetch)
	res.State, res.Problem = summarize(res)
	return res
}

// summarize returns the worst state of res's checks, and the problem of
// the first check in that state.
func summarize(res ownerapi.Reachability) (state, problem string) {
	fetch := res.Card
	if fetch == nil {
		fetch = res.Health
	}
	checks := []struct{ state, problem string }{
		{res.DNS.State, res.DNS.Problem}, {res.Certificate.State, res.Certificate.Problem}, {fetch.State, fetch.Problem},
	}
	for _, want := range []string{ownerapi.ReachFailing, ownerapi.ReachWarning} {
		for _, ch := range checks {
			if ch.state == want {
				return want, ch.problem
			}
		}
	}
	return ownerapi.ReachOK, ""
}
