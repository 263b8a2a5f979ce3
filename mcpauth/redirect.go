package mcpauth

import (
	"errors"
	"net"
	"net/url"
	"strings"
)

// MaxRedirectURI is the longest redirect URI registered, in bytes.
const MaxRedirectURI = 512

// CheckRedirectURI checks a redirect URI a client registers: absolute, at
// most MaxRedirectURI bytes, no fragment, no user information; https with
// a host, or http on a loopback host (127.0.0.1, [::1] or localhost,
// RFC 8252 section 7.3).
func CheckRedirectURI(s string) error {
	if len(s) > MaxRedirectURI {
		return errors.New("a redirect URI is longer than 512 bytes")
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || !u.IsAbs() || u.Opaque != "":
		return errors.New("a redirect URI is not an absolute URL")
	case u.Fragment != "" || strings.Contains(s, "#"):
		return errors.New("a redirect URI may not have a fragment")
	case u.User != nil:
		return errors.New("a redirect URI may not hold user information")
	case u.Scheme == "https" && u.Hostname() != "":
		return nil
	case u.Scheme == "http" && isLoopback(u.Hostname()):
		return nil
	}
	return errors.New("a redirect URI must be https, or http on 127.0.0.1, [::1] or localhost")
}

// isLoopback reports whether host is a loopback host name a native client
// listens on.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// MatchRedirectURI reports whether the redirect URI of an authorization
// request is one of the registered ones: exactly, or, for http on a
// loopback host, with any port (RFC 8252 section 7.3).
func MatchRedirectURI(registered []string, got string) bool {
	for _, r := range registered {
		if r == got {
			return true
		}
	}
	if CheckRedirectURI(got) != nil { // an empty fragment ("…#") too
		return false
	}
	g, err := url.Parse(got)
	if err != nil || g.Scheme != "http" {
		return false
	}
	for _, r := range registered {
		ru, err := url.Parse(r)
		if err == nil && ru.Scheme == "http" && ru.Hostname() == g.Hostname() &&
			ru.EscapedPath() == g.EscapedPath() && ru.RawQuery == g.RawQuery {
			return true
		}
	}
	return false
}

// RedirectWith returns the redirect URI with the parameters added to its
// query (those it had kept).
func RedirectWith(redirectURI string, params url.Values) string {
	u, err := url.Parse(redirectURI)
	if err != nil {
		return redirectURI
	}
	q := u.Query()
	for k, vs := range params {
		for _, v := range vs {
			if v != "" {
				q.Set(k, v)
			}
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// RedirectOrigin returns the origin (scheme://host[:port]) of a redirect
// URI, for a Content-Security-Policy form-action.
func RedirectOrigin(redirectURI string) string {
	u, err := url.Parse(redirectURI)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}
