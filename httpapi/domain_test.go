package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
)

// The deployment of these tests is at http://sb.test: its public URL,
// which makes its own host known, so that agent domains are served. Every
// request, to sb.test or to an agent domain, reaches the loopback server
// through hostClient, as DNS pointing at the deployment would send it.
const deploymentURL = "http://sb.test"

// newDomainHarness is a harness at deploymentURL.
func newDomainHarness(t *testing.T, opts ...harnessOption) *harness {
	t.Helper()
	return newHarness(t, append([]harnessOption{withConfig(func(c *httpapi.Config) { c.PublicURL = deploymentURL })}, opts...)...)
}

// hostClient returns a client that dials the harness's listener whatever
// the URL's host (the request keeps its Host), and follows no redirect.
func (h *harness) hostClient() *http.Client {
	addr := h.srv.Listener.Addr().String()
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	h.t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// at sends a request to url (on any host) through hostClient.
func (h *harness) at(method, u string, header map[string]string, body string) *response {
	h.t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	must(h.t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := h.hostClient().Do(req)
	must(h.t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	must(h.t, err)
	r := &response{status: resp.StatusCode, header: resp.Header, body: data}
	_ = json.Unmarshal(data, &r.json)
	return r
}

// setDomain gives the agent a domain through the owner API and returns the
// answer.
func (h *harness) setDomain(token, ref, domain string) *response {
	h.t.Helper()
	return h.owner("PATCH", "/agents/"+ref, token, map[string]any{"domain": domain})
}

// TestAgentDomainSet: an owner gives an agent a domain and takes it away;
// it is held lower-case, in punycode, and the agent's addresses in the
// owner API name it; the push URL stays on the deployment.
func TestAgentDomainSet(t *testing.T) {
	h := newDomainHarness(t)
	alice, tok := h.account("alice")
	h.agentOf(alice, "bob")
	r := h.setDomain(tok, "bob", "  Bot.Example.COM. ")
	if r.status != http.StatusOK || r.json["domain"] != "bot.example.com" {
		t.Fatalf("set: %d %s", r.status, r.body)
	}
	if r.json["address"] != "http://bot.example.com/" || r.json["agent_card"] != "http://bot.example.com/.well-known/agent-card.json" {
		t.Fatalf("addresses of an agent with a domain: %s", r.body)
	}
	if got := h.agentByHandle("bob"); got.Domain != "bot.example.com" {
		t.Fatalf("stored %q", got.Domain)
	}
	if r := h.owner("GET", "/agents/bob", tok, nil); r.json["domain"] != "bot.example.com" {
		t.Fatalf("show: %s", r.body)
	}
	if r := h.setDomain(tok, "bob", "Bücher.example"); r.status != http.StatusOK || r.json["domain"] != "xn--bcher-kva.example" {
		t.Fatalf("an IDN: %d %s", r.status, r.body)
	}
	out := h.owner("POST", "/agents/bob/outbox", tok, map[string]any{"target": "carol", "endpoint": "https://carol.example/a2a",
		"protocol": "1.0", "push_token": "push-token-0123456789abcdef"})
	if out.status != http.StatusCreated || out.json["push_url"] != deploymentURL+"/a/bob/push" {
		t.Fatalf("push URL of an agent with a domain: %d %s", out.status, out.body)
	}
	r = h.setDomain(tok, "bob", "")
	if r.status != http.StatusOK || r.json["domain"] != nil || r.json["address"] != deploymentURL+"/a/bob/" {
		t.Fatalf("removed: %d %s", r.status, r.body)
	}
	if _, err := h.db.FindAgentByDomain(context.Background(), "xn--bcher-kva.example"); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("the removed domain still finds: %v", err)
	}

	// At create: the agent is made with it, or not at all.
	r = h.owner("POST", "/agents", tok, map[string]any{"handle": "carl", "mode": "inbox", "domain": "carl.example.com"})
	if r.status != http.StatusCreated || r.json["domain"] != "carl.example.com" {
		t.Fatalf("create with a domain: %d %s", r.status, r.body)
	}
	r = h.owner("POST", "/agents", tok, map[string]any{"handle": "dup", "mode": "inbox", "domain": "CARL.example.com"})
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.json["error"].(string), "already the domain of another agent") {
		t.Fatalf("create with a taken domain: %d %s", r.status, r.body)
	}
	if r := h.owner("GET", "/agents/dup", tok, nil); r.status != http.StatusNotFound {
		t.Fatalf("an agent refused its domain was kept: %d %s", r.status, r.body)
	}
}

// TestAgentDomainRefused is the bad-input table: each name that cannot be
// an agent's domain is refused with 422 and a message that says which,
// on update and on create; the agent keeps what it had.
func TestAgentDomainRefused(t *testing.T) {
	h := newDomainHarness(t, withConfig(func(c *httpapi.Config) { c.DeploymentDomains = []string{"SB2.test", "agents.sb.test"} }))
	alice, tok := h.account("alice")
	mallory, mtok := h.account("mallory")
	h.agentOf(alice, "bob")
	h.agentOf(mallory, "eve")
	if r := h.setDomain(mtok, "eve", "eve.example.com"); r.status != http.StatusOK {
		t.Fatalf("eve's domain: %d %s", r.status, r.body)
	}
	for _, c := range []struct{ domain, says string }{
		{"127.0.0.1", "IP address"},
		{"2001:db8::1", "IP address"},
		{"[::1]", "IP address"},
		{"*.example.com", "wildcard"},
		{"bot.example.com:8443", "port"},
		{"https://bot.example.com", "scheme"},
		{"bot.example.com/a/bob", "path"},
		{"bot..example.com", "not a valid DNS name"},
		{"bot_1.example.com", "not a valid DNS name"},
		{strings.Repeat("a", 64) + ".example.com", "not a valid DNS name"},
		{"localhost", "single-label"},
		{"Eve.Example.com", "eve.example.com is already the domain of another agent"},
		{"sb.test", "this deployment's own domain"},
		{"sb2.test", "this deployment's own domain"},
		{"agents.sb.test", "this deployment's own domain"},
		{"bob.sb.test", "under this deployment's own domain sb.test"},
		{"x.agents.sb.test", "under this deployment's own domain"},
	} {
		r := h.setDomain(tok, "bob", c.domain)
		msg, _ := r.json["error"].(string)
		if r.status != http.StatusUnprocessableEntity || !strings.Contains(msg, c.says) {
			t.Errorf("PATCH domain %q: %d %s; want 422 saying %q", c.domain, r.status, r.body, c.says)
		}
		if strings.Contains(msg, "eve\"") || strings.Contains(msg, "mallory") {
			t.Errorf("PATCH domain %q: the refusal names the holder: %s", c.domain, msg)
		}
		r = h.owner("POST", "/agents", tok, map[string]any{"handle": "new", "mode": "inbox", "domain": c.domain})
		if r.status != http.StatusUnprocessableEntity {
			t.Errorf("POST with domain %q: %d %s", c.domain, r.status, r.body)
		}
	}
	if got := h.agentByHandle("bob"); got.Domain != "" {
		t.Fatalf("a refused domain was kept: %q", got.Domain)
	}
	// The request's own host is the deployment's, whatever the public URL.
	r := h.at("PATCH", "http://other-name.test/agents/bob", map[string]string{"Authorization": "Bearer " + tok}, `{"domain":"other-name.test"}`)
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.json["error"].(string), "own domain") {
		t.Fatalf("the request's host: %d %s", r.status, r.body)
	}
	// The operator gives names under the deployment's.
	h.agent("ops")
	if r := h.setDomain(h.operatorToken, "ops", "ops.sb.test"); r.status != http.StatusOK {
		t.Fatalf("the operator under the deployment's domain: %d %s", r.status, r.body)
	}
}

// TestAgentDomainNeedsKnownAddress: a deployment that takes its address
// from each request cannot tell an agent domain from itself: it refuses
// to set one, and serves none.
func TestAgentDomainNeedsKnownAddress(t *testing.T) {
	h := newHarness(t)
	alice, tok := h.account("alice")
	g := h.agentOf(alice, "bob")
	r := h.setDomain(tok, "bob", "bot.example.com")
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.json["error"].(string), "--public-url or --domain") {
		t.Fatalf("set without a known address: %d %s", r.status, r.body)
	}
	d := "bot.example.com"
	_, err := h.db.UpdateAgent(context.Background(), g.ID, switchboard.AgentUpdate{Domain: &d})
	must(t, err)
	if r := h.at("GET", "http://bot.example.com/.well-known/agent-card.json", nil, ""); r.status != http.StatusNotFound {
		t.Fatalf("an agent domain served without a known address: %d %s", r.status, r.body)
	}
}

// TestAgentDomainQuota: an account's agents hold at most
// MaxDomainsPerAccount domains; a change of domain keeps the count; the
// operator has no bound; a negative bound lets no owner have one.
func TestAgentDomainQuota(t *testing.T) {
	h := newDomainHarness(t, withConfig(func(c *httpapi.Config) { c.MaxDomainsPerAccount = 2 }))
	alice, tok := h.account("alice")
	for _, n := range []string{"a1", "a2", "a3"} {
		h.agentOf(alice, n)
	}
	for _, n := range []string{"a1", "a2"} {
		if r := h.setDomain(tok, n, n+".example.com"); r.status != http.StatusOK {
			t.Fatalf("%s: %d %s", n, r.status, r.body)
		}
	}
	r := h.setDomain(tok, "a3", "a3.example.com")
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.json["error"].(string), "hold 2 domains") {
		t.Fatalf("past the quota: %d %s", r.status, r.body)
	}
	r = h.owner("POST", "/agents", tok, map[string]any{"handle": "a4", "mode": "inbox", "domain": "a4.example.com"})
	if r.status != http.StatusUnprocessableEntity || h.owner("GET", "/agents/a4", tok, nil).status != http.StatusNotFound {
		t.Fatalf("create past the quota: %d %s", r.status, r.body)
	}
	if r := h.setDomain(tok, "a2", "deux.example.com"); r.status != http.StatusOK {
		t.Fatalf("a change of domain: %d %s", r.status, r.body)
	}
	// The operator gives alice's agent one past her quota, and its own.
	if r := h.setDomain(h.operatorToken, "a3", "a3.example.com"); r.status != http.StatusOK {
		t.Fatalf("the operator: %d %s", r.status, r.body)
	}
	for i := range 3 {
		h.agent("op" + string(rune('0'+i)))
		if r := h.setDomain(h.operatorToken, "op"+string(rune('0'+i)), "op"+string(rune('0'+i))+".example.com"); r.status != http.StatusOK {
			t.Fatalf("the operator's own: %d %s", r.status, r.body)
		}
	}

	none := newDomainHarness(t, withConfig(func(c *httpapi.Config) { c.MaxDomainsPerAccount = -1 }))
	bob, btok := none.account("bob")
	none.agentOf(bob, "b1")
	if r := none.setDomain(btok, "b1", "b1.example.com"); r.status != http.StatusUnprocessableEntity ||
		!strings.Contains(r.json["error"].(string), "may not give its agents domains") {
		t.Fatalf("no domains for owners: %d %s", r.status, r.body)
	}
	none.agent("ops")
	if r := none.setDomain(none.operatorToken, "ops", "ops.example.com"); r.status != http.StatusOK {
		t.Fatalf("the operator, with no domains for owners: %d %s", r.status, r.body)
	}
}

// withDomainAgent gives a harness's new inbox agent bob the domain
// bot.example.com, and returns a peer token of it.
func withDomainAgent(t *testing.T, h *harness) (*switchboard.Agent, string) {
	t.Helper()
	g := h.agent("bob")
	d := "bot.example.com"
	g, err := h.db.UpdateAgent(context.Background(), g.ID, switchboard.AgentUpdate{Domain: &d})
	must(t, err)
	return g, h.peerToken(g, "peer")
}

// TestAgentDomainCard: the card at the root of an agent domain (1.0, 0.3,
// either path) names the domain; the card at the agent's address on the
// deployment names that address, and the deployment's own root is as it
// was.
func TestAgentDomainCard(t *testing.T) {
	h := newDomainHarness(t)
	withDomainAgent(t, h)
	for _, c := range []struct{ path, version string }{
		{"/.well-known/agent-card.json", ""}, {"/.well-known/agent-card.json", "1.0"},
		{"/.well-known/agent-card.json", "0.3"}, {"/.well-known/agent.json", ""},
	} {
		r := h.at("GET", "http://Bot.Example.com:80"+c.path, map[string]string{"A2A-Version": c.version}, "")
		if r.status != http.StatusOK || r.json["url"] != "http://bot.example.com/" || strings.Contains(string(r.body), "sb.test") {
			t.Fatalf("%s (%s) on the domain: %d %s", c.path, c.version, r.status, r.body)
		}
		if c.version == "1.0" {
			ifaces, _ := r.json["supportedInterfaces"].([]any)
			if len(ifaces) == 0 || ifaces[0].(map[string]any)["url"] != "http://bot.example.com/" {
				t.Fatalf("interfaces on the domain: %s", r.body)
			}
		}
	}
	r := h.at("GET", deploymentURL+"/a/bob/.well-known/agent-card.json", nil, "")
	if r.status != http.StatusOK || r.json["url"] != deploymentURL+"/a/bob" {
		t.Fatalf("the card at the deployment's address: %d %s", r.status, r.body)
	}
	r = h.at("GET", deploymentURL+"/.well-known/agent-card.json", nil, "")
	if r.status != http.StatusNotFound {
		t.Fatalf("the deployment's root card without a default agent: %d %s", r.status, r.body)
	}
	r = h.at("GET", "http://nobody.example.com/", nil, "")
	if r.status != http.StatusOK || r.json["service"] != "switchboard" {
		t.Fatalf("a host no agent holds: %d %s", r.status, r.body)
	}
}

// TestAgentDomainLanding: GET / on the domain is the agent's landing page
// (HTML for browsers, JSON otherwise), naming the domain.
func TestAgentDomainLanding(t *testing.T) {
	h := newDomainHarness(t)
	withDomainAgent(t, h)
	r := h.at("GET", "http://bot.example.com/", map[string]string{"Accept": "text/html"}, "")
	if r.status != http.StatusOK || !strings.Contains(string(r.body), "<code>http://bot.example.com/</code>") ||
		!strings.Contains(string(r.body), "http://bot.example.com/device") || strings.Contains(string(r.body), "sb.test") {
		t.Fatalf("landing HTML: %d %s", r.status, r.body)
	}
	r = h.at("GET", "http://bot.example.com/", nil, "")
	if r.status != http.StatusOK || r.json["handle"] != "bob" || r.json["a2a"] != "http://bot.example.com/" {
		t.Fatalf("landing JSON: %d %s", r.status, r.body)
	}
}

// TestAgentDomainRPC: JSON-RPC 1.0 and 0.3 at the root of the domain reach
// the agent, with its peers' tokens; a stream names the task; a call
// without a token is told where to pair, on the domain.
func TestAgentDomainRPC(t *testing.T) {
	h := newDomainHarness(t)
	g, tok := withDomainAgent(t, h)
	call := func(method string, params any, version string) *response {
		p, _ := json.Marshal(params)
		return h.at("POST", "http://bot.example.com/", map[string]string{"Authorization": "Bearer " + tok,
			"Content-Type": "application/json", "A2A-Version": version},
			`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+string(p)+`}`)
	}
	res := call("SendMessage", userMessage("m1", "hello over the domain"), "1.0").result(t)
	id := res["task"].(map[string]any)["id"].(string)
	if task, err := h.db.FindTaskByID(context.Background(), a2a.TaskID(id)); err != nil || task.AgentID != g.ID {
		t.Fatalf("the task: %+v, %v", task, err)
	}
	res = call("message/send", legacyMessage("m2", "hello in 0.3"), "0.3").result(t)
	if res["kind"] != "task" {
		t.Fatalf("0.3 answer: %v", res)
	}
	r := call("GetTask", map[string]any{"id": id}, "1.0").result(t)
	if r["id"] != id {
		t.Fatalf("GetTask: %v", r)
	}
	// A stream.
	resp := h.rawAt("POST", "http://bot.example.com/", map[string]string{"Authorization": "Bearer " + tok,
		"Content-Type": "application/json", "A2A-Version": "1.0", "Accept": "text/event-stream"},
		`{"jsonrpc":"2.0","id":2,"method":"SendStreamingMessage","params":`+encodeJSON(t, userMessage("m3", "stream it"))+`}`)
	defer resp.Body.Close()
	line := firstDataLine(t, resp)
	if resp.StatusCode != http.StatusOK || !strings.Contains(line, `"task"`) {
		t.Fatalf("stream: %d %s", resp.StatusCode, line)
	}
	// Without a token: 401, and the pairing hint names the domain.
	un := h.at("POST", "http://bot.example.com/", map[string]string{"Content-Type": "application/json", "A2A-Version": "1.0"},
		`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`)
	if un.status != http.StatusUnauthorized || !strings.Contains(string(un.body), "http://bot.example.com/oauth/device_authorization") ||
		!strings.Contains(string(un.body), "http://bot.example.com/.well-known/oauth-protected-resource") || strings.Contains(string(un.body), "sb.test") {
		t.Fatalf("401 on the domain: %d %s", un.status, un.body)
	}
	// The agent's address on the deployment still works, and names itself.
	r2 := h.at("POST", deploymentURL+"/a/bob", map[string]string{"Authorization": "Bearer " + tok, "Content-Type": "application/json",
		"A2A-Version": "1.0"}, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+id+`"}}`)
	if r2.result(t)["id"] != id {
		t.Fatalf("at the deployment's address: %s", r2.body)
	}
}

// rawAt sends a request through hostClient and returns the response
// unread.
func (h *harness) rawAt(method, u string, header map[string]string, body string) *http.Response {
	h.t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	must(h.t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := h.hostClient().Do(req)
	must(h.t, err)
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
	must(t, err)
	return string(b)
}

// TestAgentDomainOAuthMetadata: the authorization server and resource
// metadata on the domain name the domain (issuer, endpoints, resource);
// the device authorization's verification URI is the domain's /device;
// at the agent's address on the deployment, they name that address.
func TestAgentDomainOAuthMetadata(t *testing.T) {
	h := newDomainHarness(t)
	withDomainAgent(t, h)
	as := h.at("GET", "http://bot.example.com/.well-known/oauth-authorization-server", nil, "")
	if as.status != http.StatusOK || as.json["issuer"] != "http://bot.example.com" ||
		as.json["device_authorization_endpoint"] != "http://bot.example.com/oauth/device_authorization" ||
		as.json["token_endpoint"] != "http://bot.example.com/oauth/token" {
		t.Fatalf("authorization server metadata: %d %s", as.status, as.body)
	}
	rs := h.at("GET", "http://bot.example.com/.well-known/oauth-protected-resource", nil, "")
	if rs.status != http.StatusOK || rs.json["resource"] != "http://bot.example.com" {
		t.Fatalf("resource metadata: %d %s", rs.status, rs.body)
	}
	da := h.at("POST", "http://bot.example.com/oauth/device_authorization", map[string]string{"Content-Type": "application/json"},
		`{"client_name":"Barry"}`)
	if da.status != http.StatusOK || da.json["verification_uri"] != "http://bot.example.com/device" {
		t.Fatalf("device authorization: %d %s", da.status, da.body)
	}
	tok := h.at("POST", "http://bot.example.com/oauth/token", map[string]string{"Content-Type": "application/json"},
		`{"grant_type":"urn:ietf:params:oauth:grant-type:device_code","device_code":"`+da.json["device_code"].(string)+`"}`)
	if tok.status != http.StatusBadRequest || tok.json["error"] != "authorization_pending" {
		t.Fatalf("token poll: %d %s", tok.status, tok.body)
	}
	dep := h.at("GET", deploymentURL+"/a/bob/.well-known/oauth-authorization-server", nil, "")
	if dep.json["issuer"] != deploymentURL+"/a/bob" {
		t.Fatalf("metadata at the deployment's address: %s", dep.body)
	}
}

// TestAgentDomainSignInPages: on an agent domain, the pairing page, the
// MCP consent page and the console send the browser to the same page on
// the deployment's host (303), the agent in the path and the query kept;
// the consent page learns the domain's MCP resource when the client named
// none.
func TestAgentDomainSignInPages(t *testing.T) {
	h := newDomainHarness(t)
	withDomainAgent(t, h)
	for _, c := range []struct{ method, path, to string }{
		{"GET", "/device", deploymentURL + "/a/bob/device"},
		{"GET", "/device?user_code=ABCD-EFGH", deploymentURL + "/a/bob/device?user_code=ABCD-EFGH"},
		{"POST", "/device", deploymentURL + "/a/bob/device"},
		{"GET", "/oauth/authorize?client_id=c&resource=http%3A%2F%2Fbot.example.com%2Fmcp&state=s",
			deploymentURL + "/a/bob/oauth/authorize?client_id=c&resource=http%3A%2F%2Fbot.example.com%2Fmcp&state=s"},
		{"GET", "/oauth/authorize?state=s&client_id=c", deploymentURL + "/a/bob/oauth/authorize?client_id=c&resource=http%3A%2F%2Fbot.example.com%2Fmcp&state=s"},
		{"GET", "/dashboard", deploymentURL + "/dashboard"},
		{"GET", "/dashboard/agents/bob?x=1", deploymentURL + "/dashboard/agents/bob?x=1"},
	} {
		r := h.at(c.method, "http://bot.example.com"+c.path, nil, "")
		if r.status != http.StatusSeeOther || r.header.Get("Location") != c.to {
			t.Errorf("%s %s: %d to %q, want 303 to %q", c.method, c.path, r.status, r.header.Get("Location"), c.to)
		}
	}
}

// TestAgentDomainServesOnlyTheAgent: on an agent domain, the owner API,
// the network API, communities, other agents' addresses, the agent's own
// /a/ path, health and the connector endpoint are 404, whatever the
// credential; a disabled account's domain serves nothing.
func TestAgentDomainServesOnlyTheAgent(t *testing.T) {
	h := newDomainHarness(t)
	withDomainAgent(t, h)
	h.agent("carl")
	op := map[string]string{"Authorization": "Bearer " + h.operatorToken, "Content-Type": "application/json"}
	for _, c := range []struct{ method, path string }{
		{"GET", "/agents"}, {"GET", "/agents/bob"}, {"PATCH", "/agents/bob"}, {"POST", "/agents"}, {"GET", "/account"},
		{"GET", "/accounts"}, {"POST", "/tasks"}, {"GET", "/directory"}, {"GET", "/communities"}, {"GET", "/c/crew"},
		{"GET", "/a/carl"}, {"GET", "/a/carl/.well-known/agent-card.json"}, {"POST", "/a/carl"}, {"GET", "/a/bob"},
		{"GET", "/a/bob/.well-known/agent-card.json"}, {"GET", "/healthz"}, {"GET", "/readyz"}, {"GET", "/connect"},
		{"GET", "/metrics"}, {"GET", "/mcp-tokens"}, {"GET", "/.well-known/oauth-authorization-server/a/bob"},
		{"GET", "/mcp/"}, {"GET", "/device/x"}, {"GET", "/x"},
	} {
		r := h.at(c.method, "http://bot.example.com"+c.path, op, "{}")
		if r.status != http.StatusNotFound {
			t.Errorf("%s %s on the agent domain: %d %s", c.method, c.path, r.status, r.body)
		}
	}
	if r := h.at("GET", deploymentURL+"/agents/bob", op, ""); r.status != http.StatusOK {
		t.Fatalf("the owner API on the deployment's host: %d %s", r.status, r.body)
	}
	// A disabled account's agent domain serves nothing, not even a redirect.
	alice, _ := h.account("alice")
	g := h.agentOf(alice, "dis")
	d := "dis.example.com"
	_, err := h.db.UpdateAgent(context.Background(), g.ID, switchboard.AgentUpdate{Domain: &d})
	must(t, err)
	yes := true
	_, err = h.db.UpdateAccount(context.Background(), alice.ID, switchboard.AccountUpdate{Disabled: &yes})
	must(t, err)
	for _, p := range []string{"/", "/.well-known/agent-card.json", "/device", "/dashboard"} {
		if r := h.at("GET", "http://dis.example.com"+p, nil, ""); r.status != http.StatusNotFound {
			t.Errorf("%s on a disabled account's domain: %d %s", p, r.status, r.body)
		}
	}
}

// TestAgentDomainDeploymentNames: a Host that is the deployment's own
// (its public URL's host, one of DeploymentDomains) is the deployment's,
// even if an agent's row were to hold it.
func TestAgentDomainDeploymentNames(t *testing.T) {
	h := newDomainHarness(t, withConfig(func(c *httpapi.Config) { c.DeploymentDomains = []string{"sb2.test"} }))
	g := h.agent("bob")
	for _, d := range []string{"sb.test", "sb2.test"} {
		_, err := h.db.UpdateAgent(context.Background(), g.ID, switchboard.AgentUpdate{Domain: &d})
		must(t, err)
		if r := h.at("GET", "http://"+d+"/", nil, ""); r.status != http.StatusOK || r.json["service"] != "switchboard" {
			t.Errorf("%s: %d %s", d, r.status, r.body)
		}
	}
	u, _ := url.Parse(deploymentURL)
	if r := h.at("GET", "http://"+u.Host+"/healthz", nil, ""); r.status != http.StatusOK {
		t.Fatalf("health on the deployment: %d", r.status)
	}
}

// TestAgentDomainMCP: the MCP endpoint at the root of an agent domain
// answers an MCP token of the agent; without one, its challenge names
// the domain's resource metadata, which names the domain's endpoint and
// authorization server; at the agent's address on the deployment, the
// same names that address.
func TestAgentDomainMCP(t *testing.T) {
	s := newAuthzServer(t, "", withConfig(func(c *httpapi.Config) { c.PublicURL = deploymentURL }))
	e := s.estate("bob", false)
	d := "bot.example.com"
	_, err := s.db.UpdateAgent(context.Background(), e.agent.ID, switchboard.AgentUpdate{Domain: &d})
	must(t, err)
	mcp := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	r := s.at("POST", "http://bot.example.com/mcp", mcp, list)
	if r.status != http.StatusUnauthorized ||
		!strings.Contains(r.header.Get("WWW-Authenticate"), `resource_metadata="http://bot.example.com/.well-known/oauth-protected-resource/mcp"`) {
		t.Fatalf("no token: %d %q", r.status, r.header.Get("WWW-Authenticate"))
	}
	md := s.at("GET", "http://bot.example.com/.well-known/oauth-protected-resource/mcp", nil, "")
	servers, _ := md.json["authorization_servers"].([]any)
	if md.status != http.StatusOK || md.json["resource"] != "http://bot.example.com/mcp" || len(servers) != 1 || servers[0] != "http://bot.example.com" {
		t.Fatalf("MCP resource metadata: %d %s", md.status, md.body)
	}
	as := s.at("GET", "http://bot.example.com/.well-known/oauth-authorization-server", nil, "")
	if as.json["authorization_endpoint"] != "http://bot.example.com/oauth/authorize" || as.json["registration_endpoint"] != "http://bot.example.com/oauth/register" {
		t.Fatalf("authorization server metadata: %s", as.body)
	}
	mcp["Authorization"] = "Bearer " + e.mcpToken
	if r := s.at("POST", "http://bot.example.com/mcp", mcp, list); r.status != http.StatusOK || !strings.Contains(string(r.body), `"name":"inbox"`) {
		t.Fatalf("with the agent's MCP token: %d %s", r.status, r.body)
	}
	delete(mcp, "Authorization")
	r = s.at("POST", deploymentURL+"/a/bob/mcp", mcp, list)
	if !strings.Contains(r.header.Get("WWW-Authenticate"), `resource_metadata="`+deploymentURL+`/.well-known/oauth-protected-resource/a/bob/mcp"`) {
		t.Fatalf("at the deployment's address: %q", r.header.Get("WWW-Authenticate"))
	}
	md = s.at("GET", deploymentURL+"/.well-known/oauth-protected-resource/a/bob/mcp", nil, "")
	if md.json["resource"] != deploymentURL+"/a/bob/mcp" {
		t.Fatalf("MCP resource metadata at the deployment's address: %s", md.body)
	}
}

// TestAgentDomainBehindProxy: behind a trusted proxy that sets
// X-Forwarded-Host and X-Forwarded-Proto, a request the proxy forwards
// for an agent's domain is the agent's, and names it on https.
func TestAgentDomainBehindProxy(t *testing.T) {
	h := newHarness(t, withConfig(func(c *httpapi.Config) { c.TrustForwarded, c.DeploymentDomains = true, []string{"sb.test"} }))
	withDomainAgent(t, h)
	fwd := map[string]string{"X-Forwarded-Host": "bot.example.com", "X-Forwarded-Proto": "https"}
	r := h.at("GET", "http://127.0.0.1/.well-known/agent-card.json", fwd, "")
	if r.status != http.StatusOK || r.json["url"] != "https://bot.example.com/" {
		t.Fatalf("the card behind a proxy: %d %s", r.status, r.body)
	}
	r = h.at("GET", "http://127.0.0.1/device?user_code=X", fwd, "")
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "https://sb.test/a/bob/device?user_code=X" {
		t.Fatalf("the device page behind a proxy: %d %q", r.status, r.header.Get("Location"))
	}
	if r := h.at("GET", "http://127.0.0.1/agents", fwd, ""); r.status != http.StatusNotFound {
		t.Fatalf("the owner API behind a proxy, for the domain: %d", r.status)
	}
}
