package front

import (
	"encoding/json"
	"sort"
	"strings"
)

// Leaks returns what s would remove from a card as it is served: every
// URL and hostname, in any string or object key of the JSON document,
// that the scrubber would replace, sorted and without repeats, with
// credentials in a URL masked; and, for a scrubber WithSecrets, each
// credential whose value the card holds, by name (CredentialLeak), never
// by value. None means the card is clean. A document that is not JSON is
// reported as such, since nothing in it can be vouched for.
func Leaks(cardJSON []byte, s *Scrubber) []string {
	var v any
	if err := json.Unmarshal(cardJSON, &v); err != nil {
		return []string{"the card is not valid JSON"}
	}
	found := map[string]bool{}
	s.leaks(v, found)
	out := make([]string, 0, len(found))
	for l := range found {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}

// leaks adds to found what s would remove from v, at any depth.
func (s *Scrubber) leaks(v any, found map[string]bool) {
	switch v := v.(type) {
	case string:
		for _, name := range s.secrets.Found(v) {
			found[CredentialLeak(name)] = true
		}
		v = s.secrets.String(v) // what follows never shows a credential's value
		for _, e := range s.edits(v, 0) {
			found[maskCredentials(v[e.start:e.end])] = true
		}
	case []any:
		for _, e := range v {
			s.leaks(e, found)
		}
	case map[string]any:
		for k, e := range v {
			s.leaks(k, found)
			s.leaks(e, found)
		}
	}
}

// CredentialLeak is how Leaks names the credential name (a Secret's
// Name) found in a card.
func CredentialLeak(name string) string {
	return "the front's credential: " + name
}

// maskCredentials returns the URL raw with its user information, if any,
// replaced with "***", so that the owner's diagnostics show where a
// credential leaked without showing it. It does not parse raw, which may
// not parse.
func maskCredentials(raw string) string {
	i := strings.Index(raw, "://")
	if i < 0 {
		return raw
	}
	rest := raw[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndexByte(rest[:end], '@')
	if at < 0 {
		return raw
	}
	return raw[:i+3] + "***" + rest[at:]
}
