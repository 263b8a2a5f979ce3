package certs

import (
	"fmt"
	"net/netip"
	"strings"
)

// CheckDomain checks one name given to --domain and returns it in lower
// case, without a trailing dot. It refuses, saying which, an IP address, a
// wildcard, a name with a port or a scheme (a URL), and anything else that
// is not a DNS name of at least two labels.
func CheckDomain(s string) (string, error) {
	name := strings.TrimSpace(s)
	switch {
	case name == "":
		return "", fmt.Errorf("an empty domain name")
	case strings.Contains(name, "://"):
		return "", fmt.Errorf("%q has a scheme: give the name alone (agents.example.com), not a URL", s)
	case strings.HasPrefix(name, "*"):
		return "", fmt.Errorf("%q is a wildcard: its certificate needs the DNS-01 challenge, which switchboard does not do; give each name", s)
	}
	if addr, err := netip.ParseAddr(strings.Trim(name, "[]")); err == nil {
		return "", fmt.Errorf("%q is an IP address (%s): certificates are obtained for DNS names only", s, addr)
	}
	if i := strings.LastIndex(name, ":"); i >= 0 {
		return "", fmt.Errorf("%q has a port: give the name alone; --https-addr sets the port HTTPS listens on", s)
	}
	if strings.ContainsAny(name, "/?#@") {
		return "", fmt.Errorf("%q is not a domain name: give the name alone (agents.example.com)", s)
	}
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	if len(name) > 253 {
		return "", fmt.Errorf("%q is longer than a domain name may be (253 characters)", s)
	}
	labels := strings.Split(name, ".")
	if len(labels) < 2 {
		return "", fmt.Errorf("%q is not a public domain name: it needs at least two labels (agents.example.com)", s)
	}
	for _, l := range labels {
		if !validLabel(l) {
			return "", fmt.Errorf("%q is not a domain name: %q is not a valid label (letters, digits and inner hyphens, at most 63)", s, l)
		}
	}
	return name, nil
}

// CheckDomains checks each name of a --domain list (CheckDomain) and
// drops repeats, keeping the first's order.
func CheckDomains(list []string) ([]string, error) {
	var out []string
	seen := make(map[string]bool)
	for _, s := range list {
		name, err := CheckDomain(s)
		if err != nil {
			return nil, fmt.Errorf("--domain: %w", err)
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out, nil
}

// validLabel reports whether l is a DNS label: 1 to 63 letters, digits and
// hyphens, not beginning or ending with a hyphen (an IDN in its punycode
// form, xn--…, is one).
func validLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// normalize returns a name from a TLS handshake or a request as the
// manager compares names: lower case, without a trailing dot.
func normalize(name string) string {
	return strings.ToLower(strings.TrimSuffix(strings.TrimSpace(name), "."))
}
