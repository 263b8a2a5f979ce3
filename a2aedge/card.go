package a2aedge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/switchboard-dev/switchboard/a2arpc"
	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/httpapi"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// The agent card is written by hand rather than with a2a.AgentCard, because
// one document must parse with every client in use: the a2a-go 1.0 parser,
// the a2a-go 0.3 parser and the @a2a-js/sdk resolver. The 1.0 card carries,
// beside the 1.0 fields, the 0.3 fields (url, preferredTransport,
// additionalInterfaces, protocolVersion, security) that a 0.3 client reads
// from the same path. Security schemes take the 1.0 shape there (one wrapper
// key per scheme, as the 1.0 conformance suite requires; a2a-go's 0.3 parser
// reads it too); a client that asks for A2A-Version 0.3 gets the pure 0.3
// card, whose schemes carry "type".

// cardInterface is a 1.0 AgentInterface.
type cardInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
	Tenant          string `json:"tenant,omitempty"`
}

// legacyInterface is a 0.3 AgentInterface.
type legacyInterface struct {
	URL       string `json:"url"`
	Transport string `json:"transport"`
}

type cardCapabilities struct {
	Streaming              bool            `json:"streaming"`
	PushNotifications      bool            `json:"pushNotifications"`
	Extensions             []cardExtension `json:"extensions,omitempty"`
	ExtendedAgentCard      *bool           `json:"extendedAgentCard,omitempty"`      // 1.0 only
	StateTransitionHistory *bool           `json:"stateTransitionHistory,omitempty"` // 0.3 only
}

// bearerScheme is the bearer security scheme in either shape: 0.3 sets
// Type, Scheme and Description; 1.0 sets only HTTPAuth.
type bearerScheme struct {
	Type        string         `json:"type,omitempty"`
	Scheme      string         `json:"scheme,omitempty"`
	Description string         `json:"description,omitempty"`
	HTTPAuth    *httpAuthValue `json:"httpAuthSecurityScheme,omitempty"`
}

// securityScheme is a card's security scheme: bearer (bearerScheme) or,
// on 1.0 cards only, pairing (an OAuth 2.0 scheme with the device code
// flow, which 0.3 does not define: @a2a-js/sdk refuses a 0.3 OAuth scheme
// without a flow it knows).
type securityScheme struct {
	bearerScheme
	OAuth2 *oauth2Value `json:"oauth2SecurityScheme,omitempty"`
}

// oauth2Value is a 1.0 OAuth2SecurityScheme.
type oauth2Value struct {
	Description       string     `json:"description"`
	Oauth2MetadataURL string     `json:"oauth2MetadataUrl"`
	Flows             oauthFlows `json:"flows"`
}

// oauthFlows holds the one flow pairing offers.
type oauthFlows struct {
	DeviceCode deviceCodeFlow `json:"deviceCode"`
}

// deviceCodeFlow is the device code flow (RFC 8628) of the pairing scheme.
type deviceCodeFlow struct {
	DeviceAuthorizationURL string            `json:"deviceAuthorizationUrl"`
	TokenURL               string            `json:"tokenUrl"`
	Scopes                 map[string]string `json:"scopes"`
}

const pairingDescription = "OAuth 2.0 device authorization grant (RFC 8628): the agent's owner approves the code, and the token is a peer token for the bearer scheme."

// securitySchemes returns a card's bearer scheme in the 1.0 shape (v1) or
// the 0.3 one.
func securitySchemes(v1 bool) map[string]securityScheme {
	if !v1 {
		return map[string]securityScheme{"bearer": {bearerScheme: bearerScheme{Type: "http", Scheme: "bearer", Description: bearerDescription}}}
	}
	return map[string]securityScheme{"bearer": {bearerScheme: bearerScheme{HTTPAuth: &httpAuthValue{Scheme: "Bearer", Description: bearerDescription}}}}
}

// pairingExtensionURI names the card extension that says where an agent
// takes pairing requests (docs/pairing.md).
const pairingExtensionURI = "https://github.com/switchboard-dev/switchboard/blob/main/docs/pairing.md"

// cardExtension is an AgentExtension (the same in 1.0 and 0.3).
type cardExtension struct {
	URI         string         `json:"uri"`
	Description string         `json:"description"`
	Required    bool           `json:"required"`
	Params      map[string]any `json:"params"`
}

// withPairing adds pairing to an agent's 1.0 card, unless it is off: the
// pairing extension always, and the OAuth 2.0 scheme with the device code
// flow when scheme is set. The scheme is left off the card that clients
// of either version read (no A2A-Version 1.x asked for): @a2a-js/sdk
// 0.3.14 refuses an OAuth scheme without a flow 0.3 knows, and 0.3 has no
// device code flow.
// issuer is the address, without a trailing slash.
func (s *Edge) withPairing(card *agentCardV1, agent *switchboard.Agent, issuer string, scheme bool) *agentCardV1 {
	ext, ok := s.pairingExtension(agent, issuer)
	if !ok {
		return card
	}
	card.Capabilities.Extensions = append(card.Capabilities.Extensions, ext)
	if scheme {
		card.SecuritySchemes["pairing"] = securityScheme{OAuth2: &oauth2Value{Description: pairingDescription,
			Oauth2MetadataURL: issuer + httpapi.AuthServerMetadataPath,
			Flows: oauthFlows{DeviceCode: deviceCodeFlow{
				DeviceAuthorizationURL: issuer + httpapi.DeviceAuthorizationPath, TokenURL: issuer + httpapi.OAuthTokenPath,
				Scopes: map[string]string{"a2a": "call this agent as a peer"},
			}}}}
	}
	return card
}

// withPairingV03 adds the pairing extension to an agent's 0.3 card,
// unless pairing is off; never a security scheme. A 0.3 OAuth2 scheme
// needs exactly one flow 0.3 defines (a2a-go's 0.3 parser refuses none,
// @a2a-js/sdk 0.3.14 refuses a deviceCode flow), and none of the four
// (authorization code, client credentials, implicit, password) yields a
// peer token, so a scheme would be either unparsable or untrue. The
// extension is a 0.3 AgentExtension, which both read.
func (s *Edge) withPairingV03(card *agentCardV03, agent *switchboard.Agent, issuer string) *agentCardV03 {
	if ext, ok := s.pairingExtension(agent, issuer); ok {
		card.Capabilities.Extensions = append(card.Capabilities.Extensions, ext)
	}
	return card
}

// pairingExtension returns the card extension that names the agent's
// pairing endpoints and reports whether the agent takes pairing requests.
func (s *Edge) pairingExtension(agent *switchboard.Agent, issuer string) (cardExtension, bool) {
	if !s.takesPairing(agent) {
		return cardExtension{}, false
	}
	return cardExtension{
		URI: pairingExtensionURI, Description: "Ask for a peer token with the OAuth 2.0 device authorization grant (RFC 8628).",
		Params: map[string]any{
			"device_authorization_endpoint": issuer + httpapi.DeviceAuthorizationPath,
			"token_endpoint":                issuer + httpapi.OAuthTokenPath,
			"authorization_server_metadata": issuer + httpapi.AuthServerMetadataPath,
		},
	}, true
}

type httpAuthValue struct {
	Scheme      string `json:"scheme"`
	Description string `json:"description"`
}

// agentCardV1 is the union card served at /.well-known/agent-card.json.
type agentCardV1 struct {
	Name                 string                    `json:"name"`
	Description          string                    `json:"description"`
	SupportedInterfaces  []cardInterface           `json:"supportedInterfaces"`
	Version              string                    `json:"version"`
	Capabilities         cardCapabilities          `json:"capabilities"`
	SecuritySchemes      map[string]securityScheme `json:"securitySchemes"`
	SecurityRequirements []map[string]any          `json:"securityRequirements"`
	DefaultInputModes    []string                  `json:"defaultInputModes"`
	DefaultOutputModes   []string                  `json:"defaultOutputModes"`
	Skills               []a2a.AgentSkill          `json:"skills"`
	Provider             *a2a.AgentProvider        `json:"provider,omitempty"`
	DocumentationURL     string                    `json:"documentationUrl,omitempty"`
	IconURL              string                    `json:"iconUrl,omitempty"`
	ProtocolVersion      string                    `json:"protocolVersion"`
	URL                  string                    `json:"url"`
	PreferredTransport   string                    `json:"preferredTransport"`
	AdditionalInterfaces []legacyInterface         `json:"additionalInterfaces"`
	Security             []map[string][]string     `json:"security"`
	SupportsExtendedCard bool                      `json:"supportsAuthenticatedExtendedCard"`
}

// agentCardV03 is the pure 0.3 card served at /.well-known/agent.json.
type agentCardV03 struct {
	ProtocolVersion      string                    `json:"protocolVersion"`
	Name                 string                    `json:"name"`
	Description          string                    `json:"description"`
	URL                  string                    `json:"url"`
	PreferredTransport   string                    `json:"preferredTransport"`
	AdditionalInterfaces []legacyInterface         `json:"additionalInterfaces"`
	Version              string                    `json:"version"`
	Capabilities         cardCapabilities          `json:"capabilities"`
	SecuritySchemes      map[string]securityScheme `json:"securitySchemes"`
	Security             []map[string][]string     `json:"security"`
	DefaultInputModes    []string                  `json:"defaultInputModes"`
	DefaultOutputModes   []string                  `json:"defaultOutputModes"`
	Skills               []a2a.AgentSkill          `json:"skills"`
	Provider             *a2a.AgentProvider        `json:"provider,omitempty"`
	DocumentationURL     string                    `json:"documentationUrl,omitempty"`
	IconURL              string                    `json:"iconUrl,omitempty"`
	SupportsExtendedCard bool                      `json:"supportsAuthenticatedExtendedCard"`
}

const bearerDescription = "HTTP Bearer authentication. Ask the agent's owner for access."

var defaultModes = []string{"text/plain", "application/json"}

// defaultSkill stands on the card of an agent that lists no skills: the
// specification requires at least one.
var defaultSkill = a2a.AgentSkill{
	ID: "general", Name: "General requests",
	Description: "Send a message; the agent answers when it can.",
	Tags:        []string{"general"},
}

// cardV1 returns the union card of an agent whose address is addr. With
// extended, the skills include the ones shown only to authenticated peers.
func (s *Edge) cardV1(agent *switchboard.Agent, addr string, extended bool, up *front.Card) *agentCardV1 {
	f := s.cardFacts(agent, extended, up)
	streaming, push, exts := s.passCapabilities(agent, f.extensions)
	return &agentCardV1{
		Name:                 f.name,
		Description:          f.description,
		SupportedInterfaces:  s.cardInterfaces(agent, addr),
		Version:              f.version,
		Capabilities:         cardCapabilities{Streaming: streaming, PushNotifications: push, ExtendedAgentCard: &f.extended, Extensions: exts},
		SecuritySchemes:      securitySchemes(true),
		SecurityRequirements: []map[string]any{{"schemes": map[string][]string{"bearer": {}}}},
		DefaultInputModes:    f.inputModes,
		DefaultOutputModes:   f.outputModes,
		Skills:               f.skills,
		Provider:             f.provider,
		DocumentationURL:     f.documentationURL,
		IconURL:              f.iconURL,
		ProtocolVersion:      "0.3.0",
		URL:                  addr,
		PreferredTransport:   "JSONRPC",
		AdditionalInterfaces: s.legacyInterfaces(agent, addr),
		Security:             []map[string][]string{{"bearer": {}}},
		SupportsExtendedCard: f.extended,
	}
}

// cardV03 returns the 0.3 card of an agent whose address is addr.
func (s *Edge) cardV03(agent *switchboard.Agent, addr string, extended bool, up *front.Card) *agentCardV03 {
	f := s.cardFacts(agent, extended, up)
	streaming, push, exts := s.passCapabilities(agent, f.extensions)
	no := false
	return &agentCardV03{
		ProtocolVersion:      "0.3.0",
		Name:                 f.name,
		Description:          f.description,
		URL:                  addr,
		PreferredTransport:   "JSONRPC",
		AdditionalInterfaces: s.legacyInterfaces(agent, addr),
		Version:              f.version,
		Capabilities:         cardCapabilities{Streaming: streaming, PushNotifications: push, StateTransitionHistory: &no, Extensions: exts},
		SecuritySchemes:      securitySchemes(false),
		Security:             []map[string][]string{{"bearer": {}}},
		DefaultInputModes:    f.inputModes,
		DefaultOutputModes:   f.outputModes,
		Skills:               f.skills,
		Provider:             f.provider,
		DocumentationURL:     f.documentationURL,
		IconURL:              f.iconURL,
		SupportsExtendedCard: f.extended,
	}
}

// cardFacts are the parts of a card that do not depend on its shape.
type cardFacts struct {
	name, description, version string
	skills                     []a2a.AgentSkill
	extended                   bool
	inputModes, outputModes    []string
	// From a front's upstream card only:
	provider                  *a2a.AgentProvider
	documentationURL, iconURL string
	extensions                []cardExtension
}

// cardFacts are the facts of agent's card. For a front, up is its
// upstream's card (scrubbed), nil when there is none: the owner's
// settings come first, then the upstream's card, then the defaults.
func (s *Edge) cardFacts(agent *switchboard.Agent, extended bool, up *front.Card) cardFacts {
	f := cardFacts{name: agent.Name, description: agent.Description, version: agent.Version, extended: agent.HasExtendedCard(),
		inputModes: defaultModes, outputModes: defaultModes}
	skills := agent.Skills
	if up != nil {
		if (f.name == "" || f.name == agent.Handle) && up.Name != "" {
			f.name = up.Name
		}
		if f.description == "" {
			f.description = up.Description
		}
		if (f.version == "" || f.version == "1.0.0") && up.Version != "" {
			f.version = up.Version
		}
		if len(skills) == 0 {
			skills = up.Skills
		}
		f.inputModes, f.outputModes = up.DefaultInputModes, up.DefaultOutputModes
		f.provider, f.documentationURL, f.iconURL = up.Provider, up.DocumentationURL, up.IconURL
		for _, e := range up.Extensions {
			f.extensions = append(f.extensions, cardExtension{URI: e.URI, Description: e.Description, Required: e.Required, Params: e.Params})
		}
	}
	if f.name == "" {
		f.name = agent.Handle
	}
	if f.description == "" {
		f.description = "An A2A agent reachable through Switchboard."
	}
	if f.version == "" {
		f.version = "1.0.0"
	}
	if len(skills) == 0 {
		skills = []a2a.AgentSkill{defaultSkill}
	}
	if extended {
		skills = append(append([]a2a.AgentSkill{}, agent.Skills...), agent.ExtendedSkills...)
	}
	f.skills = make([]a2a.AgentSkill, 0, len(skills))
	for _, sk := range skills {
		if sk.Tags == nil {
			sk.Tags = []string{}
		}
		f.skills = append(f.skills, sk)
	}
	return f
}

// handleCardV1 serves the 1.0 card of the agent at the path, or the 0.3
// card to a client that asks for A2A-Version 0.3.
func (s *Edge) handleCardV1(w http.ResponseWriter, r *http.Request) {
	agent, ok := s.cardRequest(w, r)
	if !ok {
		return
	}
	w.Header().Set("Vary", "A2A-Version")
	s.VaryForwarded(w)
	v, _ := a2arpc.RequestedVersion(r)
	addr := s.ReachedAddress(r, agent)
	up := s.upstreamCard(r.Context(), agent, addr)
	if strings.HasPrefix(v, "0.3") {
		serveCard(w, r, s.withPairingV03(s.cardV03(agent, addr, false, up), agent, s.ReachedBase(r, agent)))
		return
	}
	serveCard(w, r, s.withPairing(s.cardV1(agent, addr, false, up), agent, s.ReachedBase(r, agent), strings.HasPrefix(v, "1")))
}

// handleCardV03 serves the 0.3 card of the agent at the path.
func (s *Edge) handleCardV03(w http.ResponseWriter, r *http.Request) {
	agent, ok := s.cardRequest(w, r)
	if ok {
		s.VaryForwarded(w)
		addr := s.ReachedAddress(r, agent)
		card := s.cardV03(agent, addr, false, s.upstreamCard(r.Context(), agent, addr))
		serveCard(w, r, s.withPairingV03(card, agent, s.ReachedBase(r, agent)))
	}
}

func (s *Edge) cardRequest(w http.ResponseWriter, r *http.Request) (*switchboard.Agent, bool) {
	if r.Method == http.MethodOptions {
		httpapi.SetCORS(w)
		w.WriteHeader(http.StatusNoContent)
		return nil, false
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD, OPTIONS")
		httpapi.WriteJSON(w, http.StatusMethodNotAllowed, ownerapi.Error{Error: "method not allowed"})
		return nil, false
	}
	return s.AgentFromPath(w, r)
}

// serveCard writes a card with the caching headers the spec recommends: a
// short public max-age and an ETag for revalidation.
func serveCard(w http.ResponseWriter, r *http.Request, card any) {
	serveCardFor(w, r, card, "public, max-age=300")
}

// serveCardFor is serveCard with the given Cache-Control (a community's
// card changes as its members come and go).
func serveCardFor(w http.ResponseWriter, r *http.Request, card any, cacheControl string) {
	body, err := json.Marshal(card)
	if err != nil {
		httpapi.WriteJSON(w, http.StatusInternalServerError, ownerapi.Error{Error: "internal error"})
		return
	}
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	httpapi.SetCORS(w)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", cacheControl)
	h.Set("ETag", etag)
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// upstreamCard returns a front agent's upstream card, or the card a
// connector agent's forwarding connector published, for its address,
// scrubbed; or nil (neither; no card, which the settings then make).
func (s *Edge) upstreamCard(ctx context.Context, agent *switchboard.Agent, addr string) *front.Card {
	if agent.Mode == switchboard.ModeConnector {
		return s.published.Card(ctx, agent.ID, addr)
	}
	if agent.Mode != switchboard.ModeFront {
		return nil
	}
	c, st, _, err := s.fronts.Card(ctx, agent.ID, addr)
	if err != nil {
		s.Logger.Warn("read a front's upstream card", "agent_id", agent.ID, "err", err)
		return nil
	}
	if st.State != front.CardOK && st.State != front.CardStale {
		return nil
	}
	return c
}

// PublicCard returns the 1.0 card of agent as its peers get it at addr
// (issuer: addr without a trailing slash), with up the card of a front
// agent's upstream (nil: none): for the owner API's leak check of a front
// agent (GET /agents/{ref}/front).
func (s *Edge) PublicCard(agent *switchboard.Agent, addr, issuer string, up *front.Card) any {
	return s.withPairing(s.cardV1(agent, addr, false, up), agent, issuer, true)
}

// cardInterfaces are the 1.0 interfaces a card at addr lists: JSON-RPC
// at the address and HTTP+JSON under it, each in 1.0 and 0.3, and gRPC
// (1.0) on the address's host.
func (s *Edge) cardInterfaces(agent *switchboard.Agent, addr string) []cardInterface {
	rest := restURL(agent, addr)
	return []cardInterface{
		{URL: addr, ProtocolBinding: "JSONRPC", ProtocolVersion: "1.0"},
		{URL: addr, ProtocolBinding: "JSONRPC", ProtocolVersion: "0.3"},
		{URL: rest, ProtocolBinding: "HTTP+JSON", ProtocolVersion: "1.0"},
		{URL: legacyRESTURL(rest, addr), ProtocolBinding: "HTTP+JSON", ProtocolVersion: "0.3"},
		grpcInterface(agent, addr),
	}
}

// legacyInterfaces are the 0.3 additionalInterfaces a card at addr lists:
// JSON-RPC at the address, HTTP+JSON under it (whose 0.3 clients add /v1).
func (s *Edge) legacyInterfaces(agent *switchboard.Agent, addr string) []legacyInterface {
	return []legacyInterface{{URL: addr, Transport: "JSONRPC"}, {URL: legacyRESTURL(restURL(agent, addr), addr), Transport: "HTTP+JSON"}}
}

// legacyRESTURL is the HTTP+JSON URL a 0.3 card names: 0.3 clients tell
// interfaces apart by URL (a2a-go's 0.3 card parser drops an additional
// interface at the card's url), so where the binding's URL is the
// address's own it is named with a trailing slash, which the clients'
// path joining ignores.
func legacyRESTURL(rest, addr string) string {
	if rest == addr {
		return rest + "/"
	}
	return rest
}

// restURL is the URL of the HTTP+JSON binding of the address addr: the
// address itself, without a trailing slash; but for the default agent at
// the deployment's root, whose binding's paths (/tasks…) would be the
// deployment's own, its {base}/a/{handle}.
func restURL(agent *switchboard.Agent, addr string) string {
	base := strings.TrimSuffix(addr, "/")
	u, err := url.Parse(addr)
	if err != nil || (u.Path != "" && u.Path != "/") || (agent.Domain != "" && strings.EqualFold(u.Hostname(), agent.Domain)) {
		return base
	}
	return base + "/a/" + agent.Handle
}

// grpcInterface is the gRPC interface a card at addr lists: the host and
// port of the address (the target a gRPC client dials), and the tenant
// that names the agent there (its handle, or the community's name; none
// on the agent's own domain).
func grpcInterface(agent *switchboard.Agent, addr string) cardInterface {
	iface := cardInterface{ProtocolBinding: "GRPC", ProtocolVersion: "1.0", Tenant: agent.Handle}
	u, err := url.Parse(addr)
	if err != nil {
		return iface
	}
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	iface.URL = net.JoinHostPort(u.Hostname(), port)
	if agent.Domain != "" && strings.EqualFold(u.Hostname(), agent.Domain) {
		iface.Tenant = ""
	}
	return iface
}
