package front_test

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/front"
)

func mustReadFile(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// checkClean fails unless the card, marshalled, is clean, while its raw
// source leaks everything in wantLeaks.
func checkClean(t *testing.T, c *front.Card, raw []byte, wantLeaks ...string) {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if leaks := front.Leaks(b, c.Scrubber()); len(leaks) != 0 {
		t.Errorf("Leaks(card) = %q, want none; card: %s", leaks, b)
	}
	leaks := front.Leaks(raw, c.Scrubber())
	for _, l := range wantLeaks {
		if !slices.Contains(leaks, l) {
			t.Errorf("Leaks(raw) = %q, want it to hold %q", leaks, l)
		}
	}
}

func TestParseCardV1(t *testing.T) {
	raw := mustReadFile(t, "testdata/card-v1-leaky.json")
	c, err := front.ParseCard(raw, testUpstream, testCardURL, testPublic)
	if err != nil {
		t.Fatal(err)
	}
	checkClean(t, c, raw, "http://10.20.30.40:8080/admin", "box.tail1234.ts.net", "agent.acme.example",
		"https://***@docs.example.org/", "https://[fe80::1%25en0]/book", "https://10.0.0.5/key",
		"https://rest.acme-rest.io/ext/v1", "wss://rpc.acme-grpc.io/stream", "https://10.0.0.1/secret")

	if got, want := c.Name, "Acme bot at "+rmHost; got != want {
		t.Errorf("Name = %q, want %q", got, want)
	}
	if got, want := c.Description, "Books rooms. Admin at "+rmURL+", mirror on "+rmHost+", health "+rmURL+"."; got != want {
		t.Errorf("Description = %q, want %q", got, want)
	}
	if got, want := c.Version, "2.1.0 ("+rmHost+")"; got != want {
		t.Errorf("Version = %q, want %q", got, want)
	}
	wantSkills := []a2a.AgentSkill{{
		ID: "book-" + rmHost, Name: "Book via " + rmURL,
		Description: "Calls " + rmURL + " and falls back to " + rmURL + ".",
		Tags:        []string{"rooms", rmHost},
		Examples:    []string{"Book room 4 (see " + rmURL + ").", "Ask " + rmHost},
		InputModes:  []string{"text/plain"}, OutputModes: []string{"application/json"},
	}}
	if !reflect.DeepEqual(c.Skills, wantSkills) {
		t.Errorf("Skills = %#v, want %#v", c.Skills, wantSkills)
	}
	if c.Provider != nil || c.DocumentationURL != "" || c.IconURL != "" {
		t.Errorf("Provider, DocumentationURL, IconURL = %v, %q, %q, want all dropped", c.Provider, c.DocumentationURL, c.IconURL)
	}
	wantExt := []a2a.AgentExtension{
		{URI: rmURL, Description: "see " + rmURL, Params: map[string]any{
			rmURL:       "value",
			"endpoint":  rmURL,
			"nested":    map[string]any{"deeper": []any{rmHost, map[string]any{rmHost: rmURL}}},
			"__proto__": map[string]any{"admin": rmURL},
			"count":     json.Number("3"),
		}},
		{URI: "urn:acme:ext:billing", Description: "Billing", Required: true},
	}
	if !reflect.DeepEqual(c.Extensions, wantExt) {
		t.Errorf("Extensions = %#v, want %#v", c.Extensions, wantExt)
	}
	if got, want := c.DefaultInputModes, []string{"text/plain", "application/json"}; !slices.Equal(got, want) {
		t.Errorf("DefaultInputModes = %q, want %q", got, want)
	}
	if got, want := c.DefaultOutputModes, []string{"image/png"}; !slices.Equal(got, want) {
		t.Errorf("DefaultOutputModes = %q, want %q", got, want)
	}
	if got, want := c.Versions, []string{"1.0"}; !slices.Equal(got, want) {
		t.Errorf("Versions = %q, want %q", got, want)
	}
	if !c.Streaming {
		t.Error("Streaming = false, want true")
	}
	wantAuth := front.UpstreamAuth{Bearer: new(true), Schemes: []string{"bearer: http bearer", "key: apiKey"}, Unsupported: []string{"key: apiKey"}}
	if !reflect.DeepEqual(c.Auth, wantAuth) {
		t.Errorf("Auth = %+v, want %+v", c.Auth, wantAuth)
	}
	if got, want := c.Interfaces, []front.Interface{{URL: "https://agent.acme.example/a2a", Binding: a2a.TransportProtocolJSONRPC, Version: "1.0"},
		{URL: "https://rpc.acme-grpc.io:9000", Binding: a2a.TransportProtocolGRPC, Version: "1.0"}, {URL: "https://rest.acme-rest.io/v1", Binding: a2a.TransportProtocolHTTPJSON, Version: "1.0"}}; !slices.Equal(got, want) {
		t.Errorf("Interfaces = %v, want %v", got, want)
	}
}

func TestParseCardV03(t *testing.T) {
	raw := mustReadFile(t, "testdata/card-v03-leaky.json")
	const upstream = "https://legacy.acme.example/rpc"
	c, err := front.ParseCard(raw, upstream, "", testPublic)
	if err != nil {
		t.Fatal(err)
	}
	checkClean(t, c, raw, "legacy.acme.example", "http://10.0.0.8/metrics", "box.tail1234.ts.net",
		"https://legacy.acme.example/docs", "http://localhost:3000", "https://legacy-grpc.acme-grpc.io/ext",
		"http://172.20.0.3/", "https://100.100.1.1/")

	if got, want := c.Description, "Runs on "+rmHost+"; metrics at "+rmURL+"; tailnet "+rmHost+"."; got != want {
		t.Errorf("Description = %q, want %q", got, want)
	}
	if got, want := c.Provider, (&a2a.AgentProvider{Org: "Acme", URL: "https://www.acme.example.org/"}); !reflect.DeepEqual(got, want) {
		t.Errorf("Provider = %+v, want %+v", got, want)
	}
	if got, want := c.DocumentationURL, ""; got != want {
		t.Errorf("DocumentationURL = %q, want %q", got, want)
	}
	if got, want := c.IconURL, "https://cdn.example.org/icon.png"; got != want {
		t.Errorf("IconURL = %q, want %q", got, want)
	}
	if got, want := c.Skills[0].Examples, []string{"what is at 100.100.1.1? see " + rmURL}; !slices.Equal(got, want) {
		t.Errorf("Examples = %q, want %q", got, want)
	}
	wantExt := []a2a.AgentExtension{{URI: rmURL, Params: map[string]any{rmURL: []any{rmHost}}}}
	if !reflect.DeepEqual(c.Extensions, wantExt) {
		t.Errorf("Extensions = %#v, want %#v", c.Extensions, wantExt)
	}
	if got, want := c.DefaultOutputModes, front.DefaultModes; !slices.Equal(got, want) {
		t.Errorf("DefaultOutputModes = %q, want %q", got, want)
	}
	if got, want := c.Versions, []string{"0.3"}; !slices.Equal(got, want) {
		t.Errorf("Versions = %q, want %q", got, want)
	}
	if c.Streaming {
		t.Error("Streaming = true, want false")
	}
	wantAuth := front.UpstreamAuth{Bearer: new(false), Schemes: []string{"basic: http basic", "oauth: oauth2"}, Unsupported: []string{"basic: http basic"}}
	if !reflect.DeepEqual(c.Auth, wantAuth) {
		t.Errorf("Auth = %+v, want %+v", c.Auth, wantAuth)
	}
	if got, want := c.Interfaces, []front.Interface{{URL: upstream, Binding: a2a.TransportProtocolJSONRPC, Version: "0.3"},
		{URL: "https://legacy-grpc.acme-grpc.io", Binding: a2a.TransportProtocolGRPC, Version: "0.3"}}; !slices.Equal(got, want) {
		t.Errorf("Interfaces = %v, want %v", got, want)
	}
}

func TestParseCardUnion(t *testing.T) {
	raw := []byte(`{"name": "x", "protocolVersion": "0.3.0", "url": "https://a.example.org/",
		"supportedInterfaces": [{"url": "https://a.example.org/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]}`)
	c, err := front.ParseCard(raw, "https://a.example.org/", "", testPublic)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Versions, []string{"1.0", "0.3"}; !slices.Equal(got, want) {
		t.Errorf("Versions = %q, want %q", got, want)
	}
}

func TestParseCardNoInterfaces(t *testing.T) {
	c, err := front.ParseCard([]byte(`{"name": "x", "supportedInterfaces": [{"url": "https://a.example.org/", "protocolBinding": "GRPC"}]}`), "https://a.example.org/", "", testPublic)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Versions, []string{"1.0", "0.3"}; !slices.Equal(got, want) {
		t.Errorf("Versions = %q, want %q", got, want)
	}
	if c.Interfaces != nil {
		t.Errorf("Interfaces = %v, want none", c.Interfaces)
	}
}

// TestParseCardOneBinding: a card that offers HTTP+JSON only or gRPC only
// is spoken to in that binding, and the host of a gRPC interface named
// host:port is scrubbed like any upstream host.
func TestParseCardOneBinding(t *testing.T) {
	for name, tt := range map[string]struct {
		card, binding string
		versions      []string
	}{
		"HTTPJSON": {`{"name": "x", "description": "at rest.up.example.org", "supportedInterfaces": [{"url": "https://rest.up.example.org/a2a", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}]}`, "HTTP+JSON", []string{"1.0"}},
		"GRPC":     {`{"name": "x", "description": "at grpc.up.example.org", "supportedInterfaces": [{"url": "grpc.up.example.org:50051", "protocolBinding": "GRPC", "protocolVersion": "1.0"}]}`, "gRPC", []string{"1.0"}},
		"GRPC03":   {`{"name": "x", "description": "at grpc.up.example.org", "protocolVersion": "0.3.0", "url": "grpc.up.example.org:50051", "preferredTransport": "GRPC"}`, "gRPC", []string{"0.3"}},
		"Newest":   {`{"name": "x", "description": "at grpc.up.example.org", "protocolVersion": "0.3.0", "url": "https://a.example.org/", "supportedInterfaces": [{"url": "grpc.up.example.org:443", "protocolBinding": "GRPC", "protocolVersion": "1.0"}]}`, "gRPC", []string{"1.0", "0.3"}},
		"JSONRPCFirst": {`{"name": "x", "description": "at grpc.up.example.org", "supportedInterfaces": [{"url": "grpc.up.example.org:443", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
			{"url": "https://a.example.org/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]}`, "JSON-RPC", []string{"1.0"}},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := front.ParseCard([]byte(tt.card), "https://a.example.org/", "", testPublic)
			if err != nil {
				t.Fatal(err)
			}
			if c.Binding != tt.binding || !slices.Equal(c.Versions, tt.versions) {
				t.Errorf("Binding, Versions = %q, %q; want %q, %q", c.Binding, c.Versions, tt.binding, tt.versions)
			}
			if strings.Contains(c.Description, "up.example.org") {
				t.Errorf("Description = %q: the interface's host is not scrubbed", c.Description)
			}
		})
	}
}

func TestParseCardErrNotCard(t *testing.T) {
	for name, raw := range map[string]string{
		"NotJSON":   "<html>",
		"Array":     "[]",
		"Null":      "null",
		"Empty":     "{}",
		"NameIsNum": `{"name": 5}`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := front.ParseCard([]byte(raw), testUpstream, "", testPublic); !errors.Is(err, front.ErrNotCard) {
				t.Errorf("ParseCard(%s) = %v, want ErrNotCard", raw, err)
			}
		})
	}
}

func TestParseCardWrongTypes(t *testing.T) {
	raw := []byte(`{"name": "x", "description": 5, "skills": {"a": 1}, "capabilities": [], "provider": "p",
		"defaultInputModes": "text/plain", "securitySchemes": [], "security": "none"}`)
	c, err := front.ParseCard(raw, testUpstream, "", testPublic)
	if err != nil {
		t.Fatal(err)
	}
	if c.Description != "" || c.Skills != nil || c.Provider != nil || !slices.Equal(c.DefaultInputModes, front.DefaultModes) {
		t.Errorf("card = %+v, want the wrong fields ignored", c)
	}
}

func TestParseCardBounds(t *testing.T) {
	// The cut falls inside the upstream's hostname, which must not survive
	// in part.
	desc := strings.Repeat("a ", (switchboard.MaxDescriptionLen-10)/2) + "agent.acme.example " + strings.Repeat("b", 5000)
	skills := make([]map[string]any, 100)
	for i := range skills {
		skills[i] = map[string]any{"id": strings.Repeat("s", 300), "name": "n", "tags": slices.Repeat([]string{"t"}, 100)}
	}
	modes := slices.Repeat([]string{"text/plain; x=1"}, 10)
	for i := range 50 {
		modes = append(modes, "text/x-"+strings.Repeat("y", i*5))
	}
	raw, err := json.Marshal(map[string]any{"name": strings.Repeat("n", 1000), "description": desc, "skills": skills, "defaultInputModes": modes})
	if err != nil {
		t.Fatal(err)
	}
	c, err := front.ParseCard(raw, testUpstream, "", testPublic)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len([]rune(c.Name)), switchboard.MaxNameLen; got != want {
		t.Errorf("len(Name) = %d, want %d", got, want)
	}
	if got := len([]rune(c.Description)); got > switchboard.MaxDescriptionLen {
		t.Errorf("len(Description) = %d, want at most %d", got, switchboard.MaxDescriptionLen)
	}
	if strings.Contains(c.Description, "agent.") || strings.Contains(c.Description, "b") {
		t.Errorf("Description ends %q, want the cut word and what follows dropped", c.Description[len(c.Description)-40:])
	}
	if got, want := len(c.Skills), switchboard.MaxSkills; got != want {
		t.Errorf("len(Skills) = %d, want %d", got, want)
	}
	if got, want := len(c.Skills[0].ID), front.MaxShortLen; got != want {
		t.Errorf("len(Skills[0].ID) = %d, want %d", got, want)
	}
	if got, want := len(c.Skills[0].Tags), front.MaxSkillTags; got != want {
		t.Errorf("len(Skills[0].Tags) = %d, want %d", got, want)
	}
	if got := len(c.DefaultInputModes); got > front.MaxModes || got < 2 {
		t.Errorf("len(DefaultInputModes) = %d, want 2 to %d", got, front.MaxModes)
	}
	for _, m := range c.DefaultInputModes {
		if len(m) > front.MaxModeLen {
			t.Errorf("mode of %d bytes, want at most %d", len(m), front.MaxModeLen)
		}
	}
}
