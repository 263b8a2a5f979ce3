package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
)

func TestCardV1ParsesWithBothGoParsers(t *testing.T) {
	h := newHarness(t)
	g := h.agent("alice")
	r := h.do("GET", h.addr(g)+"/.well-known/agent-card.json", nil, "")
	if r.status != http.StatusOK || r.header.Get("Access-Control-Allow-Origin") != "*" || r.header.Get("ETag") == "" {
		t.Fatalf("card answer: %d %v", r.status, r.header)
	}

	for name, parse := range map[string]agentcard.Parser{"v1": agentcard.DefaultCardParser, "v0": a2av0.NewAgentCardParser()} {
		t.Run(name, func(t *testing.T) {
			card, err := parse(r.body)
			if err != nil {
				t.Fatalf("parse: %v\n%s", err, r.body)
			}
			if card.Name != "Agent alice" || card.Version != "1.2.3" || len(card.Skills) != 1 || card.Skills[0].ID != "echo" {
				t.Fatalf("card: %+v", card)
			}
			if !card.Capabilities.Streaming || card.Capabilities.PushNotifications {
				t.Fatalf("capabilities do not tell the truth: %+v", card.Capabilities)
			}
			var v1, v03 bool
			var rest, grpc bool
			for i, iface := range card.SupportedInterfaces {
				if iface.ProtocolBinding == a2a.TransportProtocolHTTPJSON && strings.TrimSuffix(iface.URL, "/") == h.addr(g) {
					rest = true
					continue
				}
				if iface.ProtocolBinding == a2a.TransportProtocolGRPC && iface.Tenant == g.Handle &&
					iface.URL == strings.TrimPrefix(h.srv.URL, "http://") {
					grpc = true
					continue
				}
				if iface.URL != h.addr(g) || iface.ProtocolBinding != a2a.TransportProtocolJSONRPC {
					t.Fatalf("interface %d: %+v", i, iface)
				}
				switch iface.ProtocolVersion {
				case "1.0":
					v1 = true
					if i != 0 && name == "v1" {
						t.Fatal("the 1.0 interface is not first")
					}
				case "0.3", "0.3.0":
					v03 = true
				}
			}
			if !v1 || !v03 || !rest || !grpc {
				t.Fatalf("interfaces %+v", card.SupportedInterfaces)
			}
			if _, ok := card.SecuritySchemes["bearer"].(a2a.HTTPAuthSecurityScheme); !ok {
				t.Fatalf("bearer scheme: %#v", card.SecuritySchemes)
			}
			if len(card.SecurityRequirements) != 1 {
				t.Fatalf("security requirements: %+v", card.SecurityRequirements)
			}
		})
	}
	if r2 := h.do("GET", h.addr(g)+"/.well-known/agent-card.json", map[string]string{"If-None-Match": r.header.Get("ETag")}, ""); r2.status != http.StatusNotModified {
		t.Fatalf("revalidation: %d", r2.status)
	}
}

func TestCardV03Shape(t *testing.T) {
	h := newHarness(t)
	g := h.agent("alice")
	r := h.do("GET", h.addr(g)+"/.well-known/agent.json", nil, "")
	if r.status != 200 {
		t.Fatalf("status %d", r.status)
	}
	for key, want := range map[string]any{"protocolVersion": "0.3.0", "url": h.addr(g), "preferredTransport": "JSONRPC"} {
		if r.json[key] != want {
			t.Fatalf("%s = %v, want %v", key, r.json[key], want)
		}
	}
	if _, has := r.json["supportedInterfaces"]; has {
		t.Fatal("0.3 card has supportedInterfaces")
	}
	if path(r.json, "securitySchemes", "bearer", "type") != "http" || path(r.json, "securitySchemes", "bearer", "scheme") != "bearer" {
		t.Fatalf("0.3 security scheme: %v", r.json["securitySchemes"])
	}
	sec := r.json["security"].([]any)
	if _, ok := sec[0].(map[string]any)["bearer"]; !ok {
		t.Fatalf("security %v", sec)
	}
	card, err := a2av0.NewAgentCardParser()(r.body)
	if err != nil {
		t.Fatal(err)
	}
	if len(card.SupportedInterfaces) == 0 || card.SupportedInterfaces[0].URL != h.addr(g) {
		t.Fatalf("parsed 0.3 card: %+v", card.SupportedInterfaces)
	}
}

func TestCardsOfMissingOrDisabledAgents(t *testing.T) {
	h := newHarness(t)
	acct, _ := h.account("dave")
	g := h.agentOf(acct, "daves-agent")
	if r := h.do("GET", h.srv.URL+"/a/nobody/.well-known/agent-card.json", nil, ""); r.status != 404 {
		t.Fatalf("unknown agent: %d", r.status)
	}
	if r := h.do("GET", h.addr(g)+"/.well-known/agent-card.json", nil, ""); r.status != 200 {
		t.Fatalf("enabled: %d", r.status)
	}
	yes := true
	_, err := h.db.UpdateAccount(context.Background(), acct.ID, switchboard.AccountUpdate{Disabled: &yes})
	must(t, err)
	for _, p := range []string{"/.well-known/agent-card.json", "/.well-known/agent.json", ""} {
		if r := h.do("GET", h.addr(g)+p, nil, ""); r.status != 404 {
			t.Fatalf("disabled account's agent %q: %d", p, r.status)
		}
	}
	if r := h.do("POST", h.addr(g)+"/.well-known/agent-card.json", nil, ""); r.status != http.StatusMethodNotAllowed {
		t.Fatalf("POST card: %d", r.status)
	}
}

func TestLandingPage(t *testing.T) {
	h := newHarness(t)
	acct, _ := h.account("mallory")
	g := &switchboard.Agent{
		ID: switchboard.NewID(), AccountID: acct.ID, Handle: "evil", Name: `<script>alert(1)</script>`,
		Description: `"><img src=x onerror=alert(2)>`, Mode: switchboard.ModeInbox, AcceptsTasks: true,
		Skills: []a2a.AgentSkill{{ID: "s", Name: "<b>bold</b>", Description: "</li><script>x</script>", Tags: []string{"<i>"}}},
	}
	must(t, h.db.CreateAgent(context.Background(), g))

	r := h.do("GET", h.addr(g), map[string]string{"Accept": "text/html,application/xhtml+xml"}, "")
	page := string(r.body)
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		t.Fatalf("html: %d %s", r.status, r.header.Get("Content-Type"))
	}
	for _, bad := range []string{"<script>", "<img", "<b>bold", "<i>"} {
		if strings.Contains(page, bad) {
			t.Fatalf("unescaped %q in page:\n%s", bad, page)
		}
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") || !strings.Contains(page, "/.well-known/agent-card.json") {
		t.Fatalf("page content:\n%s", page)
	}
	if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Fatalf("CSP %q", csp)
	}

	j := h.do("GET", h.addr(g), nil, "")
	if j.json["name"] != g.Name || j.json["a2a"] != h.addr(g) || !strings.HasSuffix(j.json["agentCard"].(string), "/a/evil/.well-known/agent-card.json") {
		t.Fatalf("json landing: %s", j.body)
	}
	forced := h.do("GET", h.addr(g)+"?format=json", map[string]string{"Accept": "text/html"}, "")
	if forced.json["name"] != g.Name {
		t.Fatalf("?format=json: %s", forced.body)
	}
	head := h.do("HEAD", h.addr(g), map[string]string{"Accept": "text/html"}, "")
	if head.status != 200 || len(head.body) != 0 {
		t.Fatalf("HEAD: %d, %d bytes", head.status, len(head.body))
	}
}

func TestDefaultAgentAtRoot(t *testing.T) {
	h := newHarness(t, withConfig(func(c *httpapi.Config) { c.DefaultAgent = "alice" }))
	g := h.agent("alice")
	tok := h.peerToken(g, "bob")
	card := h.do("GET", h.srv.URL+"/.well-known/agent-card.json", nil, "")
	if card.status != 200 || card.json["name"] != "Agent alice" || path(card.json["supportedInterfaces"].([]any)[0], "url") != h.srv.URL+"/" {
		t.Fatalf("root card: %s", card.body)
	}
	if c3 := h.do("GET", h.srv.URL+"/.well-known/agent.json", nil, ""); c3.json["url"] != h.srv.URL+"/" {
		t.Fatalf("root 0.3 card: %s", c3.body)
	}
	res := h.call(h.srv.URL+"/", tok, "SendMessage", userMessage("m1", "at root")).result(t)
	if path(res, "task", "status", "state") != "TASK_STATE_SUBMITTED" {
		t.Fatalf("root send: %v", res)
	}
	// The agent's own address still works and sees the same task.
	id := path(res, "task", "id").(string)
	h.call(h.addr(g), tok, "GetTask", map[string]any{"id": id}).result(t)
	// Management routes are not shadowed by the root agent.
	if r := h.owner("GET", "/agents", h.operatorToken, nil); r.status != 200 {
		t.Fatalf("owner API with a default agent: %d", r.status)
	}
}

func TestRootWithoutDefaultAgent(t *testing.T) {
	h := newHarness(t)
	if r := h.do("GET", h.srv.URL+"/", nil, ""); r.status != 200 || r.json["service"] != "switchboard" {
		t.Fatalf("root: %d %s", r.status, r.body)
	}
	if r := h.do("GET", h.srv.URL+"/.well-known/agent-card.json", nil, ""); r.status != 404 {
		t.Fatalf("root card without default agent: %d", r.status)
	}
	if r := h.do("POST", h.srv.URL+"/", nil, "{}"); r.status != 404 {
		t.Fatalf("root POST: %d", r.status)
	}
}

func TestPublicURL(t *testing.T) {
	h := newHarness(t, withConfig(func(c *httpapi.Config) { c.PublicURL = "https://agents.example.com/" }))
	g := h.agent("alice")
	r := h.do("GET", h.addr(g)+"/.well-known/agent-card.json", nil, "")
	var card struct {
		URL string `json:"url"`
	}
	must(t, json.Unmarshal(r.body, &card))
	if card.URL != "https://agents.example.com/a/alice" {
		t.Fatalf("url %q", card.URL)
	}
	// Without a public URL, a forged Host header cannot inject markup.
	h2 := newHarness(t)
	g2 := h2.agent("alice")
	req, _ := http.NewRequest("GET", h2.addr(g2)+"/.well-known/agent-card.json", nil)
	req.Host = `evil"><script>`
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	var c2 struct {
		URL string `json:"url"`
	}
	must(t, json.NewDecoder(resp.Body).Decode(&c2))
	if c2.URL != "http://localhost/a/alice" {
		t.Fatalf("forged host gave url %q", c2.URL)
	}
}

func TestCardShapesForConformance(t *testing.T) {
	h := newHarness(t)
	acct, _ := h.account("plain")
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "bare", Mode: switchboard.ModeInbox, AcceptsTasks: true}
	must(t, h.db.CreateAgent(context.Background(), g))

	r := h.do("GET", h.addr(g)+"/.well-known/agent-card.json", nil, "")
	// Each 1.0 security scheme is exactly one wrapper object.
	scheme := path(r.json, "securitySchemes", "bearer").(map[string]any)
	if len(scheme) != 1 || path(scheme, "httpAuthSecurityScheme", "scheme") != "Bearer" {
		t.Fatalf("1.0 scheme: %v", scheme)
	}
	// An agent without skills still lists one: the spec requires skills.
	if skills := r.json["skills"].([]any); len(skills) != 1 || path(skills[0], "id") != "general" {
		t.Fatalf("skills: %v", r.json["skills"])
	}
	if !strings.Contains(r.header.Get("Vary"), "A2A-Version") {
		t.Fatalf("Vary = %q", r.header.Get("Vary"))
	}
	// A client that asks for 0.3 gets the 0.3 card at the same path.
	r03 := h.do("GET", h.addr(g)+"/.well-known/agent-card.json", map[string]string{"A2A-Version": "0.3"}, "")
	if _, has := r03.json["supportedInterfaces"]; has || path(r03.json, "securitySchemes", "bearer", "type") != "http" {
		t.Fatalf("0.3 card by header: %s", r03.body)
	}
	if r03.header.Get("ETag") == r.header.Get("ETag") {
		t.Fatal("both shapes share one ETag")
	}
}

func TestForwardedHeaders(t *testing.T) {
	h := newHarness(t, withConfig(func(c *httpapi.Config) { c.TrustForwarded = true }))
	g := h.agent("alice")
	// The proxy appended its own value after the one the client forged.
	r := h.do("GET", h.addr(g)+"/.well-known/agent-card.json", map[string]string{
		"X-Forwarded-Host": "evil.example, agents.example.com", "X-Forwarded-Proto": "http, https",
	}, "")
	if r.json["url"] != "https://agents.example.com/a/alice" {
		t.Fatalf("url %v", r.json["url"])
	}
	if v := strings.Join(r.header.Values("Vary"), ","); !strings.Contains(v, "X-Forwarded-Host") {
		t.Fatalf("Vary = %q", v)
	}
	// Without TrustForwarded the headers are ignored.
	h2 := newHarness(t)
	g2 := h2.agent("alice")
	r2 := h2.do("GET", h2.addr(g2)+"/.well-known/agent-card.json", map[string]string{"X-Forwarded-Host": "evil.example"}, "")
	if strings.Contains(r2.json["url"].(string), "evil") {
		t.Fatalf("untrusted forwarded host used: %v", r2.json["url"])
	}
}

func TestDefaultAgentHandleReserved(t *testing.T) {
	h := newHarness(t, withConfig(func(c *httpapi.Config) { c.DefaultAgent = "front" }))
	_, owner := h.account("owner")
	if r := h.owner("POST", "/agents", owner, map[string]any{"handle": "front"}); r.status != http.StatusForbidden {
		t.Fatalf("owner took the default agent's handle: %d", r.status)
	}
	if r := h.owner("POST", "/agents", h.operatorToken, map[string]any{"handle": "front"}); r.status != http.StatusCreated {
		t.Fatalf("operator: %d %s", r.status, r.body)
	}
}
