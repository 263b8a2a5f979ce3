package netguard

import (
	"net/netip"
	"strings"
)

// privatePrefixes are the address ranges PrivateHost calls private:
// RFC 1918, loopback, "this network", link-local, shared address space
// (CGNAT, which Tailscale uses), and their IPv6 counterparts.
var privatePrefixes = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("169.254.0.0/16"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("::1/128"),
	netip.MustParsePrefix("fc00::/7"),
	netip.MustParsePrefix("fe80::/10"),
}

// privateSuffixes are the name suffixes of hosts that only a private
// network resolves. A name equal to a suffix without its dot counts too.
var privateSuffixes = []string{
	".localhost", ".local", ".lan", ".home", ".internal", ".intranet", ".corp", ".home.arpa", ".ts.net",
}

// privateAddr reports whether a is in a private range. IPv4-mapped IPv6
// addresses are judged by their IPv4 address; an address with a zone is
// private (a zone only means something on one machine), and so is the
// unspecified address, which reaches the local host.
func privateAddr(a netip.Addr) bool {
	if a.Zone() != "" {
		return true
	}
	a = a.Unmap()
	if a.IsUnspecified() {
		return true
	}
	for _, p := range privatePrefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// PrivateHost reports whether host (a URL's hostname, without brackets)
// names a private host, by its name alone (no DNS): what a public card or
// page must not present as a public address. Beside the private ranges and suffixes, these
// count as private because where they lead cannot be told from the name:
// single-label names, names with non-ASCII letters (IDNA maps a fullwidth
// dot to a dot), and names whose last label is a number, which a browser
// reads as an IPv4 address in a short or octal or hexadecimal form
// ("127.1", "0x7f.0.0.1").
func PrivateHost(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "" {
		return true
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return privateAddr(a)
	}
	for i := 0; i < len(h); i++ {
		if h[i] >= 0x80 {
			return true
		}
	}
	dot := strings.LastIndexByte(h, '.')
	if dot < 0 || numericLabel(h[dot+1:]) {
		return true
	}
	if h == "localhost" {
		return true
	}
	for _, s := range privateSuffixes {
		if strings.HasSuffix(h, s) || h == s[1:] {
			return true
		}
	}
	return false
}

// numericLabel reports whether a host's label is a number in the forms
// the WHATWG URL parser reads as part of an IPv4 address: decimal, octal
// or 0x hexadecimal.
func numericLabel(l string) bool {
	if l == "" {
		return false
	}
	if strings.HasPrefix(l, "0x") {
		l = l[2:]
		return strings.Trim(l, "0123456789abcdef") == ""
	}
	return strings.Trim(l, "0123456789") == ""
}
