package mcpauth_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpauth"
	"github.com/switchboard-dev/switchboard/pairing"
)

// FuzzParseRegistration: any body is parsed without panic; a refusal is
// an OAuth error of RFC 7591; an accepted registration holds 1 to 5
// redirect URIs that CheckRedirectURI accepts, a name, and a known
// application type.
func FuzzParseRegistration(f *testing.F) {
	for _, seed := range []string{
		`{"client_name":"Claude Code","redirect_uris":["http://localhost:33418/callback"],"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"],"response_types":["code"]}`,
		`{"redirect_uris":["https://app.example/cb","http://127.0.0.1/cb","http://[::1]:8080/x"],"application_type":"web"}`,
		`{"redirect_uris":["http://evil.example/cb"]}`,
		`{"redirect_uris":["https://app.example/cb#frag"]}`,
		`{"redirect_uris":["https://user@app.example/cb"]}`,
		`{"redirect_uris":[]}`,
		`{"redirect_uris":["https://app.example/cb"],"token_endpoint_auth_method":"client_secret_basic"}`,
		`{"redirect_uris":["https://app.example/cb"],"grant_types":["implicit"]}`,
		`{"redirect_uris":["https://app.example/cb"],"client_name":"\u202eevil\u0000"}`,
		`[]`, `null`, `{`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		reg, err := mcpauth.ParseRegistration(body)
		if err != nil {
			var oe *pairing.Error
			if !errors.As(err, &oe) || (oe.Code != mcpauth.ErrInvalidRedirectURI && oe.Code != mcpauth.ErrInvalidClientMetadata) {
				t.Fatalf("not a registration error: %v", err)
			}
			return
		}
		if len(reg.RedirectURIs) < 1 || len(reg.RedirectURIs) > 5 || reg.Name == "" ||
			(reg.ApplicationType != "native" && reg.ApplicationType != "web") {
			t.Fatalf("accepted %+v", reg)
		}
		for _, u := range reg.RedirectURIs {
			if err := mcpauth.CheckRedirectURI(u); err != nil {
				t.Fatalf("accepted the redirect URI %q: %v", u, err)
			}
		}
	})
}

// FuzzRedirectURI: a redirect URI that matches a registered one is the
// registered one, or differs from a registered loopback URI only in its
// port; and building the answer's URL never panics.
func FuzzRedirectURI(f *testing.F) {
	f.Add("http://127.0.0.1/callback", "http://127.0.0.1:5555/callback")
	f.Add("http://localhost:1/cb?x=1", "http://localhost:2/cb?x=1")
	f.Add("https://app.example/cb", "https://app.example:444/cb")
	f.Add("http://127.0.0.1/cb", "http://127.0.0.1.evil.example/cb")
	f.Add("http://localhost", "http://localhost:#")               // an empty fragment
	f.Add("htTp://localhost:/cb?x=1", "http://localhost:/cb?x=1") // a scheme's case does not matter
	f.Fuzz(func(t *testing.T, registered, got string) {
		if mcpauth.CheckRedirectURI(registered) != nil {
			return
		}
		if mcpauth.MatchRedirectURI([]string{registered}, got) && got != registered {
			if mcpauth.CheckRedirectURI(got) != nil || !strings.EqualFold(got[:7], "http://") || !strings.EqualFold(registered[:7], "http://") {
				t.Fatalf("%q matched %q", got, registered)
			}
		}
		_ = mcpauth.RedirectWith(got, map[string][]string{"code": {"c"}, "state": {got}})
	})
}
