package certs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"sync"
	"time"
)

// ownAddrsTTL is how long the addresses the deployment's names resolve to
// are reused by the on-demand decision.
const ownAddrsTTL = time.Minute

// Why the on-demand decision refuses a name. A refused handshake fails;
// the CA is never asked.
var (
	errNotAgentDomain  = errors.New("no agent of this deployment holds the name")
	errNotHere         = errors.New("the name does not resolve to this deployment's addresses")
	errOnDemandLimited = errors.New("too many certificates asked for on demand; try again later")
)

// decider is the on-demand decision: whether a name that is not one of the
// deployment's own gets a certificate at its first handshake.
type decider struct {
	own         map[string]bool // immutable: the deployment's names
	domains     []string        // immutable: the same, in order
	agentDomain func(ctx context.Context, name string) (bool, error)
	resolver    *net.Resolver
	limiter     *windowLimit
	// stored reports whether the store holds a certificate for name
	// already (a renewal, or one obtained by another instance): that
	// costs the CA nothing, so it is not counted against the limit.
	stored     func(ctx context.Context, name string) bool
	interfaces func() ([]netip.Addr, error)
	logger     *slog.Logger

	mu     sync.Mutex
	ours   []netip.Addr // guarded by mu: the addresses of the deployment
	oursAt time.Time    // guarded by mu: when ours was looked up
}

// decide is certmagic's DecisionFunc: a name gets a certificate only if
// an agent of the deployment holds it, it resolves to one of the
// deployment's addresses, and (for a new certificate) the instance is
// within its limit of certificates asked for on demand. The deployment's
// own names are always allowed (the managed config serves them).
func (d *decider) decide(ctx context.Context, name string) error {
	if d.own[name] {
		return nil
	}
	if _, err := CheckDomain(name); err != nil {
		return err
	}
	if d.agentDomain == nil {
		return errNotAgentDomain
	}
	ok, err := d.agentDomain(ctx, name)
	if err != nil {
		return fmt.Errorf("look up the agent of %s: %w", name, err)
	}
	if !ok {
		d.logger.Debug("no certificate on demand", "name", name, "why", errNotAgentDomain)
		return errNotAgentDomain
	}
	if err := d.pointsHere(ctx, name); err != nil {
		d.logger.Warn("no certificate on demand for an agent's domain", "name", name, "why", err)
		return err
	}
	if d.stored != nil && d.stored(ctx, name) {
		return nil
	}
	if !d.limiter.Allow() {
		d.logger.Warn("no certificate on demand for an agent's domain", "name", name, "why", errOnDemandLimited)
		return errOnDemandLimited
	}
	return nil
}

// pointsHere checks that name resolves (A and AAAA, following CNAMEs) to
// at least one address of the deployment: one its own names resolve to,
// or when they resolve to none, one of this machine's interfaces.
func (d *decider) pointsHere(ctx context.Context, name string) error {
	addrs, err := d.resolver.LookupNetIP(ctx, "ip", name)
	if err != nil {
		return fmt.Errorf("%w: %v", errNotHere, err)
	}
	ours, err := d.ownAddrs(ctx)
	if err != nil {
		return err
	}
	for _, a := range unmapAll(addrs) {
		if slices.Contains(ours, a) {
			return nil
		}
	}
	return fmt.Errorf("%w: %s resolves to %v, the deployment to %v", errNotHere, name, unmapAll(addrs), ours)
}

// ownAddrs returns the addresses the deployment's names resolve to (or,
// when they resolve to none, this machine's), looked up at most once per
// ownAddrsTTL.
func (d *decider) ownAddrs(ctx context.Context) ([]netip.Addr, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ours != nil && time.Since(d.oursAt) < ownAddrsTTL {
		return d.ours, nil
	}
	var ours []netip.Addr
	for _, n := range d.domains {
		addrs, err := d.resolver.LookupNetIP(ctx, "ip", n)
		if err != nil {
			continue // a name of ours that does not resolve: the others may
		}
		ours = append(ours, unmapAll(addrs)...)
	}
	if len(ours) == 0 {
		var err error
		if ours, err = d.interfaces(); err != nil {
			return nil, fmt.Errorf("list this machine's addresses: %w", err)
		}
	}
	d.ours, d.oursAt = ours, time.Now()
	return ours, nil
}

// NewResolver returns the system's resolver, or with addr one that asks
// the DNS server at addr (host:port; serve --dns-resolver): the lookups
// of the on-demand decision, and of the server's other checks of its
// names (package reach), go to the same server.
func NewResolver(addr string) *net.Resolver {
	if addr == "" {
		return net.DefaultResolver
	}
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
}

// interfaceAddrs returns the addresses of this machine's interfaces.
func interfaceAddrs() ([]netip.Addr, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	var out []netip.Addr
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr().Unmap())
		}
	}
	return out, nil
}
