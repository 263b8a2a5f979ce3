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
		if p := strings.ToLower(firstValue(r.Header.Get("X-Forwarded-Proto"))); p == "http" || p == "https" {
			scheme = p
		}
		if h := firstValue(r.Header.Get("X-Forwarded-Host")); h != "" {
			host = h
		}
	}
	if !validHost(host) {
		host = "localhost"
	}
	return scheme + "://" + host
}

// addressURL returns the URL of the agent's address as the request reached
// it: {base}/a/{handle}, or {base}/ for the default agent on root paths.
func (s *Server) addressURL(r *http.Request, agent *switchboard.Agent) string {
	if r.PathValue("handle") == "" {
		return s.baseURL(r) + "/"
	}
	return s.baseURL(r) + "/a/" + agent.Handle
}

func firstValue(h string) string {
	v, _, _ := strings.Cut(h, ",")
	return strings.TrimSpace(v)
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
