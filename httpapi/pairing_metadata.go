package httpapi

import (
	"net/http"

	"github.com/switchboard-dev/switchboard"
)

// authServerMetadata is an agent address's OAuth 2.0 authorization server
// metadata (RFC 8414): the issuer is the address.
type authServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	DeviceAuthorizationEndpoint       string   `json:"device_authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	ScopesSupported                   []string `json:"scopes_supported"`
	ServiceDocumentation              string   `json:"service_documentation,omitempty"`
}

// protectedResourceMetadata is an agent address's OAuth 2.0 protected
// resource metadata (RFC 9728): the resource is the address.
type protectedResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ScopesSupported        []string `json:"scopes_supported"`
	ResourceName           string   `json:"resource_name"`
}

// handleAuthServerMetadata serves the RFC 8414 metadata of an agent's
// address, at {address}/.well-known/oauth-authorization-server and at
// {base}/.well-known/oauth-authorization-server/a/{handle}.
func (s *Server) handleAuthServerMetadata(w http.ResponseWriter, r *http.Request) {
	agent, ok := s.pairingAgent(w, r)
	if !ok {
		return
	}
	issuer := s.addressBase(r, agent)
	setCORS(w)
	s.varyForwarded(w)
	writeJSON(w, http.StatusOK, authServerMetadata{
		Issuer:                            issuer,
		DeviceAuthorizationEndpoint:       issuer + "/oauth/device_authorization",
		TokenEndpoint:                     issuer + "/oauth/token",
		GrantTypesSupported:               []string{deviceGrantType},
		ResponseTypesSupported:            []string{},
		TokenEndpointAuthMethodsSupported: []string{"none"},
		ScopesSupported:                   []string{"a2a"},
	})
}

// handleResourceMetadata serves the RFC 9728 metadata of an agent's
// address, at {address}/.well-known/oauth-protected-resource and at
// {base}/.well-known/oauth-protected-resource/a/{handle}.
func (s *Server) handleResourceMetadata(w http.ResponseWriter, r *http.Request) {
	agent, ok := s.pairingAgent(w, r)
	if !ok {
		return
	}
	addr := s.addressBase(r, agent)
	name := agent.Name
	if name == "" {
		name = agent.Handle
	}
	setCORS(w)
	s.varyForwarded(w)
	writeJSON(w, http.StatusOK, protectedResourceMetadata{
		Resource: addr, AuthorizationServers: []string{addr}, BearerMethodsSupported: []string{"header"},
		ScopesSupported: []string{"a2a"}, ResourceName: name,
	})
}

// pairingHint is the data of a 401 from an agent that takes pairing
// requests. In 0.3 (an object) it is {"pairing": {...}}; in 1.0 (a list
// of details) the ErrorInfo's metadata carries the same URLs, as strings.
func (s *Server) pairingHint(r *http.Request, agent *switchboard.Agent, data any, shape switchboard.ProtocolVersion) any {
	issuer := s.addressBase(r, agent)
	hint := map[string]string{
		"device_authorization_endpoint": issuer + "/oauth/device_authorization",
		"token_endpoint":                issuer + "/oauth/token",
		"resource_metadata":             s.resourceMetadataURL(r, agent),
		"grant_type":                    deviceGrantType,
	}
	if info, ok := data.([]map[string]any); ok && shape == switchboard.ProtocolV1 && len(info) > 0 {
		info[0]["metadata"] = hint
		return info
	}
	return map[string]any{"pairing": hint}
}
