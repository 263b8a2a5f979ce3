package pairing

import "github.com/modelcontextprotocol/go-sdk/oauthex"

// ServerMetadata is an address's OAuth 2.0 authorization server metadata
// (RFC 8414): the go-sdk's oauthex.AuthServerMeta, extended with the
// device authorization endpoint (RFC 8628) it lacks. httpapi serves it; a
// client (switchboard pair) reads it.
//
// Two fields are given again, with omitempty, to hide the embedded ones:
// an authorization server that serves only the device grant has no
// authorization endpoint (RFC 8414 requires one only when a grant uses
// it), and none has a JWKS (its tokens are opaque); oauthex writes both
// always, as empty strings.
type ServerMetadata struct {
	oauthex.AuthServerMeta

	// DeviceAuthorizationEndpoint is the RFC 8628 device authorization
	// endpoint, while the address takes pairing requests.
	DeviceAuthorizationEndpoint string `json:"device_authorization_endpoint,omitempty"`

	// AuthorizationEndpoint hides oauthex's, to be left out when empty.
	AuthorizationEndpoint string `json:"authorization_endpoint,omitempty"`

	// JWKSURI hides oauthex's, to be left out when empty.
	JWKSURI string `json:"jwks_uri,omitempty"`
}
