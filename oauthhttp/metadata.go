package oauthhttp

import (
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/mcpauth"
	"github.com/switchboard-dev/switchboard/ownerapi"
	"github.com/switchboard-dev/switchboard/pairing"
)

// handleAuthServerMetadata serves the RFC 8414 metadata of an agent's
// address, at {address}/.well-known/oauth-authorization-server and at
// {base}/.well-known/oauth-authorization-server/a/{handle}: the pairing
// endpoints while the agent takes pairing requests, the MCP OAuth
// endpoints while its MCP endpoint is served. At the root, the issuer is
// the base: the default agent's pairing, and the OAuth of the account
// endpoint {base}/mcp. 404 when neither is served.
func (s *Face) handleAuthServerMetadata(w http.ResponseWriter, r *http.Request) {
	pairs, mcp, issuer, ok := s.metadataOf(w, r)
	if !ok {
		return
	}
	md := pairing.ServerMetadata{AuthServerMeta: oauthex.AuthServerMeta{Issuer: issuer, TokenEndpoint: issuer + httpapi.OAuthTokenPath,
		GrantTypesSupported: []string{}, ResponseTypesSupported: []string{}, TokenEndpointAuthMethodsSupported: []string{"none"},
		ScopesSupported: []string{}}}
	if pairs {
		md.DeviceAuthorizationEndpoint = issuer + httpapi.DeviceAuthorizationPath
		md.GrantTypesSupported = append(md.GrantTypesSupported, httpapi.DeviceGrantType)
		md.ScopesSupported = append(md.ScopesSupported, "a2a")
	}
	if mcp {
		md.AuthorizationEndpoint, md.RegistrationEndpoint = issuer+"/oauth/authorize", issuer+"/oauth/register"
		md.RevocationEndpoint, md.RevocationEndpointAuthMethodsSupported = issuer+"/oauth/revoke", []string{"none"}
		md.GrantTypesSupported = append(md.GrantTypesSupported, "authorization_code", "refresh_token")
		md.ResponseTypesSupported = []string{"code"}
		md.CodeChallengeMethodsSupported = []string{"S256"}
		md.ScopesSupported = append(md.ScopesSupported, mcpauth.Scope, "offline_access")
		md.AuthorizationResponseIssParameterSupported = true
		md.ClientIDMetadataDocumentSupported = true
	}
	httpapi.SetCORS(w)
	s.VaryForwarded(w)
	httpapi.WriteJSON(w, http.StatusOK, md)
}

// metadataOf says what the authorization server of the path's issuer
// serves: pairing (the agent's, or the default agent's at the root), MCP
// OAuth (the agent's endpoint, or the account endpoint at the root). It
// answers 404 itself when neither.
func (s *Face) metadataOf(w http.ResponseWriter, r *http.Request) (pairs, mcp bool, issuer string, ok bool) {
	handle := r.PathValue("handle")
	if handle == "" {
		handle = s.Cfg.DefaultAgent
	}
	var agent *switchboard.Agent
	if handle != "" {
		g, err := s.Agents.FindAgentByHandle(r.Context(), strings.ToLower(handle))
		if err != nil && switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
			s.WriteError(w, r, err)
			return false, false, "", false
		}
		if err == nil && !g.AccountDisabled {
			agent = g
		}
	}
	pairs = agent != nil && s.takesPairing(agent)
	if r.PathValue("handle") == "" {
		mcp, issuer = s.mcpOAuth, s.BaseURL(r)
	} else if agent != nil {
		mcp, issuer = s.mcpOAuth && !agent.MCPOff, s.ReachedBase(r, agent)
	}
	if !pairs && !mcp {
		httpapi.WriteJSON(w, http.StatusNotFound, ownerapi.Error{Error: "no authorization server at this address"})
		return false, false, "", false
	}
	return pairs, mcp, issuer, true
}

// handleResourceMetadata serves the RFC 9728 metadata of an agent's
// address, at {address}/.well-known/oauth-protected-resource and at
// {base}/.well-known/oauth-protected-resource/a/{handle}.
func (s *Face) handleResourceMetadata(w http.ResponseWriter, r *http.Request) {
	agent, ok := s.pairingAgent(w, r)
	if !ok {
		return
	}
	addr := s.ReachedBase(r, agent)
	name := agent.Name
	if name == "" {
		name = agent.Handle
	}
	httpapi.SetCORS(w)
	s.VaryForwarded(w)
	httpapi.WriteJSON(w, http.StatusOK, &oauthex.ProtectedResourceMetadata{
		Resource: addr, AuthorizationServers: []string{addr}, BearerMethodsSupported: []string{"header"},
		ScopesSupported: []string{"a2a"}, ResourceName: name,
	})
}
