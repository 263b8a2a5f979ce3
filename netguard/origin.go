package netguard

import (
	"net/url"
	"strings"
)

// SameOrigin reports whether a and b have the same origin: the same scheme,
// host name and port, a missing port counting as the scheme's default (80
// for http, 443 for https). Host names are compared without regard to
// case but are not resolved: "localhost" and "127.0.0.1" are different
// origins, as they are to a browser.
func SameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(a.Hostname(), b.Hostname()) &&
		originPort(a) == originPort(b)
}

// originPort returns u's port, or its scheme's default port.
func originPort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}
