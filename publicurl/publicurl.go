// Package publicurl says where the world reaches a deployment and its
// agents: the configured public URL, or one taken from each request
// (honouring X-Forwarded-Proto and X-Forwarded-Host only when told to).
// Every face that names an address (cards, landing pages, the connector's
// hello, the console's origin, wakes) asks one Resolver, so that they all
// name the same; and every face that reads one (an agent naming another
// by URL) reads it with HandleAt, so that they all read the same.
package publicurl

import (
	"net/http"
	"strings"

	"github.com/switchboard-dev/switchboard"
)

// Resolver computes public URLs. Its zero value takes them from each
// request's Host.
type Resolver struct {
	// PublicURL is the deployment's base URL (no trailing slash); empty:
	// taken from each request.
	PublicURL string
	// TrustForwarded derives the base from X-Forwarded-Proto and
	// X-Forwarded-Host, for a server behind a proxy that sets them.
	TrustForwarded bool
}

// Base returns the deployment's base URL for r: the public URL, or one
// derived from the request. A Host header with characters no host name
// has is replaced by "localhost", so that a forged header cannot inject
// markup into cards and pages.
func (u Resolver) Base(r *http.Request) string {
	if u.PublicURL != "" {
		return u.PublicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host := r.Host
	if u.TrustForwarded {
		if p := strings.ToLower(lastValue(r.Header.Values("X-Forwarded-Proto"))); p == "http" || p == "https" {
			scheme = p
		}
		if h := lastValue(r.Header.Values("X-Forwarded-Host")); h != "" {
			host = h
		}
	}
	if !validHost(host) {
		host = "localhost"
	}
	return scheme + "://" + host
}

// Address returns an agent's address, {base}/a/{handle}, with the base
// taken from the configuration or from r.
func (u Resolver) Address(r *http.Request, agent *switchboard.Agent) string {
	return u.Base(r) + "/a/" + agent.Handle
}

// Vary adds the headers a request-derived URL depends on to w's Vary, so
// that a shared cache never serves one host's card for another.
func (u Resolver) Vary(w http.ResponseWriter) {
	if u.PublicURL == "" {
		w.Header().Add("Vary", "Host")
		if u.TrustForwarded {
			w.Header().Add("Vary", "X-Forwarded-Host, X-Forwarded-Proto")
		}
	}
}

// lastValue returns the last entry of a comma-separated header that may
// appear several times: the one the nearest proxy added. Entries before it
// came from further away, possibly from the client itself.
func lastValue(values []string) string {
	if len(values) == 0 {
		return ""
	}
	last := values[len(values)-1]
	if i := strings.LastIndexByte(last, ','); i >= 0 {
		last = last[i+1:]
	}
	return strings.TrimSpace(last)
}

// validHost reports whether h has only the characters of a host name, an
// IP literal and a port.
func validHost(h string) bool {
	if h == "" || len(h) > 255 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		ok := ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') ||
			c == '.' || c == '-' || c == ':' || c == '[' || c == ']' || c == '_'
		if !ok {
			return false
		}
	}
	return true
}
