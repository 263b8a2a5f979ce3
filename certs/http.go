package certs

import (
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
)

// HSTSValue is the Strict-Transport-Security header of every HTTPS
// response: a year, for this name only. includeSubDomains and preload
// would decide for the operator's other names, which are not ours.
const HSTSValue = "max-age=31536000"

// HSTS sets Strict-Transport-Security on every response to a request
// that came over TLS, then serves it with next.
func HSTS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil {
			w.Header().Set("Strict-Transport-Security", HSTSValue)
		}
		next.ServeHTTP(w, r)
	})
}

// Redirect is the handler of the plain HTTP listener when the server
// serves HTTPS: it answers ACME HTTP-01 challenges (challenge, when not
// nil, reports whether it answered one), serves requests from a loopback
// client with next (the CLI and health checks on the machine work before,
// and without, a certificate), and redirects every other request to
// https, same host, path and query, with 308 (the method and body are
// kept). httpsPort is the port HTTPS listens on: the redirect names it
// unless it is 443.
func Redirect(next http.Handler, httpsPort int, challenge func(http.ResponseWriter, *http.Request) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if challenge != nil && challenge(w, r) {
			return
		}
		if fromLoopback(r) {
			next.ServeHTTP(w, r)
			return
		}
		host, ok := redirectHost(r.Host, httpsPort)
		if !ok {
			http.Error(w, "this server answers over https; the request names no valid host to redirect to", http.StatusBadRequest)
			return
		}
		http.Redirect(w, r, "https://"+host+r.URL.RequestURI(), http.StatusPermanentRedirect)
	})
}

// fromLoopback reports whether r came from this machine's loopback.
func fromLoopback(r *http.Request) bool {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

// redirectHost returns the host of a redirect to https for a request to
// host: its name (or address) with httpsPort unless that is 443. It
// reports false for a host that is not one.
func redirectHost(host string, httpsPort int) (string, bool) {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	if addr, err := netip.ParseAddr(strings.Trim(name, "[]")); err == nil {
		name = addr.String()
		if addr.Is6() {
			name = "[" + name + "]"
		}
	} else if name == "" || !validHostName(name) {
		return "", false
	}
	if httpsPort != 443 && httpsPort != 0 {
		if strings.HasPrefix(name, "[") {
			return name + ":" + strconv.Itoa(httpsPort), true
		}
		return net.JoinHostPort(name, strconv.Itoa(httpsPort)), true
	}
	return name, true
}

// validHostName reports whether s is a host name one may put in a URL:
// labels of letters, digits, hyphens and underscores.
func validHostName(s string) bool {
	for _, l := range strings.Split(strings.TrimSuffix(s, "."), ".") {
		if l == "" || len(l) > 63 {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i] | 0x20
			if !(c >= 'a' && c <= 'z' || l[i] >= '0' && l[i] <= '9' || l[i] == '-' || l[i] == '_') {
				return false
			}
		}
	}
	return true
}
