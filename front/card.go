package front

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// Limits on what a front takes from its upstream's card, so that a
// hostile upstream cannot blow up the public card.
const (
	MaxSkillTags     = 32   // tags of one skill
	MaxSkillExamples = 16   // examples of one skill
	MaxExtensions    = 16   // capabilities.extensions
	MaxModes         = 32   // media types in one list
	MaxModeLen       = 128  // length of one media type
	MaxVersionLen    = 64   // the card's version
	MaxShortLen      = 200  // a skill's id or name, a tag, the provider's organization
	MaxExampleLen    = 1000 // one example
	MaxURILen        = 2048 // an extension's uri, documentationUrl, iconUrl, provider.url
	MaxParamsBytes   = 16 << 10
)

// Card is what an address in front mode takes from its upstream's card,
// scrubbed; but for Auth and Interfaces, which are never shown to peers.
// Its JSON form uses the card's field names.
type Card struct {
	Name        string `json:"name"` // "" when the card has none
	Description string `json:"description"`
	Version     string `json:"version"`

	// Skills are the upstream's skills, at most switchboard.MaxSkills,
	// without their security requirements.
	Skills []a2a.AgentSkill `json:"skills"`

	// Provider is nil unless the upstream's provider has a public URL.
	Provider *a2a.AgentProvider `json:"provider,omitempty"`

	// DocumentationURL and IconURL are "" unless public: a private URL
	// is dropped rather than replaced.
	DocumentationURL string `json:"documentationUrl,omitempty"`
	IconURL          string `json:"iconUrl,omitempty"`

	// Extensions are the upstream's capabilities.extensions.
	Extensions []a2a.AgentExtension `json:"extensions,omitempty"`

	// DefaultInputModes and DefaultOutputModes hold valid media types
	// only, at most MaxModes of at most MaxModeLen bytes; text/plain and
	// application/json when the upstream names none.
	DefaultInputModes  []string `json:"defaultInputModes"`
	DefaultOutputModes []string `json:"defaultOutputModes"`

	// Versions are the protocol versions the upstream offers in a
	// binding a front speaks (JSON-RPC, HTTP+JSON, gRPC), "1.0" and/or
	// "0.3", newest first; both when the card names no such interface.
	Versions []string `json:"versions"`

	// Binding is the binding a front speaks to the upstream: "JSON-RPC",
	// "HTTP+JSON" or "gRPC" (see PickInterface); "" when the card names
	// no interface a front speaks (it then tries JSON-RPC at the
	// upstream URL). Not marshalled.
	Binding string `json:"-"`

	// Streaming reports whether the upstream says it streams.
	Streaming bool `json:"streaming"`

	// Auth sums up the upstream's security schemes for the owner's
	// diagnostics, unscrubbed, and is not marshalled. The schemes
	// themselves are never copied.
	Auth UpstreamAuth `json:"-"`

	// Interfaces are the upstream's interfaces in a binding and version
	// a front speaks, as its card gives them, unchecked: for the owner's
	// diagnostics only, never shown to peers and not marshalled.
	Interfaces []Interface `json:"-"`

	// Reflected names the front's credentials whose values the card held
	// as the upstream served it (see ParseCardWith), sorted: removed from
	// the card, and reported to the owner. Not marshalled.
	Reflected []string `json:"-"`

	scrubber *Scrubber // the card's; immutable
}

// Interface is an interface an upstream's card names.
type Interface struct {
	URL     string
	Binding a2a.TransportProtocol // JSONRPC, HTTP+JSON or GRPC, as the SDK spells them
	Version string                // "1.0" or "0.3"
}

// DefaultModes are the media types of a card whose upstream names none.
var DefaultModes = []string{"text/plain", "application/json"}

// ErrNotCard is returned by ParseCard for a document that is not an
// agent card.
var ErrNotCard = errors.New("not an agent card")

// ParseCard reads an upstream's agent card, in the 1.0 or the 0.3 shape
// (or both at once), and returns it scrubbed. upstream and cardURL are
// the upstream's endpoint and card URL, and public the address's own URL:
// with every interface URL the card names, they make the card's
// Scrubber (see Card.Scrubber). Fields of the wrong type are ignored, and
// so are signatures and fields the card does not need; ParseCard fails
// only on a document that is not a JSON object with a name or an
// interface, wrapping ErrNotCard.
func ParseCard(raw []byte, upstream, cardURL, public string) (*Card, error) {
	return ParseCardWith(raw, upstream, cardURL, public, nil)
}

// ParseCardWith is ParseCard for a card read with credentials whose
// values are secrets: an upstream may reflect the headers it is sent into
// its card. The values are removed from every string of the card, and the
// card's Reflected names the credentials it held.
func ParseCardWith(raw []byte, upstream, cardURL, public string, secrets *Secrets) (*Card, error) {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil || doc == nil {
		return nil, ErrNotCard
	}
	ifaces, names := interfaces(doc)
	if _, ok := doc["name"].(string); !ok && len(names) == 0 {
		return nil, ErrNotCard
	}
	s := NewScrubber(public, append([]string{upstream, cardURL}, names...)...).WithSecrets(secrets)
	caps, _ := doc["capabilities"].(map[string]any)
	streaming, _ := caps["streaming"].(bool)
	c := &Card{
		Name:               s.name(str(doc["name"]), switchboard.MaxNameLen),
		Description:        s.text(str(doc["description"]), switchboard.MaxDescriptionLen),
		Version:            s.name(str(doc["version"]), MaxVersionLen),
		Skills:             s.skills(doc["skills"]),
		Provider:           s.provider(doc["provider"]),
		DocumentationURL:   s.fieldURL(doc["documentationUrl"]),
		IconURL:            s.fieldURL(doc["iconUrl"]),
		Extensions:         s.extensions(caps["extensions"]),
		DefaultInputModes:  s.modes(doc["defaultInputModes"], DefaultModes),
		DefaultOutputModes: s.modes(doc["defaultOutputModes"], DefaultModes),
		Versions:           versions(ifaces),
		Streaming:          streaming,
		Auth:               upstreamAuth(doc),
		Interfaces:         ifaces,
		scrubber:           s,
	}
	if b, _ := spoken(ifaces); b != "" {
		c.Binding = BindingName(b)
	}
	c.Reflected = secrets.FoundIn(doc)
	return c, nil
}

// Scrubber returns the Scrubber the card was scrubbed with: the one to
// check the card served from it with (see Leaks). Without an upstream
// card, the check uses NewScrubber(public, upstream, cardURL). It is
// nil for a Card that ParseCard did not make.
func (c *Card) Scrubber() *Scrubber {
	return c.scrubber
}
