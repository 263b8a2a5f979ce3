package mcpauth_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpauth"
	"github.com/switchboard-dev/switchboard/pairing"
)

// TestParseRegistration: a registration is a public client (no secret,
// token_endpoint_auth_method none) of the authorization code grant, with
// 1 to 5 redirect URIs that CheckRedirectURI takes; anything else is
// refused with the RFC 7591 error code.
func TestParseRegistration(t *testing.T) {
	uri := `"http://127.0.0.1/cb"`
	six := `[` + strings.Repeat(uri+`,`, 5) + uri + `]`
	for body, want := range map[string]string{
		`{"redirect_uris":[]}`:                        mcpauth.ErrInvalidRedirectURI,
		`{"redirect_uris":` + six + `}`:               mcpauth.ErrInvalidRedirectURI,
		`{"redirect_uris":["http://app.example/cb"]}`: mcpauth.ErrInvalidRedirectURI,
		`{"redirect_uris":[` + uri + `],"token_endpoint_auth_method":"client_secret_basic"}`: mcpauth.ErrInvalidClientMetadata,
		`{"redirect_uris":[` + uri + `],"token_endpoint_auth_method":""}`:                    mcpauth.ErrInvalidClientMetadata,
		`{"redirect_uris":[` + uri + `],"grant_types":["implicit"]}`:                         mcpauth.ErrInvalidClientMetadata,
		`{"redirect_uris":[` + uri + `],"grant_types":["authorization_code","implicit"]}`:    mcpauth.ErrInvalidClientMetadata,
		`{"redirect_uris":[` + uri + `],"grant_types":["refresh_token"]}`:                    mcpauth.ErrInvalidClientMetadata,
		`{"redirect_uris":[` + uri + `],"response_types":["token"]}`:                         mcpauth.ErrInvalidClientMetadata,
		`{"redirect_uris":[` + uri + `],"application_type":"browser"}`:                       mcpauth.ErrInvalidClientMetadata,
		`[]`: mcpauth.ErrInvalidClientMetadata,
	} {
		_, err := mcpauth.ParseRegistration([]byte(body))
		var oe *pairing.Error
		if !errors.As(err, &oe) || oe.Code != want {
			t.Errorf("%s: %v, want %s", body, err, want)
		}
	}
	for body, appType := range map[string]string{
		`{"redirect_uris":[` + uri + `]}`: "native",
		`{"redirect_uris":[` + uri + `,"https://app.example/cb"],"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"],"response_types":["code"],"application_type":"web"}`: "web",
	} {
		reg, err := mcpauth.ParseRegistration([]byte(body))
		if err != nil || reg.ApplicationType != appType || reg.Name != "MCP client" {
			t.Errorf("%s: %+v, %v", body, reg, err)
		}
	}
}

// TestCheckRedirectURI: a redirect URI is https, or http on a loopback
// host; at most 512 bytes, without fragment or user information.
func TestCheckRedirectURI(t *testing.T) {
	for u, ok := range map[string]bool{
		"https://app.example/cb":                          true,
		"http://127.0.0.1:8080/cb":                        true,
		"http://[::1]/cb":                                 true,
		"http://localhost/cb":                             true,
		"https://app.example/" + strings.Repeat("p", 512): false,
		"https://app.example/cb#x":                        false,
		"https://app.example/cb#":                         false,
		"https://user@app.example/cb":                     false,
		"http://app.example/cb":                           false,
		"ftp://app.example/cb":                            false,
		"/cb":                                             false,
	} {
		if got := mcpauth.CheckRedirectURI(u) == nil; got != ok {
			t.Errorf("%q: accepted %v, want %v", u, got, ok)
		}
	}
}

// TestMatchRedirectURI: a redirect URI matches a registered one exactly,
// or, for http on a loopback host, on another port: the same host, path
// and query.
func TestMatchRedirectURI(t *testing.T) {
	registered := []string{"http://127.0.0.1/cb?x=1", "https://app.example/cb"}
	for u, ok := range map[string]bool{
		"http://127.0.0.1/cb?x=1":         true,
		"http://127.0.0.1:5555/cb?x=1":    true,
		"https://app.example/cb":          true,
		"https://app.example:444/cb":      false,
		"https://127.0.0.1:5555/cb?x=1":   false,
		"http://localhost:5555/cb?x=1":    false,
		"http://[::1]:5555/cb?x=1":        false,
		"http://127.0.0.1:5555/other?x=1": false,
		"http://127.0.0.1:5555/cb?x=2":    false,
		"http://127.0.0.1:5555/cb":        false,
		"http://127.0.0.1:5555/cb?x=1#":   false,
	} {
		if got := mcpauth.MatchRedirectURI(registered, u); got != ok {
			t.Errorf("%q: matched %v, want %v", u, got, ok)
		}
	}
}
