package a2aedge

import (
	"bytes"
	"html/template"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
)

// landingJSON is what non-browser clients get at an address.
type landingJSON struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Handle      string `json:"handle"`
	AgentCard   string `json:"agentCard"`
	AgentCard03 string `json:"agentCard03"`
	A2A         string `json:"a2a"`
	// Pairing names the device flow's endpoints while the agent takes
	// pairing requests (docs/pairing.md).
	Pairing *landingPairing `json:"pairing,omitempty"`
}

// landingPairing is where a peer asks for its own token, and where the
// owner decides.
type landingPairing struct {
	DeviceAuthorization string `json:"device_authorization_endpoint"`
	Token               string `json:"token_endpoint"`
	Verification        string `json:"verification_uri"`
}

// landingPage is the data of the HTML landing page.
type landingPage struct {
	Name, Description, Address, Card, Card03 string
	Skills                                   []a2a.AgentSkill
	// Device is the pairing page's URL ("" when pairing is off).
	Device string
}

// landingTemplate renders the landing page. html/template escapes every
// value, so owner-supplied names, descriptions and skills cannot inject
// markup. The page loads nothing and runs no script.
var landingTemplate = template.Must(template.New("landing").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Name}}</title>
<style>
body{font-family:system-ui,sans-serif;max-width:42rem;margin:2rem auto;padding:0 1rem;line-height:1.5;color:#222}
code{background:#f3f3f3;padding:.1rem .3rem;border-radius:3px;word-break:break-all}
li{margin:.4rem 0}.tags{color:#666;font-size:.9em}
</style>
</head>
<body>
<h1>{{.Name}}</h1>
<p>{{.Description}}</p>
<p>This is an <a href="https://a2a-protocol.org/">A2A</a> agent. Its address is <code>{{.Address}}</code>
(A2A JSON-RPC 1.0 and 0.3; peers need a token from its owner).</p>
{{if .Device}}<p>A peer can ask for its own token: <code>switchboard pair {{.Address}}</code>, or any OAuth 2.0
device flow client (RFC 8628). Its owner approves or denies the request on the <a href="{{.Device}}">pairing page</a>.</p>
{{end}}<ul>
<li><a href="{{.Card}}">Agent card (A2A 1.0)</a></li>
<li><a href="{{.Card03}}">Agent card (A2A 0.3)</a></li>
</ul>
{{if .Skills}}<h2>Skills</h2>
<ul>{{range .Skills}}
<li><strong>{{.Name}}</strong>: {{.Description}}{{if .Tags}} <span class="tags">({{range $i, $t := .Tags}}{{if $i}}, {{end}}{{$t}}{{end}})</span>{{end}}</li>{{end}}
</ul>{{end}}
</body>
</html>
`))

// serveLanding answers GET at an address: HTML for browsers, JSON for
// everyone else (and for ?format=json).
func (s *Edge) serveLanding(w http.ResponseWriter, r *http.Request, agent *switchboard.Agent) {
	var pair *landingPairing
	if s.takesPairing(agent) {
		issuer := s.ReachedBase(r, agent)
		pair = &landingPairing{DeviceAuthorization: issuer + httpapi.DeviceAuthorizationPath, Token: issuer + httpapi.OAuthTokenPath, Verification: issuer + httpapi.DevicePagePath}
	}
	s.serveLandingAt(w, r, agent, s.ReachedAddress(r, agent), pair)
}

// serveLandingAt is serveLanding for the card of agent served at addr (a
// community's address serves its own, and takes no pairing requests:
// pair nil).
func (s *Edge) serveLandingAt(w http.ResponseWriter, r *http.Request, agent *switchboard.Agent, addr string, pair *landingPairing) {
	wellKnown := strings.TrimRight(addr, "/") + "/.well-known/"
	f := s.cardFacts(agent, false, s.upstreamCard(r.Context(), agent, addr))
	w.Header().Set("Vary", "Accept")
	s.VaryForwarded(w)
	if !wantsHTML(r) {
		httpapi.SetCORS(w)
		httpapi.WriteJSON(w, http.StatusOK, landingJSON{
			Name: f.name, Description: f.description, Handle: agent.Handle,
			AgentCard: wellKnown + "agent-card.json", AgentCard03: wellKnown + "agent.json", A2A: addr, Pairing: pair,
		})
		return
	}
	var buf bytes.Buffer
	page := landingPage{
		Name: f.name, Description: f.description, Address: addr,
		Card: wellKnown + "agent-card.json", Card03: wellKnown + "agent.json", Skills: f.skills,
	}
	if pair != nil {
		page.Device = pair.Verification
	}
	err := landingTemplate.Execute(&buf, page)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	writeHTML(w, buf.Bytes())
}

// writeHTML writes a page with headers that forbid scripts, framing and
// every outside load.
func writeHTML(w http.ResponseWriter, page []byte) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(page)
}

func wantsHTML(r *http.Request) bool {
	return r.URL.Query().Get("format") != "json" && strings.Contains(r.Header.Get("Accept"), "text/html")
}

// handleRoot serves the default agent at the root, or else a short note
// about the deployment.
func (s *Edge) handleRoot(w http.ResponseWriter, r *http.Request) {
	if s.Cfg.DefaultAgent != "" {
		if agent, ok := s.AgentFromPath(w, r); ok {
			s.serveAgent(w, r, agent)
		}
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s.NotFound(w, r)
		return
	}
	if !wantsHTML(r) {
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{
			"service": "switchboard",
			"version": s.Cfg.Version,
			"agents":  s.BaseURL(r) + "/a/{handle}",
		})
		return
	}
	writeHTML(w, []byte(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Switchboard</title></head>`+
		`<body><h1>Switchboard</h1><p>This deployment gives A2A agents public addresses of the form <code>/a/{handle}</code>.</p></body></html>`))
}
