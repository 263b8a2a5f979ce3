package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-dev/switchboard/server"
)

// postJSON posts a JSON body (or a form, when form is set) and decodes the
// JSON answer.
func postJSON(t *testing.T, u, body string, form url.Values) (int, map[string]any) {
	t.Helper()
	var res *http.Response
	var err error
	if form != nil {
		res, err = http.PostForm(u, form)
	} else {
		res, err = http.Post(u, "application/json", strings.NewReader(body))
	}
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// getJSON gets a URL and decodes the JSON answer.
func getJSON(t *testing.T, u string) (int, map[string]any) {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// oauthBearer adds a bearer token to every request of the MCP client.
type oauthBearer struct{ token string }

func (b oauthBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// listTools lists the tools of the MCP endpoint with the go-sdk client.
func listTools(t *testing.T, endpoint, token string) []string {
	t.Helper()
	cs := mcpSession(t, endpoint, token)
	defer cs.Close()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// mcpSession connects the go-sdk client to an MCP endpoint with a token.
func mcpSession(t *testing.T, endpoint, token string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "oauth-test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: oauthBearer{token}}}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return cs
}

// pkce returns a code verifier and its S256 challenge.
func pkce(seed string) (verifier, challenge string) {
	verifier = strings.Repeat(seed, 43/len(seed)+1)[:43]
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// TestMCPOAuthFlow runs OAuth for an agent's MCP endpoint end to end on a
// real server: discovery from the 401, registration, the owner signing in
// and consenting through the page (CSRF cookie, Origin), the code for
// tokens, the go-sdk client listing tools with the access token, a
// refresh that kills the old pair, revocation; a replayed code, which
// kills the pair of its first redemption; a deny and a wrong verifier.
func TestMCPOAuthFlow(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	cli(t, m, "agent", "create", "helper", "--mode", "inbox")
	base, mcpURL := m.URL(), m.URL()+"/a/helper/mcp"

	// Discovery: the 401 names the resource metadata, which names the
	// address as the authorization server.
	res, err := http.Post(mcpURL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	mdURL := base + "/.well-known/oauth-protected-resource/a/helper/mcp"
	if res.StatusCode != http.StatusUnauthorized || res.Header.Get("WWW-Authenticate") != `Bearer realm="switchboard", resource_metadata="`+mdURL+`", scope="inbox"` {
		t.Fatalf("401: %d %q", res.StatusCode, res.Header.Get("WWW-Authenticate"))
	}
	_, prm := getJSON(t, mdURL)
	issuer := base + "/a/helper"
	if prm["resource"] != mcpURL || !slices.Contains(prm["authorization_servers"].([]any), any(issuer)) {
		t.Fatalf("resource metadata: %v", prm)
	}
	_, asm := getJSON(t, base+"/.well-known/oauth-authorization-server/a/helper")
	if asm["issuer"] != issuer || asm["authorization_endpoint"] != issuer+"/oauth/authorize" ||
		asm["registration_endpoint"] != issuer+"/oauth/register" || asm["token_endpoint"] != issuer+"/oauth/token" ||
		!strings.Contains(mustJSONString(t, asm["code_challenge_methods_supported"]), "S256") ||
		!strings.Contains(mustJSONString(t, asm["grant_types_supported"]), "refresh_token") ||
		asm["revocation_endpoint"] != issuer+"/oauth/revoke" || asm["authorization_response_iss_parameter_supported"] != true {
		t.Fatalf("authorization server metadata: %v", asm)
	}

	status, reg := postJSON(t, issuer+"/oauth/register", `{"client_name":"Claude Code","redirect_uris":["http://127.0.0.1/callback"],"token_endpoint_auth_method":"none"}`, nil)
	clientID, _ := reg["client_id"].(string)
	if status != http.StatusCreated || clientID == "" || reg["token_endpoint_auth_method"] != "none" {
		t.Fatalf("register: %d %v", status, reg)
	}

	verifier, challenge := pkce("verifier-one-")
	redirect := "http://127.0.0.1:45678/callback"
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect}, "state": {"st-1"},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "resource": {mcpURL}, "scope": {"inbox offline_access"}}
	authorize := "/a/helper/oauth/authorize?" + q.Encode()

	// Not signed in: sent to sign in, and back.
	browser := newPageClient(t, base)
	res, _ = browser.get(authorize)
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/dashboard?next=") {
		t.Fatalf("not signed in: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	_, form := browser.get(res.Header.Get("Location"))
	if !strings.Contains(form, `name="next"`) {
		t.Fatalf("the sign-in form does not carry next:\n%s", form)
	}
	res, body := browser.post("/dashboard/login", base, url.Values{"csrf": {pageCSRF(t, form)}, "token": {m.GeneratedOwnerToken}, "next": {authorize}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != authorize {
		t.Fatalf("sign in: %d %s\n%s", res.StatusCode, res.Header.Get("Location"), body)
	}
	code := consent(t, browser, authorize, "approve", redirect, "st-1", issuer)

	// The code for tokens.
	tokenURL := issuer + "/oauth/token"
	redeem := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {clientID},
		"code_verifier": {verifier}, "redirect_uri": {redirect}, "resource": {mcpURL}}
	status, tok := postJSON(t, tokenURL, "", redeem)
	access, _ := tok["access_token"].(string)
	refresh, _ := tok["refresh_token"].(string)
	if status != http.StatusOK || !strings.HasPrefix(access, "sbm_") || refresh == "" || tok["token_type"] != "Bearer" || tok["expires_in"] != 3600.0 {
		t.Fatalf("token: %d %v", status, tok)
	}
	if names := listTools(t, mcpURL, access); !slices.Contains(names, "pairing_requests") || !slices.Contains(names, "inbox") {
		t.Fatalf("tools/list with the access token: %v", names)
	}
	if list := cli(t, m, "mcp", "token", "list"); !regexp.MustCompile(`helper\s+mcp-claude-code\s`).MatchString(list) {
		t.Fatalf("the token is not listed as mcp-claude-code:\n%s", list)
	}

	// Refresh: a new pair; the old access and refresh tokens die.
	status, fresh := postJSON(t, tokenURL, "", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {clientID}})
	access2, _ := fresh["access_token"].(string)
	refresh2, _ := fresh["refresh_token"].(string)
	if status != http.StatusOK || access2 == "" || access2 == access || refresh2 == refresh {
		t.Fatalf("refresh: %d %v", status, fresh)
	}
	if got := mcpStatus(t, mcpURL, access); got != http.StatusUnauthorized {
		t.Fatalf("the old access token after a refresh: HTTP %d", got)
	}
	if status, _ := postJSON(t, tokenURL, "", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}); status != http.StatusBadRequest {
		t.Fatalf("the old refresh token: HTTP %d", status)
	}
	if names := listTools(t, mcpURL, access2); len(names) == 0 {
		t.Fatal("the refreshed token lists no tools")
	}

	// Revoke: both tokens of the grant die.
	if status, _ := postJSON(t, issuer+"/oauth/revoke", "", url.Values{"token": {refresh2}}); status != http.StatusOK {
		t.Fatalf("revoke: HTTP %d", status)
	}
	if got := mcpStatus(t, mcpURL, access2); got != http.StatusUnauthorized {
		t.Fatalf("the access token after revocation: HTTP %d", got)
	}
	if status, _ := postJSON(t, tokenURL, "", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh2}}); status != http.StatusBadRequest {
		t.Fatalf("the revoked refresh token: HTTP %d", status)
	}

	// The MCP token revoked through the CLI: the grant's refresh fails.
	code = consent(t, browser, authorize, "approve", redirect, "st-1", issuer)
	redeem.Set("code", code)
	status, tok = postJSON(t, tokenURL, "", redeem)
	if status != http.StatusOK {
		t.Fatalf("token: %d %v", status, tok)
	}
	id := regexp.MustCompile(`(?m)^([0-9a-f]{16})\s+helper\s+mcp-claude-code\s`).FindStringSubmatch(cli(t, m, "mcp", "token", "list"))
	if id == nil {
		t.Fatal("the token is not listed")
	}
	cli(t, m, "mcp", "token", "revoke", id[1])
	if status, _ := postJSON(t, tokenURL, "", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}}); status != http.StatusBadRequest {
		t.Fatalf("a refresh after the CLI revoked the token: HTTP %d", status)
	}

	// A code redeemed again: refused, and the tokens of its first
	// redemption stop working.
	code = consent(t, browser, authorize, "approve", redirect, "st-1", issuer)
	redeem.Set("code", code)
	status, tok = postJSON(t, tokenURL, "", redeem)
	if status != http.StatusOK || mcpStatus(t, mcpURL, tok["access_token"].(string)) == http.StatusUnauthorized {
		t.Fatalf("token: %d %v", status, tok)
	}
	if status, again := postJSON(t, tokenURL, "", redeem); status != http.StatusBadRequest || again["error"] != "invalid_grant" {
		t.Fatalf("a replayed code: %d %v", status, again)
	}
	if got := mcpStatus(t, mcpURL, tok["access_token"].(string)); got != http.StatusUnauthorized {
		t.Fatalf("the access token of a replayed code: HTTP %d", got)
	}
	if status, _ := postJSON(t, tokenURL, "", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}}); status != http.StatusBadRequest {
		t.Fatalf("the refresh token of a replayed code: HTTP %d", status)
	}

	// A wrong verifier burns the code; a deny sends access_denied back.
	code = consent(t, browser, authorize, "approve", redirect, "st-1", issuer)
	bad := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {clientID}, "code_verifier": {strings.Repeat("x", 43)}}
	if status, _ := postJSON(t, tokenURL, "", bad); status != http.StatusBadRequest {
		t.Fatalf("a wrong verifier: HTTP %d", status)
	}
	redeem.Set("code", code)
	if status, _ := postJSON(t, tokenURL, "", redeem); status != http.StatusBadRequest {
		t.Fatalf("a code after a wrong verifier: HTTP %d", status)
	}
	consent(t, browser, authorize, "deny", redirect, "st-1", issuer)

	// An unknown client or a foreign redirect: an HTML 400, no redirect.
	for _, p := range []url.Values{{"client_id": {"nope"}}, {"redirect_uri": {"https://evil.example/cb"}}} {
		qq := url.Values{}
		for k, v := range q {
			qq[k] = v
		}
		for k, v := range p {
			qq[k] = v
		}
		if res, _ := browser.get("/a/helper/oauth/authorize?" + qq.Encode()); res.StatusCode != http.StatusBadRequest || res.Header.Get("Location") != "" {
			t.Fatalf("authorize with %v: %d %s", p, res.StatusCode, res.Header.Get("Location"))
		}
	}
}

// consent opens the consent page as the signed-in browser, checks its
// policy, sends the decision and returns the code of the redirect (""
// for a deny, which must carry access_denied).
func consent(t *testing.T, browser *pageClient, authorize, decision, redirect, state, issuer string, extra ...string) string {
	t.Helper()
	res, page := browser.get(authorize)
	csp := res.Header.Get("Content-Security-Policy")
	if res.StatusCode != http.StatusOK || !strings.Contains(page, "Claude Code") ||
		!strings.Contains(csp, "form-action 'self' http://127.0.0.1:45678;") || !strings.Contains(csp, "default-src 'none'") {
		t.Fatalf("the consent page: %d %q\n%s", res.StatusCode, csp, page)
	}
	form := url.Values{"csrf": {pageCSRF(t, page)}, "decision": {decision}}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`).FindAllStringSubmatch(page, -1) {
		if m[1] != "csrf" {
			form.Set(m[1], htmlUnescape(m[2]))
		}
	}
	for i := 0; i+1 < len(extra); i += 2 {
		form.Add(extra[i], extra[i+1])
	}
	// Without the page's Origin: refused.
	if res, _ := browser.post(strings.Split(authorize, "?")[0], "https://evil.example", form); res.StatusCode != http.StatusForbidden {
		t.Fatalf("a consent from another origin: %d", res.StatusCode)
	}
	res, body := browser.post(strings.Split(authorize, "?")[0], browser.base, form)
	loc, err := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusSeeOther || err != nil || !strings.HasPrefix(loc.String(), redirect+"?") ||
		res.Header.Get("Referrer-Policy") != "no-referrer" || loc.Query().Get("state") != state || loc.Query().Get("iss") != issuer {
		t.Fatalf("%s: %d %s\n%s", decision, res.StatusCode, res.Header.Get("Location"), body)
	}
	if decision == "deny" {
		if loc.Query().Get("error") != "access_denied" {
			t.Fatalf("deny: %s", loc)
		}
		return ""
	}
	return loc.Query().Get("code")
}

// htmlUnescape undoes html/template's escaping of an attribute value.
func htmlUnescape(s string) string {
	return strings.NewReplacer("&amp;", "&", "&#43;", "+", "&#34;", `"`, "&#39;", "'", "&lt;", "<", "&gt;", ">").Replace(s)
}

func mustJSONString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMCPOAuthAccount runs OAuth for the account endpoint {base}/mcp: the
// issuer is the base; the owner chooses the agents on the consent page;
// the token opens /mcp for them.
func TestMCPOAuthAccount(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	cli(t, m, "agent", "create", "desk", "--mode", "inbox")
	cli(t, m, "agent", "create", "shelf", "--mode", "inbox")
	base := m.URL()
	_, asm := getJSON(t, base+"/.well-known/oauth-authorization-server")
	if asm["issuer"] != base || asm["authorization_endpoint"] != base+"/oauth/authorize" || asm["device_authorization_endpoint"] != nil {
		t.Fatalf("root metadata: %v", asm)
	}
	if _, prm := getJSON(t, base+"/.well-known/oauth-protected-resource/mcp"); prm["resource"] != base+"/mcp" {
		t.Fatalf("resource metadata: %v", prm)
	}
	_, reg := postJSON(t, base+"/oauth/register", `{"client_name":"Claude Code","redirect_uris":["http://127.0.0.1/callback"]}`, nil)
	clientID, _ := reg["client_id"].(string)
	verifier, challenge := pkce("account-verifier-")
	redirect := "http://127.0.0.1:45678/callback"
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect}, "state": {"st"},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "resource": {base + "/mcp"}}
	browser := newPageClient(t, base)
	browser.signIn(m.GeneratedOwnerToken)
	code := consent(t, browser, "/oauth/authorize?"+q.Encode(), "approve", redirect, "st", base, "agent", "desk")
	status, tok := postJSON(t, base+"/oauth/token", "", url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"client_id": {clientID}, "code_verifier": {verifier}})
	access, _ := tok["access_token"].(string)
	if status != http.StatusOK || access == "" {
		t.Fatalf("token: %d %v", status, tok)
	}
	if names := listTools(t, base+"/mcp", access); !slices.Contains(names, "create_agent") {
		t.Fatalf("tools/list on /mcp: %v", names)
	}
	if list := cli(t, m, "mcp", "token", "list"); !strings.Contains(list, "account: desk") || strings.Contains(list, "desk,shelf") {
		t.Fatalf("the account token does not act for desk alone:\n%s", list)
	}
	if got := mcpStatus(t, base+"/a/desk/mcp", access); got != http.StatusUnauthorized {
		t.Fatalf("the account token on an agent's endpoint: HTTP %d", got)
	}

	// create_agent makes one agent per grant: a refreshed token has made it.
	if res := callTool(t, base+"/mcp", access, "create_agent", map[string]any{"handle": "made"}); res.IsError {
		t.Fatalf("create_agent: %v", res.Content)
	}
	refresh, _ := tok["refresh_token"].(string)
	status, fresh := postJSON(t, base+"/oauth/token", "", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {clientID}})
	access, _ = fresh["access_token"].(string)
	if status != http.StatusOK || access == "" {
		t.Fatalf("refresh: %d %v", status, fresh)
	}
	if res := callTool(t, base+"/mcp", access, "create_agent", map[string]any{"handle": "again"}); !res.IsError {
		t.Fatal("a refreshed token made a second agent")
	}
}

// callTool calls one tool at an MCP endpoint with the go-sdk client.
func callTool(t *testing.T, endpoint, token, name string, args any) *mcp.CallToolResult {
	t.Helper()
	cs := mcpSession(t, endpoint, token)
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// TestMCPOAuthRegistrationRefusals: dynamic client registration over HTTP
// refuses bad metadata (400), a body over 8 KiB (413), an eleventh
// registration from one address in an hour (429); with a hundred clients,
// a new address still registers (the address holding ten gives its
// oldest up) until every address holds one, and then a hundred-and-first
// client from an address holding one is refused (503
// temporarily_unavailable). Clients come from many addresses through a
// trusted proxy's X-Forwarded-For.
func TestMCPOAuthRegistrationRefusals(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "", func(c *server.Config) {
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	})
	register := func(from, body string) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequest("POST", m.URL()+"/oauth/register", strings.NewReader(body))
		must(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-For", from)
		res, err := http.DefaultClient.Do(req)
		must(t, err)
		defer res.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(res.Body).Decode(&out)
		return res.StatusCode, out
	}
	good := `{"client_name":"c","redirect_uris":["http://127.0.0.1/callback"]}`
	for body, want := range map[string]string{
		`{"client_name":"c","redirect_uris":["http://app.example/cb"]}`:                                                  "invalid_redirect_uri",
		`{"client_name":"c","redirect_uris":["http://127.0.0.1/cb"],"token_endpoint_auth_method":"client_secret_basic"}`: "invalid_client_metadata",
		`{"client_name":`: "invalid_client_metadata",
	} {
		if status, out := register("198.51.100.1", body); status != http.StatusBadRequest || out["error"] != want {
			t.Errorf("%s: %d %v, want 400 %s", body, status, out, want)
		}
	}
	if status, _ := register("198.51.100.1", `{"client_name":"`+strings.Repeat("a", 9<<10)+`"}`); status != http.StatusRequestEntityTooLarge {
		t.Errorf("a 9 KiB body: %d, want 413", status)
	}
	for i := range 10 {
		if status, out := register("198.51.100.2", good); status != http.StatusCreated {
			t.Fatalf("registration %d: %d %v", i+1, status, out)
		}
	}
	if status, out := register("198.51.100.2", good); status != http.StatusTooManyRequests {
		t.Errorf("the eleventh from one address: %d %v, want 429", status, out)
	}
	for i := 10; i < 100; i++ {
		if status, out := register(fmt.Sprintf("203.0.113.%d", i), good); status != http.StatusCreated {
			t.Fatalf("client %d: %d %v", i+1, status, out)
		}
	}
	for i := range 9 { // .2 gives up nine of its ten
		if status, out := register(fmt.Sprintf("192.0.2.%d", i), good); status != http.StatusCreated {
			t.Fatalf("a new address at a hundred clients: %d %v", status, out)
		}
	}
	if status, out := register("203.0.113.10", good); status != http.StatusServiceUnavailable || out["error"] != "temporarily_unavailable" {
		t.Errorf("the 101st client, from an address holding one among a hundred that do: %d %v, want 503 temporarily_unavailable", status, out)
	}
}
