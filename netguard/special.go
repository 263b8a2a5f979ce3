package netguard

import "net/netip"

// The ranges a guarded client refuses come from the IANA IPv4 and IPv6
// Special-Purpose Address Registries (RFC 6890 and its updates), plus
// multicast, the deprecated ranges and whatever IPv6 is not global
// unicast. An address that is special only because it carries an IPv4
// address inside it is judged by that IPv4 address where a packet to it
// reaches that address: IPv4-mapped addresses (::ffff:0:0/96) and the NAT64
// well-known prefix (64:ff9b::/96, RFC 6052), so that an IPv6-only
// deployment behind DNS64 still reaches public IPv4 servers while
// 64:ff9b::a9fe:a9fe (169.254.169.254) is refused. The other prefixes that
// embed or translate IPv4 addresses (IPv4-compatible ::/96,
// IPv4-translated ::ffff:0:0:0/96, local-use NAT64 64:ff9b:1::/48, 6to4
// 2002::/16, Teredo 2001::/32) are refused whole: they are deprecated, or
// local, or place the IPv4 address where a check could be fooled, and no
// webhook needs them.

// special4 lists the IPv4 ranges a guarded client does not dial.
var special4 = mustPrefixes(
	"0.0.0.0/8",       // "this network"
	"10.0.0.0/8",      // private
	"100.64.0.0/10",   // shared address space (CGNAT)
	"127.0.0.0/8",     // loopback
	"169.254.0.0/16",  // link-local, with the cloud metadata address 169.254.169.254
	"172.16.0.0/12",   // private
	"192.0.0.0/24",    // IETF protocol assignments (DS-Lite, NAT64 discovery, PCP and TURN anycast…)
	"192.0.2.0/24",    // documentation (TEST-NET-1)
	"192.31.196.0/24", // AS112-v4
	"192.52.193.0/24", // AMT
	"192.88.99.0/24",  // deprecated 6to4 relay anycast
	"192.168.0.0/16",  // private
	"192.175.48.0/24", // AS112 direct delegation
	"198.18.0.0/15",   // benchmarking
	"198.51.100.0/24", // documentation (TEST-NET-2)
	"203.0.113.0/24",  // documentation (TEST-NET-3)
	"224.0.0.0/4",     // multicast
	"240.0.0.0/4",     // reserved, with the limited broadcast 255.255.255.255
)

// globalUnicast is the only IPv6 space assigned for global unicast. Every
// other IPv6 address is refused: the unspecified and loopback addresses,
// IPv4-compatible and IPv4-translated addresses (::/96, ::ffff:0:0:0/96),
// local-use NAT64 (64:ff9b:1::/48), discard-only and dummy prefixes
// (100::/64, 100:0:0:1::/64), SRv6 SIDs (5f00::/16), unique local
// (fc00::/7), link-local (fe80::/10), site-local (fec0::/10), multicast
// (ff00::/8), and what is reserved or unassigned; but for nat64WellKnown.
var globalUnicast = netip.MustParsePrefix("2000::/3")

// nat64WellKnown is the NAT64 well-known prefix: its addresses are judged
// by the IPv4 address in their last 32 bits.
var nat64WellKnown = netip.MustParsePrefix("64:ff9b::/96")

// special6 lists the ranges inside globalUnicast a guarded client does not
// dial.
var special6 = mustPrefixes(
	"2001::/23",         // IETF protocol assignments: Teredo, benchmarking, ORCHID, AMT, AS112, anycast services…
	"2001:db8::/32",     // documentation
	"2002::/16",         // 6to4 (deprecated; it embeds an IPv4 address)
	"2620:4f:8000::/48", // AS112 direct delegation
	"3fff::/20",         // documentation
)

func mustPrefixes(ps ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ps))
	for i, p := range ps {
		out[i] = netip.MustParsePrefix(p)
	}
	return out
}

// Special reports whether ip is in a range a guarded client refuses: a
// private or special-purpose IPv4 range (also when written as an
// IPv4-mapped or NAT64 IPv6 address), an IPv6 address outside global
// unicast, or a special-purpose range inside it. An invalid address is
// special. The zone of an IPv6 address is ignored.
func Special(ip netip.Addr) bool {
	ip = ip.Unmap().WithZone("")
	switch {
	case !ip.IsValid():
		return true
	case ip.Is4():
		return inAny(special4, ip)
	case nat64WellKnown.Contains(ip):
		a := ip.As16()
		return Special(netip.AddrFrom4([4]byte(a[12:])))
	case !globalUnicast.Contains(ip):
		return true
	}
	return inAny(special6, ip)
}

// inAny reports whether one of ps contains ip.
func inAny(ps []netip.Prefix, ip netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
