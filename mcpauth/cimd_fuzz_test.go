package mcpauth_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/mcpauth"
	"github.com/switchboard-dev/switchboard/pairing"
)

// documentSeeds are documents FuzzParseClientDocument starts from; each
// is also checked as a test case (TestCIMDDocumentSeeds).
var documentSeeds = []struct {
	body string
	ok   bool
}{
	{`{"client_id":"` + docURL + `","client_name":"Doc","redirect_uris":["http://127.0.0.1/cb"],"grant_types":["authorization_code","refresh_token"],"token_endpoint_auth_method":"none"}`, true},
	{`{"client_id":"` + docURL + `","redirect_uris":["https://app.example/cb","http://[::1]:8080/cb","http://localhost/x"]}`, true},
	{`{"client_id":"` + docURL + `","redirect_uris":["https://app.example/cb"],"client_name":"\u202eevil\u0000"}`, true},
	{`{"client_id":"` + docURL + `/","redirect_uris":["https://app.example/cb"]}`, false},
	{`{"client_id":"` + docURL + `","redirect_uris":["https://app.example/cb"],"client_secret":"x"}`, false},
	{`{"client_id":"` + docURL + `","redirect_uris":["https://app.example/cb"],"token_endpoint_auth_method":"private_key_jwt"}`, false},
	{`{"client_id":"` + docURL + `","redirect_uris":["https://app.example/cb"],"grant_types":["client_credentials"]}`, false},
	{`{"client_id":"` + docURL + `","redirect_uris":["http://evil.example/cb"]}`, false},
	{`{"client_id":"` + docURL + `","redirect_uris":"https://app.example/cb"}`, false},
	{`{"client_id":"` + docURL + `","redirect_uris":[` + strings.TrimSuffix(strings.Repeat(`"https://a.example/c",`, 11), ",") + `]}`, false},
	{`{"client_id":null,"redirect_uris":["https://app.example/cb"]}`, false},
	{`[]`, false}, {`null`, false}, {`{`, false}, {``, false}, {`"` + docURL + `"`, false},
}

// TestCIMDDocumentSeeds: the fuzzer's seeds are accepted or refused as
// they should be.
func TestCIMDDocumentSeeds(t *testing.T) {
	for _, s := range documentSeeds {
		if _, err := mcpauth.ParseClientDocument([]byte(s.body), docURL); (err == nil) != s.ok {
			t.Errorf("%s: %v, want ok %v", s.body, err, s.ok)
		}
	}
}

// FuzzParseClientDocument: any body is parsed without panic; a refusal
// is an OAuth error of RFC 7591; an accepted document names its URL as
// client_id and holds 1 to 10 redirect URIs that CheckRedirectURI
// accepts, and a name.
func FuzzParseClientDocument(f *testing.F) {
	for _, s := range documentSeeds {
		f.Add([]byte(s.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		reg, err := mcpauth.ParseClientDocument(body, docURL)
		if err != nil {
			var oe *pairing.Error
			if !errors.As(err, &oe) || (oe.Code != mcpauth.ErrInvalidRedirectURI && oe.Code != mcpauth.ErrInvalidClientMetadata) {
				t.Fatalf("not a metadata error: %v", err)
			}
			return
		}
		if !strings.Contains(string(body), "client_id") || len(reg.RedirectURIs) < 1 || len(reg.RedirectURIs) > 10 || reg.Name == "" {
			t.Fatalf("accepted %+v", reg)
		}
		for _, u := range reg.RedirectURIs {
			if err := mcpauth.CheckRedirectURI(u); err != nil {
				t.Fatalf("accepted the redirect URI %q: %v", u, err)
			}
		}
	})
}
