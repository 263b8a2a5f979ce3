package httpapi

import (
	"net/http"
	"strings"

	"github.com/switchboard-dev/switchboard"
)

// baseURL returns the deployment's base URL: the configured public URL, or
// one derived from the request (honouring X-Forwarded-* only when told to).
// A Host header with characters no host name has is replaced, so that a
// forged header cannot inject markup into cards and pages.
func (s *Server) baseURL(r *http.Request) string {
	if s.cfg.PublicURL != "" {
		return s.cfg.PublicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host := r.Host
	if s.cfg.TrustForwarded {
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

// varyForwarded adds the headers a request-derived URL depends on to Vary,
// so that a shared cache never serves one host's card for another.
func (s *Server) varyForwarded(w http.ResponseWriter) {
	if s.cfg.PublicURL == "" {
		w.Header().Add("Vary", "Host")
		if s.cfg.TrustForwarded {
			w.Header().Add("Vary", "X-Forwarded-Host, X-Forwarded-Proto")
		}
	}
}

// addressURL returns the URL of the agent's address as the request reached
// it: {base}/a/{handle}, or {base}/ for the default agent on root paths.
func (s *Server) addressURL(r *http.Request, agent *switchboard.Agent) string {
	if r.PathValue("handle") == "" && agent.Handle == s.cfg.DefaultAgent {
		return s.baseURL(r) + "/"
	}
	return s.AddressURL(r, agent)
}

// BaseURL returns the URL the world reaches this server at, for the
// request: the public URL, or one derived from the request. The console
// takes its origin from it.
func (s *Server) BaseURL(r *http.Request) string { return s.baseURL(r) }

// AddressURL returns an agent's address, {base}/a/{handle}, with the base
// taken from the configuration or from r.
func (s *Server) AddressURL(r *http.Request, agent *switchboard.Agent) string {
	return s.baseURL(r) + "/a/" + agent.Handle
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
