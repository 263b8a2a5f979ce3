package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/server"
)

// The deployment of these tests calls itself http://sb.test (its public
// URL: a deployment serves agent domains only once it knows its own
// name), and every client reaches it, by that name or by an agent's
// domain, through toServer, as DNS pointing at it would.
const domainDeployment = "http://sb.test"

// runDomainMain starts a server at domainDeployment.
func runDomainMain(t *testing.T, opts ...func(*server.Config)) *server.Server {
	t.Helper()
	return MustRunMain(t, t.TempDir(), "", append([]func(*server.Config){func(c *server.Config) { c.PublicURL = domainDeployment }}, opts...)...)
}

// toServer returns a transport that dials m's listener whatever host a
// request names.
func toServer(t *testing.T, m *server.Server) *http.Transport {
	addr := strings.TrimPrefix(m.URL(), "http://")
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// bearerOn adds a bearer token to every request, sent through base.
type bearerOn struct {
	token string
	base  http.RoundTripper
}

func (b bearerOn) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// TestAgentDomainCLI: agent create, update, show and list, and status,
// with a domain; a name that cannot be one is refused with the server's
// reason.
func TestAgentDomainCLI(t *testing.T) {
	m := runDomainMain(t)
	out := cli(t, m, "agent", "create", "bob", "--mode", "inbox", "--domain", "Bot.Example.com")
	if !strings.Contains(out, "domain:     bot.example.com") || !strings.Contains(out, "address:    http://bot.example.com/") {
		t.Fatalf("create printed:\n%s", out)
	}
	if out := cli(t, m, "agent", "show", "bob"); !strings.Contains(out, "domain         bot.example.com") ||
		!strings.Contains(out, "agent card     http://bot.example.com/.well-known/agent-card.json") {
		t.Fatalf("show printed:\n%s", out)
	}
	cli(t, m, "agent", "create", "carl", "--mode", "inbox")
	list := cli(t, m, "agent", "list")
	if !strings.Contains(list, "DOMAIN") || !strings.Contains(list, "bot.example.com") || !strings.Contains(list, domainDeployment+"/a/carl/") {
		t.Fatalf("list printed:\n%s", list)
	}
	out = cli(t, m, "status", "--agent", "bob")
	if !strings.Contains(out, "domain       bot.example.com (the agent's address: http://bot.example.com/)") {
		t.Fatalf("status printed:\n%s", out)
	}
	var st struct {
		Domain *struct{ Name, Address string } `json:"domain"`
	}
	if err := json.Unmarshal([]byte(cli(t, m, "--json", "status", "--agent", "bob")), &st); err != nil || st.Domain == nil || st.Domain.Name != "bot.example.com" {
		t.Fatalf("status --json: %v %+v", err, st.Domain)
	}
	if out := cli(t, m, "status", "--agent", "carl"); !strings.Contains(out, "domain       none") {
		t.Fatalf("status without a domain:\n%s", out)
	}
	for domain, says := range map[string]string{
		"127.0.0.1": "IP address", "*.example.com": "wildcard", "bot.example.com:8443": "port", "localhost": "single-label",
		"https://x.example.com": "scheme", "sb.test": "own domain",
	} {
		_, err := cliErr(m, "agent", "update", "carl", "--domain", domain)
		if err == nil || !strings.Contains(err.Error(), says) || !strings.Contains(err.Error(), "422") {
			t.Errorf("--domain %s: %v", domain, err)
		}
	}
	_, err := cliErr(m, "agent", "update", "carl", "--domain", "BOT.example.com")
	if err == nil || !strings.Contains(err.Error(), "bot.example.com is already the domain of another agent") {
		t.Fatalf("a taken domain: %v", err)
	}
	if out := cli(t, m, "agent", "update", "bob", "--domain", ""); !strings.Contains(out, "domain         -") {
		t.Fatalf("removed:\n%s", out)
	}
	cli(t, m, "agent", "update", "carl", "--domain", "bot.example.com")
}

// TestAgentDomainA2ASDK: the a2a-go SDK resolves the card at the root of
// an agent's domain, which names the domain, and sends, streams and
// reads tasks there, with a peer token; the owner's reply reaches it.
func TestAgentDomainA2ASDK(t *testing.T) {
	m := runDomainMain(t)
	cli(t, m, "agent", "create", "bob", "--mode", "inbox", "--domain", "bot.example.com")
	var tok struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(cli(t, m, "--json", "token", "issue", "--agent", "bob", "alice")), &tok); err != nil {
		t.Fatal(err)
	}
	tr := toServer(t, m)
	ctx := context.Background()
	resolver := &agentcard.Resolver{Client: &http.Client{Transport: tr}}
	card, err := resolver.Resolve(ctx, "http://bot.example.com")
	if err != nil {
		t.Fatalf("resolve the card: %v", err)
	}
	if len(card.SupportedInterfaces) == 0 || card.SupportedInterfaces[0].URL != "http://bot.example.com/" {
		t.Fatalf("the card's interfaces: %+v", card.SupportedInterfaces)
	}
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(&http.Client{Transport: bearerOn{tok.Token, tr}}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := client.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello, bob"))})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("send answered %#v", res)
	}
	if out := cli(t, m, "reply", string(task.ID), "--text", "hello, alice"); !strings.Contains(out, "completed") {
		t.Fatalf("reply: %s", out)
	}
	got, err := client.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateCompleted || len(got.Artifacts) == 0 {
		t.Fatalf("the task after the reply: %+v, %v", got, err)
	}
	var first a2a.Event
	for ev, err := range client.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("stream"))}) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		first = ev
		break
	}
	if _, ok := first.(*a2a.Task); !ok {
		t.Fatalf("the stream began with %#v", first)
	}
}

// TestAgentDomainDeviceFlow: a peer pairs with an agent at its domain
// with golang.org/x/oauth2's device flow, from the domain's metadata; the
// owner follows the verification link on the domain, is sent to the
// deployment's /device page, signs in there and approves; the token calls
// the agent at its domain.
func TestAgentDomainDeviceFlow(t *testing.T) {
	m := runDomainMain(t, pollEverySecond)
	cli(t, m, "agent", "create", "bob", "--mode", "inbox", "--domain", "bot.example.com")
	tr := toServer(t, m)
	hc := &http.Client{Transport: tr}
	res, err := hc.Get("http://bot.example.com/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	var md struct {
		Issuer                      string `json:"issuer"`
		DeviceAuthorizationEndpoint string `json:"device_authorization_endpoint"`
		TokenEndpoint               string `json:"token_endpoint"`
	}
	_ = json.NewDecoder(res.Body).Decode(&md)
	_ = res.Body.Close()
	if md.Issuer != "http://bot.example.com" {
		t.Fatalf("metadata: %+v", md)
	}
	conf := &oauth2.Config{ClientID: "Barry", Scopes: []string{"a2a"}, Endpoint: oauth2.Endpoint{
		DeviceAuthURL: md.DeviceAuthorizationEndpoint, TokenURL: md.TokenEndpoint, AuthStyle: oauth2.AuthStyleInParams}}
	octx := context.WithValue(context.Background(), oauth2.HTTPClient, hc)
	da, err := conf.DeviceAuth(octx, oauth2.SetAuthURLParam("client_name", "Barry"))
	if err != nil {
		t.Fatalf("device authorization: %v", err)
	}
	if da.VerificationURI != "http://bot.example.com/device" || !strings.HasPrefix(da.VerificationURIComplete, "http://bot.example.com/device?user_code=") {
		t.Fatalf("verification: %q %q", da.VerificationURI, da.VerificationURIComplete)
	}

	owner := newPageClient(t, domainDeployment)
	owner.hc.Transport = tr
	res, err = owner.hc.Get(da.VerificationURIComplete)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	page := "/a/bob/device?user_code=" + url.QueryEscape(da.UserCode)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != domainDeployment+page {
		t.Fatalf("the domain's /device: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	owner.signIn(m.GeneratedOwnerToken)
	_, body := owner.get(page)
	if !strings.Contains(body, `value="approve"`) {
		t.Fatalf("the owner is not offered approval:\n%s", body)
	}
	if res, body := owner.post("/a/bob/device", domainDeployment, url.Values{"csrf": {pageCSRF(t, body)}, "user_code": {da.UserCode},
		"decision": {"approve"}, "label": {"barry"}}); res.StatusCode != http.StatusOK || !strings.Contains(body, "Approved") {
		t.Fatalf("approve: %d\n%s", res.StatusCode, body)
	}
	tok, err := conf.DeviceAccessToken(octx, da)
	if err != nil || !strings.HasPrefix(tok.AccessToken, "sbp_") {
		t.Fatalf("the token: %+v, %v", tok, err)
	}
	call := &http.Client{Transport: bearerOn{tok.AccessToken, tr}}
	res, err = call.Post("http://bot.example.com/", "application/json", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"paired"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(b), `"task"`) {
		t.Fatalf("a call with the paired token: %d %s", res.StatusCode, b)
	}
}

// TestAgentDomainMCPOAuth runs OAuth for the MCP endpoint at an agent's
// domain: discovery from the 401, registration, the authorization request
// on the domain sent to the deployment's consent page (with the domain's
// resource, which the client left out), the owner's consent there with
// the domain as issuer, the code for tokens at the domain, and the go-sdk
// client listing tools at https://{domain}/mcp.
func TestAgentDomainMCPOAuth(t *testing.T) {
	m := runDomainMain(t)
	cli(t, m, "agent", "create", "helper", "--mode", "inbox", "--domain", "helper.example.com")
	tr := toServer(t, m)
	hc := &http.Client{Transport: tr}
	const issuer, mcpURL = "http://helper.example.com", "http://helper.example.com/mcp"
	res, err := hc.Post(mcpURL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	mdURL := issuer + "/.well-known/oauth-protected-resource/mcp"
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(res.Header.Get("WWW-Authenticate"), `resource_metadata="`+mdURL+`"`) {
		t.Fatalf("401: %d %q", res.StatusCode, res.Header.Get("WWW-Authenticate"))
	}
	getJSONVia := func(u string) map[string]any {
		res, err := hc.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(res.Body).Decode(&out)
		return out
	}
	postVia := func(u string, form url.Values, body string) (int, map[string]any) {
		var res *http.Response
		var err error
		if form != nil {
			res, err = hc.PostForm(u, form)
		} else {
			res, err = hc.Post(u, "application/json", strings.NewReader(body))
		}
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(res.Body).Decode(&out)
		return res.StatusCode, out
	}
	prm := getJSONVia(mdURL)
	if prm["resource"] != mcpURL || !slices.Contains(prm["authorization_servers"].([]any), any(issuer)) {
		t.Fatalf("resource metadata: %v", prm)
	}
	asm := getJSONVia(issuer + "/.well-known/oauth-authorization-server")
	if asm["issuer"] != issuer || asm["authorization_endpoint"] != issuer+"/oauth/authorize" || asm["token_endpoint"] != issuer+"/oauth/token" {
		t.Fatalf("authorization server metadata: %v", asm)
	}
	status, reg := postVia(asm["registration_endpoint"].(string), nil,
		`{"client_name":"Claude Code","redirect_uris":["http://127.0.0.1:45678/callback"],"token_endpoint_auth_method":"none"}`)
	clientID, _ := reg["client_id"].(string)
	if status != http.StatusCreated || clientID == "" {
		t.Fatalf("register: %d %v", status, reg)
	}
	verifier, challenge := pkce("domain-verifier-")
	redirect := "http://127.0.0.1:45678/callback"
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect}, "state": {"st-d"},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "scope": {"inbox offline_access"}}

	browser := newPageClient(t, domainDeployment)
	browser.hc.Transport = tr
	res, err = browser.hc.Get(issuer + "/oauth/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	to, err := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusSeeOther || err != nil || to.Scheme+"://"+to.Host != domainDeployment || to.Path != "/a/helper/oauth/authorize" ||
		to.Query().Get("resource") != mcpURL || to.Query().Get("state") != "st-d" {
		t.Fatalf("the domain's authorization endpoint: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	browser.signIn(m.GeneratedOwnerToken)
	code := consent(t, browser, to.RequestURI(), "approve", redirect, "st-d", issuer)

	status, tok := postVia(asm["token_endpoint"].(string), url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"client_id": {clientID}, "code_verifier": {verifier}, "redirect_uri": {redirect}, "resource": {mcpURL}}, "")
	access, _ := tok["access_token"].(string)
	if status != http.StatusOK || !strings.HasPrefix(access, "sbm_") {
		t.Fatalf("token: %d %v", status, tok)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "domain-test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: mcpURL, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearerOn{access, tr}}}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil || !slices.ContainsFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == "inbox" }) {
		t.Fatalf("tools/list at the domain: %v", err)
	}
	// The same grant's code is not good at the deployment's address: a
	// code is for the endpoint it was asked for.
	code = consent(t, browser, to.RequestURI(), "approve", redirect, "st-d", issuer)
	status, _ = postVia(domainDeployment+"/a/helper/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"client_id": {clientID}, "code_verifier": {verifier}, "redirect_uri": {redirect}}, "")
	if status != http.StatusBadRequest {
		t.Fatalf("the domain's code at the deployment's address: HTTP %d", status)
	}
}

// TestAgentDomainWake: a wake of an agent with a domain names its card on
// the domain.
func TestAgentDomainWake(t *testing.T) {
	var mu sync.Mutex
	var bodies [][]byte
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
	}))
	defer recv.Close()
	m := runDomainMain(t, func(c *server.Config) { c.OutboundAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")} })
	cli(t, m, "agent", "create", "sleeper", "--mode", "inbox", "--domain", "sleeper.example.com")
	cli(t, m, "wake", "set", "--agent", "sleeper", "--url", recv.URL+"/hook", "--debounce", "0s")
	cli(t, m, "wake", "test", "--agent", "sleeper")
	testwait.For(t, "the wake", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(bodies) > 0
	})
	mu.Lock()
	defer mu.Unlock()
	var p struct {
		AgentCard string `json:"agentCard"`
	}
	if err := json.Unmarshal(bodies[0], &p); err != nil || p.AgentCard != "http://sleeper.example.com/.well-known/agent-card.json" {
		t.Fatalf("the wake named %q: %s", p.AgentCard, bodies[0])
	}
}

// TestFrontUpdateRefusedKeepsUpstream: an update of a front that the
// server refuses (its new domain is another agent's) changes nothing,
// its upstream included; one it accepts changes both.
func TestFrontUpdateRefusedKeepsUpstream(t *testing.T) {
	m := runDomainMain(t, func(c *server.Config) { c.OutboundAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")} })
	cli(t, m, "agent", "create", "fr", "--mode", "front", "--upstream", "https://127.0.0.1:9/one")
	cli(t, m, "agent", "create", "bob", "--mode", "inbox", "--domain", "taken.example.com")
	if _, err := cliErr(m, "agent", "update", "fr", "--upstream", "https://127.0.0.1:9/two", "--domain", "taken.example.com"); err == nil {
		t.Fatal("a taken domain was accepted")
	}
	upstream := func() string {
		var st struct {
			Upstream string `json:"upstream"`
		}
		if err := json.Unmarshal([]byte(cli(t, m, "--json", "front", "status", "fr")), &st); err != nil {
			t.Fatal(err)
		}
		return st.Upstream
	}
	if got := upstream(); got != "https://127.0.0.1:9/one" {
		t.Fatalf("after a refused update the upstream is %q", got)
	}
	cli(t, m, "agent", "update", "fr", "--upstream", "https://127.0.0.1:9/two", "--domain", "fr.example.com")
	if got := upstream(); got != "https://127.0.0.1:9/two" {
		t.Fatalf("after an accepted update the upstream is %q", got)
	}
}
