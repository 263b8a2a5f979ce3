package httpapi

import (
	"net/http"

	"github.com/switchboard-dev/switchboard"
)

// baseURL returns the deployment's base URL for r (publicurl.Resolver.Base).
func (s *Server) baseURL(r *http.Request) string { return s.urls.Base(r) }

// varyForwarded adds the headers a request-derived URL depends on to Vary.
func (s *Server) varyForwarded(w http.ResponseWriter) { s.urls.Vary(w) }

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
	return s.urls.Address(r, agent)
}
