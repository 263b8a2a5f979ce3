package certs

import (
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/domainname"
)

// CheckDomain checks one name given to --domain as every domain is
// checked (domainname.Parse) and returns it as it is held: lower case,
// ASCII, without a trailing dot.
func CheckDomain(s string) (string, error) {
	name, err := domainname.Parse(s)
	if err != nil && strings.HasPrefix(strings.TrimSpace(s), "*") {
		return "", fmt.Errorf("%w (a wildcard certificate needs the DNS-01 challenge, which switchboard does not do)", err)
	}
	return name, err
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

// normalize returns a name from a TLS handshake or a request as the
// manager compares names: lower case, without a trailing dot.
func normalize(name string) string {
	return strings.ToLower(strings.TrimSuffix(strings.TrimSpace(name), "."))
}
