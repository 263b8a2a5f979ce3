package pairing_test

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/switchboard-dev/switchboard/pairing"
)

// TestServerMetadataJSON: the RFC 8414 document of an address that serves
// only the device grant names its device endpoint and no authorization
// endpoint or JWKS (oauthex would write both as ""); one that serves the
// code grant too names its authorization endpoint; a client reads back
// what the server wrote.
func TestServerMetadataJSON(t *testing.T) {
	const addr = "https://sb.example/a/alice"
	device := pairing.ServerMetadata{
		AuthServerMeta:              oauthex.AuthServerMeta{Issuer: addr, TokenEndpoint: addr + "/oauth/token", GrantTypesSupported: []string{"urn:ietf:params:oauth:grant-type:device_code"}},
		DeviceAuthorizationEndpoint: addr + "/oauth/device_authorization",
	}
	got := encode(t, device)
	for _, absent := range []string{"authorization_endpoint", "jwks_uri"} {
		if _, ok := got[absent]; ok {
			t.Errorf("device-only metadata has %s: %v", absent, got)
		}
	}
	if got["device_authorization_endpoint"] != addr+"/oauth/device_authorization" || got["token_endpoint"] != addr+"/oauth/token" || got["issuer"] != addr {
		t.Errorf("device-only metadata: %v", got)
	}

	both := device
	both.AuthorizationEndpoint = addr + "/oauth/authorize"
	if got := encode(t, both); got["authorization_endpoint"] != addr+"/oauth/authorize" {
		t.Errorf("metadata with the code grant: authorization_endpoint %v", got["authorization_endpoint"])
	}

	b, err := json.Marshal(both)
	if err != nil {
		t.Fatal(err)
	}
	var read pairing.ServerMetadata
	if err := json.Unmarshal(b, &read); err != nil {
		t.Fatal(err)
	}
	if read.DeviceAuthorizationEndpoint != both.DeviceAuthorizationEndpoint || read.AuthorizationEndpoint != both.AuthorizationEndpoint ||
		read.TokenEndpoint != both.TokenEndpoint || read.Issuer != addr {
		t.Errorf("read back %+v, wrote %s", read, b)
	}
}

func encode(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
