package httpapi

import (
	"net/http"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/publicurl"
)

// baseURL returns the deployment's base URL for r (publicurl.Resolver.Base).
func (s *Server) baseURL(r *http.Request) string { return s.urls.Base(r) }

// varyForwarded adds the headers a request-derived URL depends on to Vary.
func (s *Server) varyForwarded(w http.ResponseWriter) { s.urls.Vary(w) }

// addressURL returns the URL of the agent's address as the request reached
// it: the root of its agent domain, https://{domain}/, on that domain
// (AgentDomains); {base}/ for the default agent on root paths; else
// {base}/a/{handle}, even for an agent with a domain, so that what a card,
// an OAuth issuer or a resource's metadata names is where the client
// fetched it (RFC 8414 and RFC 9728 require it).
func (s *Server) addressURL(r *http.Request, agent *switchboard.Agent) string {
	if d := publicurl.AgentDomain(r); d != "" && d == agent.Domain {
		return s.urls.DomainBase(r, d) + "/"
	}
	if r.PathValue("handle") == "" && agent.Handle == s.cfg.DefaultAgent {
		return s.baseURL(r) + "/"
	}
	return s.baseURL(r) + "/a/" + agent.Handle
}

// BaseURL returns the URL the world reaches this server at, for the
// request: the public URL, or one derived from the request. The console
// takes its origin from it.
func (s *Server) BaseURL(r *http.Request) string { return s.baseURL(r) }

// AddressURL returns an agent's address: the root of its domain when it
// has one, else {base}/a/{handle}, with the base taken from the
// configuration or from r (publicurl.Resolver.Address). The owner API,
// the directory and the console name it.
func (s *Server) AddressURL(r *http.Request, agent *switchboard.Agent) string {
	return s.urls.Address(r, agent)
}
