package front

import (
	"encoding/json"
	"mime"
	"net"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// maxInterfaces bounds the interfaces taken from a card.
const maxInterfaces = 16

// str returns v if it is a string, and "" otherwise.
func str(v any) string {
	s, _ := v.(string)
	return s
}

// objects returns the objects in v if it is an array, at most n of them.
func objects(v any, n int) []map[string]any {
	arr, _ := v.([]any)
	var out []map[string]any
	for _, e := range arr {
		if len(out) == n {
			break
		}
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// interfaces returns the interfaces a card names in a binding a front
// speaks (JSON-RPC, HTTP+JSON, gRPC) and a version it speaks (1.0, 0.3),
// in its 1.0 supportedInterfaces and its 0.3 url and additionalInterfaces;
// and the URL of every interface it names, whatever its binding. A gRPC
// interface's URL may be host:port, without a scheme: then its host is
// named too, so that the scrubber knows it.
func interfaces(doc map[string]any) (ifaces []Interface, names []string) {
	add := func(rawURL string, b any, version string) {
		if rawURL == "" {
			return
		}
		names = append(names, rawURL)
		if !strings.Contains(rawURL, "://") {
			if host, _, err := net.SplitHostPort(rawURL); err == nil && host != "" {
				names = append(names, host)
			}
		}
		i := Interface{URL: rawURL, Binding: binding(b), Version: protocolVersion(version)}
		if i.Binding != "" && i.Version != "" && len(ifaces) < maxInterfaces && !slices.Contains(ifaces, i) {
			ifaces = append(ifaces, i)
		}
	}
	for _, o := range objects(doc["supportedInterfaces"], maxInterfaces*4) {
		add(str(o["url"]), o["protocolBinding"], str(o["protocolVersion"]))
	}
	// A 0.3 url beside a 1.0 card is there for 0.3 clients, whatever
	// protocolVersion says.
	legacy := str(doc["protocolVersion"])
	if protocolVersion(legacy) != "0.3" {
		legacy = "0.3"
	}
	preferred := doc["preferredTransport"]
	if preferred == nil {
		preferred = "JSONRPC"
	}
	add(str(doc["url"]), preferred, legacy)
	for _, o := range objects(doc["additionalInterfaces"], maxInterfaces*4) {
		add(str(o["url"]), o["transport"], legacy)
	}
	return ifaces, names
}

// binding returns the binding v names as the SDK spells it (JSONRPC,
// HTTP+JSON, GRPC), or "" for one a front does not speak.
func binding(v any) a2a.TransportProtocol {
	for _, b := range Bindings {
		if strings.EqualFold(str(v), string(b)) {
			return b
		}
	}
	return ""
}

// spoken returns the binding and version a front speaks to an upstream
// that offers ifaces, by PickInterface's rule: the newest version, then
// the first of Bindings; "" for none.
func spoken(ifaces []Interface) (a2a.TransportProtocol, string) {
	for _, v := range []string{"1.0", "0.3"} {
		for _, b := range Bindings {
			if slices.ContainsFunc(ifaces, func(i Interface) bool { return i.Version == v && i.Binding == b }) {
				return b, v
			}
		}
	}
	return "", ""
}

// protocolVersion returns the protocol version v names, "1.0" or
// "0.3" (which 0.2 clients speak too), or "" for any other.
func protocolVersion(v string) string {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	switch {
	case v == "1" || v == "1.0" || strings.HasPrefix(v, "1.0."):
		return "1.0"
	case v == "0.3" || strings.HasPrefix(v, "0.3.") || v == "0.2" || strings.HasPrefix(v, "0.2."):
		return "0.3"
	}
	return ""
}

// versions returns the protocol versions of ifaces, newest first, or both
// when there are none.
func versions(ifaces []Interface) []string {
	var out []string
	for _, v := range []string{"1.0", "0.3"} {
		if slices.ContainsFunc(ifaces, func(i Interface) bool { return i.Version == v }) {
			out = append(out, v)
		}
	}
	if out == nil {
		out = []string{"1.0", "0.3"}
	}
	return out
}

// skills returns a card's skills, scrubbed and bounded, without their
// security requirements. A skill with neither id nor name is left out.
func (s *Scrubber) skills(v any) []a2a.AgentSkill {
	var out []a2a.AgentSkill
	for _, o := range objects(v, switchboard.MaxSkills) {
		sk := a2a.AgentSkill{
			ID:          s.name(str(o["id"]), MaxShortLen),
			Name:        s.name(str(o["name"]), MaxShortLen),
			Description: s.text(str(o["description"]), switchboard.MaxDescriptionLen),
			Tags:        s.texts(o["tags"], MaxSkillTags, MaxShortLen, false),
			Examples:    s.texts(o["examples"], MaxSkillExamples, MaxExampleLen, true),
			InputModes:  s.modes(o["inputModes"], nil),
			OutputModes: s.modes(o["outputModes"], nil),
		}
		if sk.ID == "" {
			sk.ID = sk.Name
		}
		if sk.Name == "" {
			sk.Name = sk.ID
		}
		if sk.ID == "" {
			continue
		}
		if sk.Tags == nil {
			sk.Tags = []string{}
		}
		out = append(out, sk)
	}
	return out
}

// texts returns the non-empty strings of the array v, scrubbed, at most
// n of them, each clipped to max runes: names, or with multiline texts
// that may run over lines (see name and text).
func (s *Scrubber) texts(v any, n, max int, multiline bool) []string {
	arr, _ := v.([]any)
	var out []string
	for _, e := range arr {
		if len(out) == n {
			break
		}
		clean := s.name
		if multiline {
			clean = s.text
		}
		if e := clean(str(e), max); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// provider returns a card's provider, or nil unless it has a public URL
// and an organization.
func (s *Scrubber) provider(v any) *a2a.AgentProvider {
	o, _ := v.(map[string]any)
	p := &a2a.AgentProvider{Org: s.name(str(o["organization"]), MaxShortLen), URL: s.fieldURL(o["url"])}
	if p.Org == "" || p.URL == "" {
		return nil
	}
	return p
}

// fieldURL returns v if it is a public https URL of at most MaxURILen
// bytes, and "" otherwise: a card's URL fields are dropped, not replaced.
func (s *Scrubber) fieldURL(v any) string {
	u := str(v)
	if len(u) > MaxURILen || !s.PublicURL(u) {
		return ""
	}
	return u
}

// extensions returns a card's extensions, scrubbed and bounded. Params
// that take more than MaxParamsBytes once scrubbed are dropped.
func (s *Scrubber) extensions(v any) []a2a.AgentExtension {
	var out []a2a.AgentExtension
	for _, o := range objects(v, MaxExtensions) {
		required, _ := o["required"].(bool)
		e := a2a.AgentExtension{
			URI:         s.name(str(o["uri"]), MaxURILen),
			Description: s.text(str(o["description"]), switchboard.MaxDescriptionLen),
			Required:    required,
		}
		if p, ok := s.value(o["params"], 0, true).(map[string]any); ok {
			if b, err := json.Marshal(p); err == nil && len(b) <= MaxParamsBytes {
				e.Params = p
			}
		}
		out = append(out, e)
	}
	return out
}

// modes returns the valid media types in the array v, at most MaxModes
// of at most MaxModeLen bytes, without repeats; or def when there are
// none. A media type the scrubber would change is not valid.
func (s *Scrubber) modes(v any, def []string) []string {
	arr, _ := v.([]any)
	var out []string
	for _, e := range arr {
		m := str(e)
		if len(out) == MaxModes {
			break
		}
		if len(m) == 0 || len(m) > MaxModeLen || slices.Contains(out, m) || !mediaType(m) || s.String(m) != m {
			continue
		}
		out = append(out, m)
	}
	if out == nil && def != nil {
		out = slices.Clone(def)
	}
	return out
}

// mediaType reports whether m is a media type: type/subtype, with
// parameters or not.
func mediaType(m string) bool {
	t, _, err := mime.ParseMediaType(m)
	if err != nil {
		return false
	}
	typ, sub, ok := strings.Cut(t, "/")
	return ok && typ != "" && sub != "" && !strings.Contains(sub, "/")
}
