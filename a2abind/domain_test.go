package a2abind_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/internal/facetest"
)

// withDomainAgent gives a harness's new inbox agent bob the domain
// bot.example.com, and returns a peer token of it.
func withDomainAgent(t *testing.T, h *facetest.Harness) (*switchboard.Agent, string) {
	t.Helper()
	g := h.Agent("bob")
	d := "bot.example.com"
	g, err := h.DB.UpdateAgent(context.Background(), g.ID, switchboard.AgentUpdate{Domain: &d})
	facetest.Must(t, err)
	return g, h.PeerToken(g, "peer")
}

// TestAgentDomainCard: the card at the root of an agent domain (1.0, 0.3,
// either path) names the domain; the card at the agent's address on the
// deployment names that address, and the deployment's own root is as it
// was.
func TestAgentDomainCard(t *testing.T) {
	h := facetest.NewDomain(t)
	withDomainAgent(t, h)
	for _, c := range []struct{ path, version string }{
		{"/.well-known/agent-card.json", ""}, {"/.well-known/agent-card.json", "1.0"},
		{"/.well-known/agent-card.json", "0.3"}, {"/.well-known/agent.json", ""},
	} {
		r := h.At("GET", "http://Bot.Example.com:80"+c.path, map[string]string{"A2A-Version": c.version}, "")
		if r.Status != http.StatusOK || r.JSON["url"] != "http://bot.example.com/" || strings.Contains(string(r.Body), "sb.test") {
			t.Fatalf("%s (%s) on the domain: %d %s", c.path, c.version, r.Status, r.Body)
		}
		if c.version == "1.0" {
			ifaces, _ := r.JSON["supportedInterfaces"].([]any)
			if len(ifaces) == 0 || ifaces[0].(map[string]any)["url"] != "http://bot.example.com/" {
				t.Fatalf("interfaces on the domain: %s", r.Body)
			}
		}
	}
	r := h.At("GET", facetest.DeploymentURL+"/a/bob/.well-known/agent-card.json", nil, "")
	if r.Status != http.StatusOK || r.JSON["url"] != facetest.DeploymentURL+"/a/bob" {
		t.Fatalf("the card at the deployment's address: %d %s", r.Status, r.Body)
	}
	r = h.At("GET", facetest.DeploymentURL+"/.well-known/agent-card.json", nil, "")
	if r.Status != http.StatusNotFound {
		t.Fatalf("the deployment's root card without a default agent: %d %s", r.Status, r.Body)
	}
	r = h.At("GET", "http://nobody.example.com/", nil, "")
	if r.Status != http.StatusOK || r.JSON["service"] != "switchboard" {
		t.Fatalf("a host no agent holds: %d %s", r.Status, r.Body)
	}
}

// TestAgentDomainLanding: GET / on the domain is the agent's landing page
// (HTML for browsers, JSON otherwise), naming the domain.
func TestAgentDomainLanding(t *testing.T) {
	h := facetest.NewDomain(t)
	withDomainAgent(t, h)
	r := h.At("GET", "http://bot.example.com/", map[string]string{"Accept": "text/html"}, "")
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), "<code>http://bot.example.com/</code>") ||
		!strings.Contains(string(r.Body), "http://bot.example.com/device") || strings.Contains(string(r.Body), "sb.test") {
		t.Fatalf("landing HTML: %d %s", r.Status, r.Body)
	}
	r = h.At("GET", "http://bot.example.com/", nil, "")
	if r.Status != http.StatusOK || r.JSON["handle"] != "bob" || r.JSON["a2a"] != "http://bot.example.com/" {
		t.Fatalf("landing JSON: %d %s", r.Status, r.Body)
	}
}

// TestAgentDomainRPC: JSON-RPC 1.0 and 0.3 at the root of the domain reach
// the agent, with its peers' tokens; a stream names the task; a call
// without a token is told where to pair, on the domain.
func TestAgentDomainRPC(t *testing.T) {
	h := facetest.NewDomain(t)
	g, tok := withDomainAgent(t, h)
	call := func(method string, params any, version string) *facetest.Response {
		p, _ := json.Marshal(params)
		return h.At("POST", "http://bot.example.com/", map[string]string{"Authorization": "Bearer " + tok,
			"Content-Type": "application/json", "A2A-Version": version},
			`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+string(p)+`}`)
	}
	res := call("SendMessage", facetest.UserMessage("m1", "hello over the domain"), "1.0").Result(t)
	id := res["task"].(map[string]any)["id"].(string)
	if task, err := h.DB.FindTaskByID(context.Background(), a2a.TaskID(id)); err != nil || task.AgentID != g.ID {
		t.Fatalf("the task: %+v, %v", task, err)
	}
	res = call("message/send", facetest.LegacyMessage("m2", "hello in 0.3"), "0.3").Result(t)
	if res["kind"] != "task" {
		t.Fatalf("0.3 answer: %v", res)
	}
	r := call("GetTask", map[string]any{"id": id}, "1.0").Result(t)
	if r["id"] != id {
		t.Fatalf("GetTask: %v", r)
	}
	// A stream.
	resp := rawAt(h, "POST", "http://bot.example.com/", map[string]string{"Authorization": "Bearer " + tok,
		"Content-Type": "application/json", "A2A-Version": "1.0", "Accept": "text/event-stream"},
		`{"jsonrpc":"2.0","id":2,"method":"SendStreamingMessage","params":`+encodeJSON(t, facetest.UserMessage("m3", "stream it"))+`}`)
	defer resp.Body.Close()
	line := firstDataLine(t, resp)
	if resp.StatusCode != http.StatusOK || !strings.Contains(line, `"task"`) {
		t.Fatalf("stream: %d %s", resp.StatusCode, line)
	}
	// Without a token: 401, and the pairing hint names the domain.
	un := h.At("POST", "http://bot.example.com/", map[string]string{"Content-Type": "application/json", "A2A-Version": "1.0"},
		`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`)
	if un.Status != http.StatusUnauthorized || !strings.Contains(string(un.Body), "http://bot.example.com/oauth/device_authorization") ||
		!strings.Contains(string(un.Body), "http://bot.example.com/.well-known/oauth-protected-resource") || strings.Contains(string(un.Body), "sb.test") {
		t.Fatalf("401 on the domain: %d %s", un.Status, un.Body)
	}
	// The agent's address on the deployment still works, and names itself.
	r2 := h.At("POST", facetest.DeploymentURL+"/a/bob", map[string]string{"Authorization": "Bearer " + tok, "Content-Type": "application/json",
		"A2A-Version": "1.0"}, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+id+`"}}`)
	if r2.Result(t)["id"] != id {
		t.Fatalf("at the deployment's address: %s", r2.Body)
	}
}

// rawAt sends a request through hostClient and returns the response
// unread.
func rawAt(h *facetest.Harness, method, u string, header map[string]string, body string) *http.Response {
	h.T.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	facetest.Must(h.T, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := h.HostClient().Do(req)
	facetest.Must(h.T, err)
	return resp
}

// firstDataLine returns the first "data:" line of an SSE response.
func firstDataLine(t *testing.T, resp *http.Response) string {
	t.Helper()
	buf := make([]byte, 0, 4096)
	chunk := make([]byte, 1024)
	for !strings.Contains(string(buf), "\n\n") {
		n, err := resp.Body.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if err != nil {
			break
		}
	}
	for line := range strings.SplitSeq(string(buf), "\n") {
		if d, ok := strings.CutPrefix(line, "data:"); ok {
			return d
		}
	}
	return string(buf)
}

func encodeJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	facetest.Must(t, err)
	return string(b)
}

// TestAgentDomainOAuthMetadata: the authorization server and resource
// metadata on the domain name the domain (issuer, endpoints, resource);
// the device authorization's verification URI is the domain's /device;
// at the agent's address on the deployment, they name that address.
func TestAgentDomainOAuthMetadata(t *testing.T) {
	h := facetest.NewDomain(t)
	withDomainAgent(t, h)
	as := h.At("GET", "http://bot.example.com/.well-known/oauth-authorization-server", nil, "")
	if as.Status != http.StatusOK || as.JSON["issuer"] != "http://bot.example.com" ||
		as.JSON["device_authorization_endpoint"] != "http://bot.example.com/oauth/device_authorization" ||
		as.JSON["token_endpoint"] != "http://bot.example.com/oauth/token" {
		t.Fatalf("authorization server metadata: %d %s", as.Status, as.Body)
	}
	rs := h.At("GET", "http://bot.example.com/.well-known/oauth-protected-resource", nil, "")
	if rs.Status != http.StatusOK || rs.JSON["resource"] != "http://bot.example.com" {
		t.Fatalf("resource metadata: %d %s", rs.Status, rs.Body)
	}
	da := h.At("POST", "http://bot.example.com/oauth/device_authorization", map[string]string{"Content-Type": "application/json"},
		`{"client_name":"Barry"}`)
	if da.Status != http.StatusOK || da.JSON["verification_uri"] != "http://bot.example.com/device" {
		t.Fatalf("device authorization: %d %s", da.Status, da.Body)
	}
	tok := h.At("POST", "http://bot.example.com/oauth/token", map[string]string{"Content-Type": "application/json"},
		`{"grant_type":"urn:ietf:params:oauth:grant-type:device_code","device_code":"`+da.JSON["device_code"].(string)+`"}`)
	if tok.Status != http.StatusBadRequest || tok.JSON["error"] != "authorization_pending" {
		t.Fatalf("token poll: %d %s", tok.Status, tok.Body)
	}
	dep := h.At("GET", facetest.DeploymentURL+"/a/bob/.well-known/oauth-authorization-server", nil, "")
	if dep.JSON["issuer"] != facetest.DeploymentURL+"/a/bob" {
		t.Fatalf("metadata at the deployment's address: %s", dep.Body)
	}
}

// TestAgentDomainSignInPages: on an agent domain, the pairing page, the
// MCP consent page and the console send the browser to the same page on
// the deployment's host (303), the agent in the path and the query kept;
// the consent page learns the domain's MCP resource when the client named
// none.
func TestAgentDomainSignInPages(t *testing.T) {
	h := facetest.NewDomain(t)
	withDomainAgent(t, h)
	for _, c := range []struct{ method, path, to string }{
		{"GET", "/device", facetest.DeploymentURL + "/a/bob/device"},
		{"GET", "/device?user_code=ABCD-EFGH", facetest.DeploymentURL + "/a/bob/device?user_code=ABCD-EFGH"},
		{"POST", "/device", facetest.DeploymentURL + "/a/bob/device"},
		{"GET", "/oauth/authorize?client_id=c&resource=http%3A%2F%2Fbot.example.com%2Fmcp&state=s",
			facetest.DeploymentURL + "/a/bob/oauth/authorize?client_id=c&resource=http%3A%2F%2Fbot.example.com%2Fmcp&state=s"},
		{"GET", "/oauth/authorize?state=s&client_id=c", facetest.DeploymentURL + "/a/bob/oauth/authorize?client_id=c&resource=http%3A%2F%2Fbot.example.com%2Fmcp&state=s"},
		{"GET", "/dashboard", facetest.DeploymentURL + "/dashboard"},
		{"GET", "/dashboard/agents/bob?x=1", facetest.DeploymentURL + "/dashboard/agents/bob?x=1"},
	} {
		r := h.At(c.method, "http://bot.example.com"+c.path, nil, "")
		if r.Status != http.StatusSeeOther || r.Header.Get("Location") != c.to {
			t.Errorf("%s %s: %d to %q, want 303 to %q", c.method, c.path, r.Status, r.Header.Get("Location"), c.to)
		}
	}
}

// TestAgentDomainServesOnlyTheAgent: on an agent domain, the owner API,
// the network API, communities, other agents' addresses, the agent's own
// /a/ path, health and the connector endpoint are 404, whatever the
// credential; a disabled account's domain serves nothing.
func TestAgentDomainServesOnlyTheAgent(t *testing.T) {
	h := facetest.NewDomain(t)
	withDomainAgent(t, h)
	h.Agent("carl")
	op := map[string]string{"Authorization": "Bearer " + h.OperatorToken, "Content-Type": "application/json"}
	for _, c := range []struct{ method, path string }{
		{"GET", "/agents"}, {"GET", "/agents/bob"}, {"PATCH", "/agents/bob"}, {"POST", "/agents"}, {"GET", "/account"},
		{"GET", "/accounts"}, {"POST", "/tasks"}, {"GET", "/directory"}, {"GET", "/communities"}, {"GET", "/c/crew"},
		{"GET", "/a/carl"}, {"GET", "/a/carl/.well-known/agent-card.json"}, {"POST", "/a/carl"}, {"GET", "/a/bob"},
		{"GET", "/a/bob/.well-known/agent-card.json"}, {"GET", "/healthz"}, {"GET", "/readyz"}, {"GET", "/connect"},
		{"GET", "/metrics"}, {"GET", "/mcp-tokens"}, {"GET", "/.well-known/oauth-authorization-server/a/bob"},
		{"GET", "/mcp/"}, {"GET", "/device/x"}, {"GET", "/x"},
	} {
		r := h.At(c.method, "http://bot.example.com"+c.path, op, "{}")
		if r.Status != http.StatusNotFound {
			t.Errorf("%s %s on the agent domain: %d %s", c.method, c.path, r.Status, r.Body)
		}
	}
	if r := h.At("GET", facetest.DeploymentURL+"/agents/bob", op, ""); r.Status != http.StatusOK {
		t.Fatalf("the owner API on the deployment's host: %d %s", r.Status, r.Body)
	}
	// A disabled account's agent domain serves nothing, not even a redirect.
	alice, _ := h.Account("alice")
	g := h.AgentOf(alice, "dis")
	d := "dis.example.com"
	_, err := h.DB.UpdateAgent(context.Background(), g.ID, switchboard.AgentUpdate{Domain: &d})
	facetest.Must(t, err)
	yes := true
	_, err = h.DB.UpdateAccount(context.Background(), alice.ID, switchboard.AccountUpdate{Disabled: &yes})
	facetest.Must(t, err)
	for _, p := range []string{"/", "/.well-known/agent-card.json", "/device", "/dashboard"} {
		if r := h.At("GET", "http://dis.example.com"+p, nil, ""); r.Status != http.StatusNotFound {
			t.Errorf("%s on a disabled account's domain: %d %s", p, r.Status, r.Body)
		}
	}
}

// TestAgentDomainDeploymentNames: a Host that is the deployment's own
// (its public URL's host, one of DeploymentDomains) is the deployment's,
// even if an agent's row were to hold it.
func TestAgentDomainDeploymentNames(t *testing.T) {
	h := facetest.NewDomain(t, facetest.WithConfig(func(c *httpapi.Config) { c.DeploymentDomains = []string{"sb2.test"} }))
	g := h.Agent("bob")
	for _, d := range []string{"sb.test", "sb2.test"} {
		_, err := h.DB.UpdateAgent(context.Background(), g.ID, switchboard.AgentUpdate{Domain: &d})
		facetest.Must(t, err)
		if r := h.At("GET", "http://"+d+"/", nil, ""); r.Status != http.StatusOK || r.JSON["service"] != "switchboard" {
			t.Errorf("%s: %d %s", d, r.Status, r.Body)
		}
	}
	u, _ := url.Parse(facetest.DeploymentURL)
	if r := h.At("GET", "http://"+u.Host+"/healthz", nil, ""); r.Status != http.StatusOK {
		t.Fatalf("health on the deployment: %d", r.Status)
	}
}

// TestAgentDomainBehindProxy: behind a trusted proxy that sets
// X-Forwarded-Host and X-Forwarded-Proto, a request the proxy forwards
// for an agent's domain is the agent's, and names it on https.
func TestAgentDomainBehindProxy(t *testing.T) {
	h := facetest.New(t, facetest.WithConfig(func(c *httpapi.Config) { c.TrustForwarded, c.DeploymentDomains = true, []string{"sb.test"} }))
	withDomainAgent(t, h)
	fwd := map[string]string{"X-Forwarded-Host": "bot.example.com", "X-Forwarded-Proto": "https"}
	r := h.At("GET", "http://127.0.0.1/.well-known/agent-card.json", fwd, "")
	if r.Status != http.StatusOK || r.JSON["url"] != "https://bot.example.com/" {
		t.Fatalf("the card behind a proxy: %d %s", r.Status, r.Body)
	}
	r = h.At("GET", "http://127.0.0.1/device?user_code=X", fwd, "")
	if r.Status != http.StatusSeeOther || r.Header.Get("Location") != "https://sb.test/a/bob/device?user_code=X" {
		t.Fatalf("the device page behind a proxy: %d %q", r.Status, r.Header.Get("Location"))
	}
	if r := h.At("GET", "http://127.0.0.1/agents", fwd, ""); r.Status != http.StatusNotFound {
		t.Fatalf("the owner API behind a proxy, for the domain: %d", r.Status)
	}
}
