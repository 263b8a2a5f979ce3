package oauthhttp

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/mcpauth"
	"github.com/switchboard-dev/switchboard/pairing"
)

// Face serves the OAuth endpoints of the addresses and of the root.
type Face struct {
	*httpapi.Env
	// Pairing runs the device authorization grant; nil: no address takes
	// pairing requests (the device grant's routes answer 404).
	Pairing *pairing.Service
	// OAuth lets MCP clients get MCP tokens; nil when MCP or its OAuth is
	// off: then no MCP OAuth route is mounted.
	OAuth *mcpauth.Service

	// What the routes mounted with or without a service ask, decided once
	// in New: the service's answer, or that of a server without it.

	// takesPairing says whether the agent takes pairing requests: never
	// without pairing.
	takesPairing func(agent *switchboard.Agent) bool
	// mcpOAuth says that MCP clients may get MCP tokens by OAuth.
	mcpOAuth bool
	// grants answer the token requests of the grant types MCP's OAuth
	// serves, by grant type; none without it.
	grants map[string]func(w http.ResponseWriter, r *http.Request, form url.Values)
	// otherGrant answers a token request of any other grant type: the
	// device code grant of pairing; 404 without pairing.
	otherGrant func(w http.ResponseWriter, r *http.Request, form url.Values)
	// polls counts token requests per address, with pairing's polls;
	// without pairing none is limited.
	polls switchboard.RateLimiter
}

// New returns the OAuth face. pairings or oauth may be nil (Face).
func New(env *httpapi.Env, pairings *pairing.Service, oauth *mcpauth.Service) *Face {
	s := &Face{Env: env, Pairing: pairings, OAuth: oauth, takesPairing: takesNoPairing, polls: unlimited{}}
	s.otherGrant = func(w http.ResponseWriter, r *http.Request, _ url.Values) { s.NotFound(w, r) }
	if pairings != nil {
		s.takesPairing, s.otherGrant = pairing.Enabled, s.handleDeviceGrant
		if pairings.Polls != nil {
			s.polls = pairings.Polls
		}
	}
	if oauth != nil {
		s.mcpOAuth = true
		s.grants = map[string]func(http.ResponseWriter, *http.Request, url.Values){
			"authorization_code": s.handleMCPGrant, "refresh_token": s.handleMCPGrant}
	}
	return s
}

// takesNoPairing: without pairing, no agent takes pairing requests.
func takesNoPairing(*switchboard.Agent) bool { return false }

// unlimited is the count of a server without a limit: it allows all.
type unlimited struct{}

func (unlimited) Allow(context.Context, string) (bool, time.Duration, error) { return true, 0, nil }

// Routes returns the face's endpoints: pairing's and the metadata at each
// address and at the root for the default agent; with MCP's OAuth,
// registration, revocation and the MCP endpoints' resource metadata.
func (s *Face) Routes() []httpapi.Endpoint {
	serve, public := httpapi.Serve, httpapi.AccessPublic
	// Pairing (docs/pairing.md): a peer obtains its own token with the
	// device authorization grant, at the address and at the root for the
	// default agent; OAuth metadata (RFC 8414, RFC 9728) at the address
	// and by well-known path insertion. The token endpoints are also MCP
	// clients'.
	table := []httpapi.Endpoint{
		serve("POST", "/a/{handle}/oauth/token", public, s.handleOAuthToken),
		serve("GET", "/a/{handle}/.well-known/oauth-authorization-server", public, s.handleAuthServerMetadata),
		serve("GET", "/.well-known/oauth-authorization-server/a/{handle}", public, s.handleAuthServerMetadata),
		serve("POST", "/oauth/token", public, s.handleOAuthToken),
		serve("GET", "/.well-known/oauth-authorization-server", public, s.handleAuthServerMetadata),
	}
	if s.Pairing != nil {
		table = append(table,
			serve("POST", "/a/{handle}/oauth/device_authorization", public, s.handleDeviceAuthorization),
			serve("GET", "/a/{handle}/.well-known/oauth-protected-resource", public, s.handleResourceMetadata),
			serve("GET", "/.well-known/oauth-protected-resource/a/{handle}", public, s.handleResourceMetadata),
			serve("POST", "/oauth/device_authorization", public, s.handleDeviceAuthorization),
			serve("GET", "/.well-known/oauth-protected-resource", public, s.handleResourceMetadata),
		)
	}
	if s.OAuth != nil {
		// OAuth 2.1 for MCP clients (docs/mcp.md, "OAuth"): registration
		// and revocation at each address (its MCP endpoint) and at the
		// root (the account endpoint); the token endpoints are pairing's;
		// authorization is the console's consent page.
		table = append(table,
			serve("POST", "/a/{handle}/oauth/register", public, s.handleOAuthRegister),
			serve("POST", "/a/{handle}/oauth/revoke", public, s.handleOAuthRevoke),
			serve("POST", "/oauth/register", public, s.handleOAuthRegister),
			serve("POST", "/oauth/revoke", public, s.handleOAuthRevoke),
			serve("GET", "/.well-known/oauth-protected-resource/a/{handle}/mcp", public, s.handleMCPResourceMetadata),
			serve("GET", "/.well-known/oauth-protected-resource/mcp", public, s.handleMCPResourceMetadata),
		)
	}
	return table
}
