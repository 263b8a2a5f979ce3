package front

import (
	"maps"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// maxSchemes bounds the security schemes summed up from a card.
const maxSchemes = 16

// UpstreamAuth sums up how an upstream's card asks callers to
// authenticate, for the owner's diagnostics (upstreamAuth in the front's
// owner view). Its strings come from the upstream's card unscrubbed:
// they are shown to the owner only. Its JSON form is the one the owner
// view shows.
type UpstreamAuth struct {
	// Bearer reports whether the upstream asks for a bearer token: true
	// when a requirement (or, with none, a scheme) is HTTP bearer, OAuth
	// 2.0 or OpenID Connect; false when a requirement is empty (anonymous
	// access is allowed) or none is bearer; nil when the card says
	// nothing.
	Bearer *bool `json:"bearer"`

	// Schemes are the card's schemes as "name: kind", sorted.
	Schemes []string `json:"schemes"`

	// Unsupported are the schemes, as "name: kind", that a front cannot
	// answer (API keys, mutual TLS, HTTP basic…), sorted.
	Unsupported []string `json:"unsupported"`
}

// upstreamAuth sums up the security of a card: 1.0 securitySchemes and
// securityRequirements, or 0.3 securitySchemes and security.
func upstreamAuth(doc map[string]any) UpstreamAuth {
	kinds := schemeKinds(doc["securitySchemes"])
	a := UpstreamAuth{Schemes: []string{}, Unsupported: []string{}}
	for name, kind := range kinds {
		a.Schemes = append(a.Schemes, name+": "+kind)
		if !bearerKind(kind) {
			a.Unsupported = append(a.Unsupported, name+": "+kind)
		}
	}
	sort.Strings(a.Schemes)
	sort.Strings(a.Unsupported)

	reqs, ok := requirements(doc)
	if !ok { // no requirements: the schemes alone say what is expected
		if len(kinds) > 0 {
			a.Bearer = new(slices.ContainsFunc(slices.Collect(maps.Values(kinds)), bearerKind))
		}
		return a
	}
	bearer := false
	for _, names := range reqs {
		if len(names) == 0 {
			bearer = false // anonymous access is allowed
			break
		}
		if slices.ContainsFunc(names, func(n string) bool { return bearerKind(kinds[n]) }) {
			bearer = true
		}
	}
	a.Bearer = &bearer
	return a
}

// bearerKind reports whether a scheme of kind is answered with a bearer
// token.
func bearerKind(kind string) bool {
	return kind == "http bearer" || kind == "oauth2" || kind == "openIdConnect"
}

// schemeKinds returns the kind of each of a card's security schemes, by
// name: "http bearer", "http basic" (or another HTTP scheme), "oauth2",
// "openIdConnect", "apiKey", "mutualTLS" or "unknown". It reads the 1.0
// shape (one wrapper key per scheme) and the 0.3 one (a type field).
func schemeKinds(v any) map[string]string {
	m, _ := v.(map[string]any)
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	kinds := map[string]string{}
	for _, name := range names {
		if len(kinds) == maxSchemes {
			break
		}
		o, _ := m[name].(map[string]any)
		kinds[clipBytes(name, MaxShortLen)] = schemeKind(o)
	}
	return kinds
}

// schemeKind returns the kind of one security scheme (see schemeKinds).
func schemeKind(o map[string]any) string {
	httpKind := func(h map[string]any) string {
		scheme := strings.ToLower(str(h["scheme"]))
		if scheme == "" {
			scheme = "unknown"
		}
		return clipBytes("http "+scheme, MaxShortLen)
	}
	switch {
	case o["httpAuthSecurityScheme"] != nil:
		h, _ := o["httpAuthSecurityScheme"].(map[string]any)
		return httpKind(h)
	case o["oauth2SecurityScheme"] != nil:
		return "oauth2"
	case o["openIdConnectSecurityScheme"] != nil:
		return "openIdConnect"
	case o["apiKeySecurityScheme"] != nil:
		return "apiKey"
	case o["mtlsSecurityScheme"] != nil:
		return "mutualTLS"
	}
	switch t := str(o["type"]); t {
	case "http":
		return httpKind(o)
	case "oauth2", "openIdConnect", "apiKey", "mutualTLS":
		return t
	}
	return "unknown"
}

// requirements returns a card's security requirements, each the names of
// the schemes it needs together, and whether the card has any: its 1.0
// securityRequirements ({"schemes": {name: …}}), or else its 0.3
// security ({name: scopes}).
func requirements(doc map[string]any) ([][]string, bool) {
	if arr, ok := doc["securityRequirements"].([]any); ok {
		var out [][]string
		for _, e := range arr {
			o, _ := e.(map[string]any)
			schemes, _ := o["schemes"].(map[string]any)
			out = append(out, keys(schemes))
		}
		return out, true
	}
	if arr, ok := doc["security"].([]any); ok {
		var out [][]string
		for _, e := range arr {
			o, _ := e.(map[string]any)
			out = append(out, keys(o))
		}
		return out, true
	}
	return nil, false
}

// keys returns the keys of m, each clipped as schemeKinds clips names.
func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, clipBytes(k, MaxShortLen))
	}
	return out
}

// clipBytes returns s cut to at most n bytes, on a rune boundary.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
