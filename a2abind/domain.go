package a2abind

import (
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/ownerapi"
	"github.com/switchboard-dev/switchboard/publicurl"
)

// An agent domain (Agent.Domain, docs/agents.md "Agent domains") serves
// its agent's address at the root of its host: a request whose Host is
// the domain is served as the same request to the agent's address on the
// deployment ({base}/a/{handle}/…), its context marked
// (publicurl.WithAgentDomain) so that every URL the answer names is on
// the domain. The pages that need an owner's sign-in are on the
// deployment's own host, where the console's cookie and Origin checks
// hold: an agent domain sends the browser there. Nothing else is served
// there: no owner API, console, network API, community or other agent.

// domainPaths are the paths an agent domain serves, each with the path
// of the agent's address it is served as ({handle} is the agent's).
var domainPaths = map[string]string{
	"/":                            "/a/{handle}/",
	"/.well-known/agent-card.json": "/a/{handle}/.well-known/agent-card.json",
	"/.well-known/agent.json":      "/a/{handle}/.well-known/agent.json",
	"/push":                        "/a/{handle}/push",
	"/mcp":                         "/a/{handle}/mcp",
	"/oauth/device_authorization":  "/a/{handle}/oauth/device_authorization",
	"/oauth/token":                 "/a/{handle}/oauth/token",
	"/oauth/register":              "/a/{handle}/oauth/register",
	"/oauth/revoke":                "/a/{handle}/oauth/revoke",
	"/.well-known/oauth-authorization-server":   "/a/{handle}/.well-known/oauth-authorization-server",
	"/.well-known/oauth-protected-resource":     "/a/{handle}/.well-known/oauth-protected-resource",
	"/.well-known/oauth-protected-resource/mcp": "/.well-known/oauth-protected-resource/a/{handle}/mcp",
	// The HTTP+JSON binding (a2a_rest.go); its paths under /tasks/ and
	// /v1/ are domainPrefixes.
	"/message:send":      "/a/{handle}/message:send",
	"/message:stream":    "/a/{handle}/message:stream",
	"/tasks":             "/a/{handle}/tasks",
	"/extendedAgentCard": "/a/{handle}/extendedAgentCard",
}

// domainPrefixes are the path prefixes an agent domain serves, each with
// the prefix of the agent's address it is served as: the HTTP+JSON
// binding's routes with a task id, and 0.3's binding under /v1.
var domainPrefixes = map[string]string{
	"/tasks/": "/a/{handle}/tasks/",
	"/v1/":    "/a/{handle}/v1/",
}

// domainPages are the sign-in pages of an agent domain, each with the
// page of the deployment it sends the browser to (303 See Other, the
// query kept): the pairing page and the MCP consent page of the agent's
// address, and the console.
var domainPages = map[string]string{
	"/device":          "/a/{handle}/device",
	"/oauth/authorize": "/a/{handle}/oauth/authorize",
	"/dashboard":       "/dashboard",
}

// DomainRoute is one path of an agent domain, for the authorization
// matrix and the docs: what it is served as (Serves, a path of the
// agent's address) or where it sends the browser (Redirect). Paths not
// listed answer 404.
type DomainRoute struct {
	Path     string
	Serves   string
	Redirect string
}

// DomainRoutes returns every path an agent domain serves or redirects,
// sorted by path; /dashboard also stands for the paths under it, and a
// path ending in {rest...} for every path under its prefix.
func DomainRoutes() []DomainRoute {
	var out []DomainRoute
	for p, to := range domainPaths {
		out = append(out, DomainRoute{Path: p, Serves: to})
	}
	for p, to := range domainPrefixes {
		out = append(out, DomainRoute{Path: p + "{rest...}", Serves: to + "{rest...}"})
	}
	for p, to := range domainPages {
		out = append(out, DomainRoute{Path: p, Redirect: to})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// AgentDomains returns next behind the agent domains: a request whose
// Host (without its port, in any case; X-Forwarded-Host behind a trusted
// proxy, Config.TrustForwarded) is an agent's domain is answered
// as that agent's (above); any other request, to the deployment's own
// names or to a host no agent holds, goes to next as it came. Agent
// domains are served only while the deployment's own address is
// configured (Config.PublicURL or DeploymentDomains): otherwise the
// deployment's host is taken from each request and could not be told
// from an agent's.
func (s *Face) AgentDomains(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := s.URLs.Host(r)
		if !s.URLs.Known() || host == "" || s.URLs.Own(host) {
			next.ServeHTTP(w, r)
			return
		}
		agent, err := s.Agents.FindAgentByDomain(r.Context(), host)
		if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
			next.ServeHTTP(w, r)
			return
		}
		r = r.WithContext(publicurl.WithAgentDomain(r.Context(), host))
		if err == nil && !agent.AccountDisabled {
			if isGRPC(r) {
				s.serveGRPC(w, r, agent)
				return
			}
			if to, ok := domainPaths[r.URL.Path]; ok {
				next.ServeHTTP(w, atPath(r, strings.Replace(to, "{handle}", agent.Handle, 1)))
				return
			}
			if to, ok := domainPrefix(r.URL.Path); ok {
				next.ServeHTTP(w, atPath(r, strings.Replace(to, "{handle}", agent.Handle, 1)))
				return
			}
		}
		s.Observe(w, r, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case err != nil:
				s.WriteError(w, r, err)
			case agent.AccountDisabled:
				httpapi.WriteJSON(w, http.StatusNotFound, ownerapi.Error{Error: "no agent at this address"})
			default:
				s.serveDomainPage(w, r, agent)
			}
		}))
	})
}

// domainPrefix returns the path of the agent's address that path, under
// one of domainPrefixes, is served as.
func domainPrefix(path string) (string, bool) {
	for p, to := range domainPrefixes {
		if rest, ok := strings.CutPrefix(path, p); ok {
			return to + rest, true
		}
	}
	return "", false
}

// atPath returns r as a request for path: its URL's path changed, the
// rest as it came.
func atPath(r *http.Request, path string) *http.Request {
	r2 := r.Clone(r.Context())
	r2.URL.Path, r2.URL.RawPath = path, ""
	return r2
}

// serveDomainPage sends a browser at a sign-in page of an agent domain to
// the same page on the deployment's own host, and answers 404 at any
// other path. The MCP consent page gets the resource the client asked
// for at the domain, when it named none: the authorization is for the
// domain's MCP endpoint.
func (s *Face) serveDomainPage(w http.ResponseWriter, r *http.Request, agent *switchboard.Agent) {
	path := r.URL.Path
	page, ok := domainPages[path]
	if !ok && strings.HasPrefix(path, "/dashboard/") {
		page, ok = path, true
	}
	if !ok {
		httpapi.WriteJSON(w, http.StatusNotFound, ownerapi.Error{Error: "not found: an agent domain serves its agent's address only"})
		return
	}
	query := r.URL.RawQuery
	if path == "/oauth/authorize" {
		q := r.URL.Query()
		if q.Get("resource") == "" {
			q.Set("resource", s.URLs.DomainBase(r, agent.Domain)+"/mcp")
			query = q.Encode()
		}
	}
	to := s.BaseURL(r) + strings.Replace(page, "{handle}", url.PathEscape(agent.Handle), 1)
	if query != "" {
		to += "?" + query
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, to, http.StatusSeeOther)
}
