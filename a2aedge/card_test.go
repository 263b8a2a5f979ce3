package a2aedge_test

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
	"github.com/switchboard-dev/switchboard/internal/facetest"
)

func TestCardV1ParsesWithBothGoParsers(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	r := h.Do("GET", h.Addr(g)+"/.well-known/agent-card.json", nil, "")
	if r.Status != http.StatusOK || r.Header.Get("Access-Control-Allow-Origin") != "*" || r.Header.Get("ETag") == "" {
		t.Fatalf("card answer: %d %v", r.Status, r.Header)
	}

	for name, parse := range map[string]agentcard.Parser{"v1": agentcard.DefaultCardParser, "v0": a2av0.NewAgentCardParser()} {
		t.Run(name, func(t *testing.T) {
			card, err := parse(r.Body)
			if err != nil {
				t.Fatalf("parse: %v\n%s", err, r.Body)
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
				if iface.ProtocolBinding == a2a.TransportProtocolHTTPJSON && strings.TrimSuffix(iface.URL, "/") == h.Addr(g) {
					rest = true
					continue
				}
				if iface.ProtocolBinding == a2a.TransportProtocolGRPC && iface.Tenant == g.Handle &&
					iface.URL == strings.TrimPrefix(h.Server.URL, "http://") {
					grpc = true
					continue
				}
				if iface.URL != h.Addr(g) || iface.ProtocolBinding != a2a.TransportProtocolJSONRPC {
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
	if r2 := h.Do("GET", h.Addr(g)+"/.well-known/agent-card.json", map[string]string{"If-None-Match": r.Header.Get("ETag")}, ""); r2.Status != http.StatusNotModified {
		t.Fatalf("revalidation: %d", r2.Status)
	}
}

func TestCardV03Shape(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	r := h.Do("GET", h.Addr(g)+"/.well-known/agent.json", nil, "")
	if r.Status != 200 {
		t.Fatalf("status %d", r.Status)
	}
	for key, want := range map[string]any{"protocolVersion": "0.3.0", "url": h.Addr(g), "preferredTransport": "JSONRPC"} {
		if r.JSON[key] != want {
			t.Fatalf("%s = %v, want %v", key, r.JSON[key], want)
		}
	}
	if _, has := r.JSON["supportedInterfaces"]; has {
		t.Fatal("0.3 card has supportedInterfaces")
	}
	if facetest.Path(r.JSON, "securitySchemes", "bearer", "type") != "http" || facetest.Path(r.JSON, "securitySchemes", "bearer", "scheme") != "bearer" {
		t.Fatalf("0.3 security scheme: %v", r.JSON["securitySchemes"])
	}
	sec := r.JSON["security"].([]any)
	if _, ok := sec[0].(map[string]any)["bearer"]; !ok {
		t.Fatalf("security %v", sec)
	}
	card, err := a2av0.NewAgentCardParser()(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	if len(card.SupportedInterfaces) == 0 || card.SupportedInterfaces[0].URL != h.Addr(g) {
		t.Fatalf("parsed 0.3 card: %+v", card.SupportedInterfaces)
	}
}

func TestCardsOfMissingOrDisabledAgents(t *testing.T) {
	h := facetest.New(t)
	acct, _ := h.Account("dave")
	g := h.AgentOf(acct, "daves-agent")
	if r := h.Do("GET", h.Server.URL+"/a/nobody/.well-known/agent-card.json", nil, ""); r.Status != 404 {
		t.Fatalf("unknown agent: %d", r.Status)
	}
	if r := h.Do("GET", h.Addr(g)+"/.well-known/agent-card.json", nil, ""); r.Status != 200 {
		t.Fatalf("enabled: %d", r.Status)
	}
	yes := true
	_, err := h.DB.UpdateAccount(context.Background(), acct.ID, switchboard.AccountUpdate{Disabled: &yes})
	facetest.Must(t, err)
	for _, p := range []string{"/.well-known/agent-card.json", "/.well-known/agent.json", ""} {
		if r := h.Do("GET", h.Addr(g)+p, nil, ""); r.Status != 404 {
			t.Fatalf("disabled account's agent %q: %d", p, r.Status)
		}
	}
	if r := h.Do("POST", h.Addr(g)+"/.well-known/agent-card.json", nil, ""); r.Status != http.StatusMethodNotAllowed {
		t.Fatalf("POST card: %d", r.Status)
	}
}

func TestLandingPage(t *testing.T) {
	h := facetest.New(t)
	acct, _ := h.Account("mallory")
	g := &switchboard.Agent{
		ID: switchboard.NewID(), AccountID: acct.ID, Handle: "evil", Name: `<script>alert(1)</script>`,
		Description: `"><img src=x onerror=alert(2)>`, Mode: switchboard.ModeInbox, AcceptsTasks: true,
		Skills: []a2a.AgentSkill{{ID: "s", Name: "<b>bold</b>", Description: "</li><script>x</script>", Tags: []string{"<i>"}}},
	}
	facetest.Must(t, h.DB.CreateAgent(context.Background(), g))

	r := h.Do("GET", h.Addr(g), map[string]string{"Accept": "text/html,application/xhtml+xml"}, "")
	page := string(r.Body)
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("html: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	for _, bad := range []string{"<script>", "<img", "<b>bold", "<i>"} {
		if strings.Contains(page, bad) {
			t.Fatalf("unescaped %q in page:\n%s", bad, page)
		}
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") || !strings.Contains(page, "/.well-known/agent-card.json") {
		t.Fatalf("page content:\n%s", page)
	}
	if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Fatalf("CSP %q", csp)
	}

	j := h.Do("GET", h.Addr(g), nil, "")
	if j.JSON["name"] != g.Name || j.JSON["a2a"] != h.Addr(g) || !strings.HasSuffix(j.JSON["agentCard"].(string), "/a/evil/.well-known/agent-card.json") {
		t.Fatalf("json landing: %s", j.Body)
	}
	forced := h.Do("GET", h.Addr(g)+"?format=json", map[string]string{"Accept": "text/html"}, "")
	if forced.JSON["name"] != g.Name {
		t.Fatalf("?format=json: %s", forced.Body)
	}
	head := h.Do("HEAD", h.Addr(g), map[string]string{"Accept": "text/html"}, "")
	if head.Status != 200 || len(head.Body) != 0 {
		t.Fatalf("HEAD: %d, %d bytes", head.Status, len(head.Body))
	}
}

func TestDefaultAgentAtRoot(t *testing.T) {
	h := facetest.New(t, facetest.WithConfig(func(c *httpapi.Config) { c.DefaultAgent = "alice" }))
	g := h.Agent("alice")
	tok := h.PeerToken(g, "bob")
	card := h.Do("GET", h.Server.URL+"/.well-known/agent-card.json", nil, "")
	if card.Status != 200 || card.JSON["name"] != "Agent alice" || facetest.Path(card.JSON["supportedInterfaces"].([]any)[0], "url") != h.Server.URL+"/" {
		t.Fatalf("root card: %s", card.Body)
	}
	if c3 := h.Do("GET", h.Server.URL+"/.well-known/agent.json", nil, ""); c3.JSON["url"] != h.Server.URL+"/" {
		t.Fatalf("root 0.3 card: %s", c3.Body)
	}
	res := h.Call(h.Server.URL+"/", tok, "SendMessage", facetest.UserMessage("m1", "at root")).Result(t)
	if facetest.Path(res, "task", "status", "state") != "TASK_STATE_SUBMITTED" {
		t.Fatalf("root send: %v", res)
	}
	// The agent's own address still works and sees the same task.
	id := facetest.Path(res, "task", "id").(string)
	h.Call(h.Addr(g), tok, "GetTask", map[string]any{"id": id}).Result(t)
	// Management routes are not shadowed by the root agent.
	if r := h.Owner("GET", "/agents", h.OperatorToken, nil); r.Status != 200 {
		t.Fatalf("owner API with a default agent: %d", r.Status)
	}
}

func TestRootWithoutDefaultAgent(t *testing.T) {
	h := facetest.New(t)
	if r := h.Do("GET", h.Server.URL+"/", nil, ""); r.Status != 200 || r.JSON["service"] != "switchboard" {
		t.Fatalf("root: %d %s", r.Status, r.Body)
	}
	if r := h.Do("GET", h.Server.URL+"/.well-known/agent-card.json", nil, ""); r.Status != 404 {
		t.Fatalf("root card without default agent: %d", r.Status)
	}
	if r := h.Do("POST", h.Server.URL+"/", nil, "{}"); r.Status != 404 {
		t.Fatalf("root POST: %d", r.Status)
	}
}

func TestPublicURL(t *testing.T) {
	h := facetest.New(t, facetest.WithConfig(func(c *httpapi.Config) { c.PublicURL = "https://agents.example.com/" }))
	g := h.Agent("alice")
	r := h.Do("GET", h.Addr(g)+"/.well-known/agent-card.json", nil, "")
	var card struct {
		URL string `json:"url"`
	}
	facetest.Must(t, json.Unmarshal(r.Body, &card))
	if card.URL != "https://agents.example.com/a/alice" {
		t.Fatalf("url %q", card.URL)
	}
	// Without a public URL, a forged Host header cannot inject markup.
	h2 := facetest.New(t)
	g2 := h2.Agent("alice")
	req, _ := http.NewRequest("GET", h2.Addr(g2)+"/.well-known/agent-card.json", nil)
	req.Host = `evil"><script>`
	resp, err := http.DefaultClient.Do(req)
	facetest.Must(t, err)
	defer resp.Body.Close()
	var c2 struct {
		URL string `json:"url"`
	}
	facetest.Must(t, json.NewDecoder(resp.Body).Decode(&c2))
	if c2.URL != "http://localhost/a/alice" {
		t.Fatalf("forged host gave url %q", c2.URL)
	}
}

func TestCardShapesForConformance(t *testing.T) {
	h := facetest.New(t)
	acct, _ := h.Account("plain")
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "bare", Mode: switchboard.ModeInbox, AcceptsTasks: true}
	facetest.Must(t, h.DB.CreateAgent(context.Background(), g))

	r := h.Do("GET", h.Addr(g)+"/.well-known/agent-card.json", nil, "")
	// Each 1.0 security scheme is exactly one wrapper object.
	scheme := facetest.Path(r.JSON, "securitySchemes", "bearer").(map[string]any)
	if len(scheme) != 1 || facetest.Path(scheme, "httpAuthSecurityScheme", "scheme") != "Bearer" {
		t.Fatalf("1.0 scheme: %v", scheme)
	}
	// An agent without skills still lists one: the spec requires skills.
	if skills := r.JSON["skills"].([]any); len(skills) != 1 || facetest.Path(skills[0], "id") != "general" {
		t.Fatalf("skills: %v", r.JSON["skills"])
	}
	if !strings.Contains(r.Header.Get("Vary"), "A2A-Version") {
		t.Fatalf("Vary = %q", r.Header.Get("Vary"))
	}
	// A client that asks for 0.3 gets the 0.3 card at the same path.
	r03 := h.Do("GET", h.Addr(g)+"/.well-known/agent-card.json", map[string]string{"A2A-Version": "0.3"}, "")
	if _, has := r03.JSON["supportedInterfaces"]; has || facetest.Path(r03.JSON, "securitySchemes", "bearer", "type") != "http" {
		t.Fatalf("0.3 card by header: %s", r03.Body)
	}
	if r03.Header.Get("ETag") == r.Header.Get("ETag") {
		t.Fatal("both shapes share one ETag")
	}
}

func TestForwardedHeaders(t *testing.T) {
	h := facetest.New(t, facetest.WithConfig(func(c *httpapi.Config) { c.TrustForwarded = true }))
	g := h.Agent("alice")
	// The proxy appended its own value after the one the client forged.
	r := h.Do("GET", h.Addr(g)+"/.well-known/agent-card.json", map[string]string{
		"X-Forwarded-Host": "evil.example, agents.example.com", "X-Forwarded-Proto": "http, https",
	}, "")
	if r.JSON["url"] != "https://agents.example.com/a/alice" {
		t.Fatalf("url %v", r.JSON["url"])
	}
	if v := strings.Join(r.Header.Values("Vary"), ","); !strings.Contains(v, "X-Forwarded-Host") {
		t.Fatalf("Vary = %q", v)
	}
	// Without TrustForwarded the headers are ignored.
	h2 := facetest.New(t)
	g2 := h2.Agent("alice")
	r2 := h2.Do("GET", h2.Addr(g2)+"/.well-known/agent-card.json", map[string]string{"X-Forwarded-Host": "evil.example"}, "")
	if strings.Contains(r2.JSON["url"].(string), "evil") {
		t.Fatalf("untrusted forwarded host used: %v", r2.JSON["url"])
	}
}

func TestDefaultAgentHandleReserved(t *testing.T) {
	h := facetest.New(t, facetest.WithConfig(func(c *httpapi.Config) { c.DefaultAgent = "front" }))
	_, owner := h.Account("owner")
	if r := h.Owner("POST", "/agents", owner, map[string]any{"handle": "front"}); r.Status != http.StatusForbidden {
		t.Fatalf("owner took the default agent's handle: %d", r.Status)
	}
	if r := h.Owner("POST", "/agents", h.OperatorToken, map[string]any{"handle": "front"}); r.Status != http.StatusCreated {
		t.Fatalf("operator: %d %s", r.Status, r.Body)
	}
}
