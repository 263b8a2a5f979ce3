package front_test

import (
	"reflect"
	"testing"

	"github.com/switchboard-dev/switchboard/front"
)

func TestParseCardAuth(t *testing.T) {
	tests := map[string]struct {
		security string // JSON fields of the card
		want     front.UpstreamAuth
	}{
		"None": {``, front.UpstreamAuth{Schemes: []string{}, Unsupported: []string{}}},
		"V1Bearer": {`"securitySchemes": {"b": {"httpAuthSecurityScheme": {"scheme": "bearer"}}},
			"securityRequirements": [{"schemes": {"b": {"list": []}}}]`,
			front.UpstreamAuth{Bearer: new(true), Schemes: []string{"b: http bearer"}, Unsupported: []string{}}},
		"V1OAuth2": {`"securitySchemes": {"o": {"oauth2SecurityScheme": {"flows": {}}}},
			"securityRequirements": [{"schemes": {"o": {"list": ["read"]}}}]`,
			front.UpstreamAuth{Bearer: new(true), Schemes: []string{"o: oauth2"}, Unsupported: []string{}}},
		"V1OpenIDConnect": {`"securitySchemes": {"oidc": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://id.example.org"}}},
			"securityRequirements": [{"schemes": {"oidc": {}}}]`,
			front.UpstreamAuth{Bearer: new(true), Schemes: []string{"oidc: openIdConnect"}, Unsupported: []string{}}},
		"V1AnonymousAllowed": {`"securitySchemes": {"b": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
			"securityRequirements": [{"schemes": {"b": {}}}, {"schemes": {}}]`,
			front.UpstreamAuth{Bearer: new(false), Schemes: []string{"b: http bearer"}, Unsupported: []string{}}},
		"V1APIKeyOnly": {`"securitySchemes": {"k": {"apiKeySecurityScheme": {"name": "X-Key"}}, "m": {"mtlsSecurityScheme": {}}},
			"securityRequirements": [{"schemes": {"k": {}}}]`,
			front.UpstreamAuth{Bearer: new(false), Schemes: []string{"k: apiKey", "m: mutualTLS"}, Unsupported: []string{"k: apiKey", "m: mutualTLS"}}},
		"V1SchemesWithoutRequirements": {`"securitySchemes": {"b": {"httpAuthSecurityScheme": {"scheme": "bearer"}}}`,
			front.UpstreamAuth{Bearer: new(true), Schemes: []string{"b: http bearer"}, Unsupported: []string{}}},
		"V1UnknownScheme": {`"securitySchemes": {"x": {"somethingElse": {}}}, "securityRequirements": [{"schemes": {"x": {}}}]`,
			front.UpstreamAuth{Bearer: new(false), Schemes: []string{"x: unknown"}, Unsupported: []string{"x: unknown"}}},
		"V03Bearer": {`"securitySchemes": {"b": {"type": "http", "scheme": "bearer"}}, "security": [{"b": []}]`,
			front.UpstreamAuth{Bearer: new(true), Schemes: []string{"b: http bearer"}, Unsupported: []string{}}},
		"V03BasicOnly": {`"securitySchemes": {"basic": {"type": "http", "scheme": "basic"}}, "security": [{"basic": []}]`,
			front.UpstreamAuth{Bearer: new(false), Schemes: []string{"basic: http basic"}, Unsupported: []string{"basic: http basic"}}},
		"V03Anonymous": {`"securitySchemes": {"o": {"type": "openIdConnect"}}, "security": [{}, {"o": []}]`,
			front.UpstreamAuth{Bearer: new(false), Schemes: []string{"o: openIdConnect"}, Unsupported: []string{}}},
		"V03EmptySecurity": {`"security": []`,
			front.UpstreamAuth{Bearer: new(false), Schemes: []string{}, Unsupported: []string{}}},
		"V03APIKeyAndBearer": {`"securitySchemes": {"k": {"type": "apiKey"}, "b": {"type": "http", "scheme": "bearer"}}, "security": [{"k": [], "b": []}]`,
			front.UpstreamAuth{Bearer: new(true), Schemes: []string{"b: http bearer", "k: apiKey"}, Unsupported: []string{"k: apiKey"}}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			raw := `{"name": "x"`
			if tt.security != "" {
				raw += ", " + tt.security
			}
			c, err := front.ParseCard([]byte(raw+"}"), testUpstream, "", testPublic)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.Auth, tt.want) {
				t.Errorf("Auth = %+v (bearer %v), want %+v (bearer %v)", c.Auth, deref(c.Auth.Bearer), tt.want, deref(tt.want.Bearer))
			}
		})
	}
}

func deref(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}
