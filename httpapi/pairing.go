package httpapi

import (
	"net/http"

	"github.com/switchboard-dev/switchboard"
)

// The paths of pairing's endpoints under an issuer: an agent's address, or
// the base for the default agent. Cards, metadata, 401 hints and the
// landing page name them; the OAuth face (package oauthhttp) serves them.
const (
	DeviceAuthorizationPath = "/oauth/device_authorization"
	OAuthTokenPath          = "/oauth/token"
	DevicePagePath          = "/device"
	AuthServerMetadataPath  = "/.well-known/oauth-authorization-server"
)

// DeviceGrantType is the grant type of RFC 8628's token requests.
const DeviceGrantType = "urn:ietf:params:oauth:grant-type:device_code"

// PairingMode returns the agent's pairing mode, human when unset.
func PairingMode(g *switchboard.Agent) switchboard.PairingMode {
	if g.Pairing == "" {
		return switchboard.PairingHuman
	}
	return g.Pairing
}

// PairingHint is the data of a 401 from an agent that takes pairing
// requests. In 0.3 (an object) it is {"pairing": {...}}; in 1.0 (a list
// of details) the ErrorInfo's metadata carries the same URLs, as strings.
func (s *Env) PairingHint(r *http.Request, agent *switchboard.Agent, data any, shape switchboard.ProtocolVersion) any {
	issuer := s.ReachedBase(r, agent)
	hint := map[string]string{
		"device_authorization_endpoint": issuer + DeviceAuthorizationPath,
		"token_endpoint":                issuer + OAuthTokenPath,
		"resource_metadata":             s.ResourceMetadataURL(r, agent),
		"grant_type":                    DeviceGrantType,
	}
	if info, ok := data.([]map[string]any); ok && shape == switchboard.ProtocolV1 && len(info) > 0 {
		info[0]["metadata"] = hint
		return info
	}
	return map[string]any{"pairing": hint}
}
