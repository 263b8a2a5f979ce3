package reach

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/ownerapi"
)

// checkDNS looks up t's name and fills d; it returns the addresses the
// guard lets the other checks dial. An agent's domain must resolve to one
// of the addresses the deployment's own names resolve to (the same rule
// as the on-demand certificate's decision, package certs).
func (c *Checker) checkDNS(ctx context.Context, t Target, d *ownerapi.ReachDNS) []netip.Addr {
	d.Addresses = []string{}
	var ours []netip.Addr
	if t.Kind == ownerapi.ReachAgent && !slices.Contains(c.own, t.Name) {
		ours = c.ownAddrs(ctx)
		d.Server = addrStrings(ours)
	}
	found, err := c.cfg.Resolver.LookupNetIP(ctx, "ip", t.Name)
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		d.State, d.Problem = ownerapi.ReachFailing, fmt.Sprintf("no A/AAAA record for %s: %s", t.Name, c.addRecord(ours))
		return nil
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &dnsErr) && dnsErr.IsTimeout:
		d.State, d.Problem = ownerapi.ReachFailing, fmt.Sprintf("the DNS lookup of %s got no answer in time: check the name's DNS servers", t.Name)
		return nil
	case err != nil:
		d.State, d.Problem = ownerapi.ReachFailing, fmt.Sprintf("the DNS lookup of %s failed (%s): check the name's DNS servers", t.Name, lookupCause(err))
		return nil
	}
	addrs := unmapAll(found)
	d.Addresses = addrStrings(addrs)
	d.State = ownerapi.ReachOK
	if len(ours) > 0 && !slices.ContainsFunc(addrs, func(a netip.Addr) bool { return slices.Contains(ours, a) }) {
		d.State, d.Problem = ownerapi.ReachFailing, fmt.Sprintf("DNS for %s points at %s, not this server (%s): %s",
			t.Name, strings.Join(d.Addresses, ", "), strings.Join(d.Server, ", "), c.pointHere(ours))
	}
	var allowed []netip.Addr
	for _, a := range addrs {
		if c.cfg.Guard.Allows(a) {
			allowed = append(allowed, a)
		}
	}
	if len(allowed) == 0 && d.State == ownerapi.ReachOK {
		d.State, d.Problem = ownerapi.ReachFailing, fmt.Sprintf("%s resolves only to private or special-purpose addresses (%s), which peers on the internet cannot reach: point it at this server's public address",
			t.Name, strings.Join(d.Addresses, ", "))
	}
	return allowed
}

// pointHere says what record to make: one pointing at this server's
// addresses when they are known, or a CNAME to the deployment's name.
func (c *Checker) pointHere(ours []netip.Addr) string {
	switch {
	case len(ours) > 0 && len(c.own) > 0:
		return fmt.Sprintf("make its A/AAAA record point at %s, or make it a CNAME to %s", strings.Join(addrStrings(ours), ", "), c.own[0])
	case len(c.own) > 0:
		return fmt.Sprintf("add an A/AAAA record pointing at this server's public address, or a CNAME to %s", c.own[0])
	}
	return "add an A/AAAA record pointing at this server's public address"
}

// addRecord says what record to add to a name that has none.
func (c *Checker) addRecord(ours []netip.Addr) string {
	to := "this server's public address"
	if len(ours) > 0 {
		to = strings.Join(addrStrings(ours), ", ")
	}
	if len(c.own) > 0 {
		return fmt.Sprintf("add one pointing at %s, or a CNAME to %s", to, c.own[0])
	}
	return "add one pointing at " + to
}

// ownAddrs returns the addresses the deployment's own names resolve to,
// looked up at most once per TTL; none when none resolves.
func (c *Checker) ownAddrs(ctx context.Context) []netip.Addr {
	c.mu.Lock()
	if c.ours != nil && c.cfg.Now().Sub(c.oursAt) < c.cfg.TTL {
		defer c.mu.Unlock()
		return c.ours
	}
	c.mu.Unlock()
	ours := []netip.Addr{}
	for _, n := range c.own {
		addrs, err := c.cfg.Resolver.LookupNetIP(ctx, "ip", n)
		if err != nil {
			continue // a name of ours that does not resolve: the others may
		}
		for _, a := range unmapAll(addrs) {
			if !slices.Contains(ours, a) {
				ours = append(ours, a)
			}
		}
	}
	c.mu.Lock()
	c.ours, c.oursAt = ours, c.cfg.Now()
	c.mu.Unlock()
	return ours
}

// lookupCause is a DNS error without the name and server it repeats.
func lookupCause(err error) string {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return dnsErr.Err
	}
	return err.Error()
}

// unmapAll returns addrs with IPv4-mapped IPv6 addresses as IPv4.
func unmapAll(addrs []netip.Addr) []netip.Addr {
	out := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		out[i] = a.Unmap()
	}
	return out
}

// addrStrings returns addrs as text.
func addrStrings(addrs []netip.Addr) []string {
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = a.String()
	}
	return out
}
