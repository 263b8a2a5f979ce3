package clientaddr

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Resolver finds client addresses, trusting X-Forwarded-For only from
// its proxies. A nil *Resolver trusts no proxy. It is immutable after
// construction and safe for concurrent use.
type Resolver struct {
	proxies []netip.Prefix // immutable after construction
}

// New returns a Resolver that trusts the proxies' ranges (none: the
// header is never read).
func New(proxies []netip.Prefix) *Resolver {
	return &Resolver{proxies: proxies}
}

// ParsePrefixes parses a comma-separated list of CIDR ranges ("10.0.0.0/8,
// fd00::/8"); a bare address is a range of one. Blank entries are skipped;
// an empty list is none.
func ParsePrefixes(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, netip.PrefixFrom(p.Addr().Unmap(), unmappedBits(p)).Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("%q is neither a CIDR range nor an address", f)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// unmappedBits is the prefix length of p once its address is unmapped: an
// IPv4-mapped ::ffff:10.0.0.0/104 is 10.0.0.0/8.
func unmappedBits(p netip.Prefix) int {
	if p.Addr().Is4In6() {
		return max(p.Bits()-96, 0)
	}
	return p.Bits()
}

// Addr returns the address the request came from, without a port.
func (res *Resolver) Addr(r *http.Request) string {
	return res.Resolve(r.RemoteAddr, r.Header.Values("X-Forwarded-For"))
}

// Resolve returns the client address of a request whose connection came
// from remoteAddr ("host:port") with the X-Forwarded-For header values
// forwardedFor. When the peer is not a trusted proxy, that is the peer,
// whatever the header says. When it is, it is the right-most address of
// the header that is not itself a trusted proxy (entries that are not
// addresses are skipped); if every entry is a trusted proxy, the
// left-most of them; if there is none, the peer.
func (res *Resolver) Resolve(remoteAddr string, forwardedFor []string) string {
	peer, ok := parseAddr(remoteAddr)
	if !ok {
		return hostOf(remoteAddr)
	}
	if !res.trusts(peer) {
		return peer.String()
	}
	client := peer
	for i := len(forwardedFor) - 1; i >= 0; i-- {
		entries := strings.Split(forwardedFor[i], ",")
		for j := len(entries) - 1; j >= 0; j-- {
			a, ok := parseAddr(strings.TrimSpace(entries[j]))
			if !ok {
				continue
			}
			if !res.trusts(a) {
				return a.String()
			}
			client = a
		}
	}
	return client.String()
}

// trusts reports whether a is in one of the proxies' ranges.
func (res *Resolver) trusts(a netip.Addr) bool {
	if res == nil {
		return false
	}
	for _, p := range res.proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parseAddr reads an address as a peer or a header writes it: "1.2.3.4",
// "1.2.3.4:80", "2001:db8::1", "[2001:db8::1]" or "[2001:db8::1]:80". The
// zone is dropped and an IPv4-mapped address is unmapped, so one client
// has one spelling.
func parseAddr(s string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().WithZone("").Unmap(), true
	}
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		s = s[1 : len(s)-1]
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.WithZone("").Unmap(), true
}

// hostOf is remoteAddr without its port, as it is, for a peer that is not
// an IP address (a Unix socket, a test's made-up address).
func hostOf(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		return remoteAddr
	}
	return host
}

// Key returns what per-address limits count addr under: an IPv4 address
// (or an IPv4-mapped one) itself, and an IPv6 address's /64, the network
// of one site, whose hosts choose their addresses in it at will (a limit
// per IPv6 address would let one host pass it by changing address). A
// string that is not an address is its own key.
func Key(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	return netip.PrefixFrom(a.WithZone(""), 64).Masked().String()
}
