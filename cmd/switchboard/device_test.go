package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// pageClient is a browser-like client of one server: cookies kept,
// redirects not followed, forms sent with the server's Origin.
type pageClient struct {
	t    *testing.T
	base string
	hc   *http.Client
}

func newPageClient(t *testing.T, base string) *pageClient {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &pageClient{t: t, base: base, hc: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

func (c *pageClient) get(path string) (*http.Response, string) {
	c.t.Helper()
	res, err := c.hc.Get(c.base + path)
	if err != nil {
		c.t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	return res, string(b)
}

func (c *pageClient) post(path, origin string, form url.Values) (*http.Response, string) {
	c.t.Helper()
	req, _ := http.NewRequest("POST", c.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	return res, string(b)
}

var formCSRF = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func pageCSRF(t *testing.T, page string) string {
	t.Helper()
	m := formCSRF.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no csrf field:\n%s", page)
	}
	return m[1]
}

// signIn signs the client in to the console with the owner token.
func (c *pageClient) signIn(token string) {
	c.t.Helper()
	_, form := c.get("/dashboard")
	if res, body := c.post("/dashboard/login", c.base, url.Values{"csrf": {pageCSRF(c.t, form)}, "token": {token}}); res.StatusCode != http.StatusSeeOther {
		c.t.Fatalf("sign in: %s\n%s", res.Status, body)
	}
}

// requestCode asks the agent's address for a code and returns the device
// and user codes.
func requestCode(t *testing.T, addr string, form url.Values) (device, user string) {
	t.Helper()
	res, err := http.PostForm(addr+"/oauth/device_authorization", form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var da struct{ DeviceCode, UserCode string }
	var raw map[string]any
	_ = json.NewDecoder(res.Body).Decode(&raw)
	da.DeviceCode, _ = raw["device_code"].(string)
	da.UserCode, _ = raw["user_code"].(string)
	if res.StatusCode != http.StatusOK || da.UserCode == "" {
		t.Fatalf("device authorization: %d %v", res.StatusCode, raw)
	}
	return da.DeviceCode, da.UserCode
}

// TestDevicePage: the /device page shows a request's claims escaped under a
// strict policy with no script; anyone may deny, only the agent's
// signed-in owner approves; forms need the page's CSRF cookie and origin;
// a second decision is 409.
func TestDevicePage(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	cli(t, m, "agent", "create", "helper", "--mode", "inbox")
	addr := m.URL() + "/a/helper"
	page := "/a/helper/device"

	anon := newPageClient(t, m.URL())
	if res, body := anon.get(page); res.StatusCode != http.StatusOK || !strings.Contains(body, `name="user_code"`) {
		t.Fatalf("the code entry form: %d\n%s", res.StatusCode, body)
	}
	if res, body := anon.get(page + "?user_code=BBBB-2222"); res.StatusCode != http.StatusNotFound || !strings.Contains(body, "No request has that code") {
		t.Fatalf("an unknown code: %d\n%s", res.StatusCode, body)
	}

	_, code := requestCode(t, addr, url.Values{"client_name": {`<script>alert(1)</script>`}, "client_id": {`"><img src=x>`},
		"agent_card_url": {"https://barry.example/card?a=<b>"}})
	res, body := anon.get(page + "?user_code=" + url.QueryEscape(strings.ToLower(strings.Replace(code, "-", " ", 1))))
	if res.StatusCode != http.StatusOK || !strings.Contains(body, code) || strings.Contains(body, "<script") || strings.Contains(body, "<img") ||
		!strings.Contains(body, "&lt;script&gt;") || !strings.Contains(body, "127.0.0.1") || !strings.Contains(body, "minute(s)") {
		t.Fatalf("the request page: %d\n%s", res.StatusCode, body)
	}
	if strings.Contains(body, "not publicly reachable") {
		t.Fatal("a public card is flagged as private")
	}
	// A card on a tailnet host is flagged: no one outside can read it.
	_, tailnet := requestCode(t, addr, url.Values{"client_name": {"laptop"}, "agent_card_url": {"https://laptop.tail1234.ts.net/.well-known/agent-card.json"}})
	if _, tbody := anon.get(page + "?user_code=" + tailnet); !strings.Contains(tbody, "laptop.tail1234.ts.net") || !strings.Contains(tbody, "not publicly reachable") {
		t.Fatalf("a private card is not flagged:\n%s", tbody)
	}
	csp := res.Header.Get("Content-Security-Policy")
	if !strings.HasPrefix(csp, "default-src 'none'; style-src 'nonce-") || !strings.Contains(csp, "form-action 'self'; frame-ancestors 'none'; base-uri 'none'") ||
		res.Header.Get("X-Frame-Options") != "DENY" || res.Header.Get("Cache-Control") != "no-store" || res.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("headers %v", res.Header)
	}
	if strings.Contains(body, `value="approve"`) {
		t.Fatal("an anonymous visitor is offered approval")
	}
	token := pageCSRF(t, body)

	// Not the owner: approval refused; a foreign origin or a missing cookie refused.
	if res, _ := anon.post(page, m.URL(), url.Values{"csrf": {token}, "user_code": {code}, "decision": {"approve"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("an anonymous approval: %d", res.StatusCode)
	}
	if res, body := anon.post(page, "https://evil.example", url.Values{"csrf": {token}, "user_code": {code}, "decision": {"deny"}}); res.StatusCode != http.StatusForbidden ||
		!strings.Contains(body, "another site") {
		t.Fatalf("a foreign origin: %d", res.StatusCode)
	}
	stranger := newPageClient(t, m.URL())
	if res, _ := stranger.post(page, m.URL(), url.Values{"csrf": {token}, "user_code": {code}, "decision": {"deny"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("a form without its cookie: %d", res.StatusCode)
	}

	// The owner, signed in, approves with a label; a second decision is 409.
	owner := newPageClient(t, m.URL())
	owner.signIn(m.GeneratedOwnerToken)
	_, body = owner.get(page + "?user_code=" + code)
	if !strings.Contains(body, `value="approve"`) {
		t.Fatalf("the owner is not offered approval:\n%s", body)
	}
	res, body = owner.post(page, m.URL(), url.Values{"csrf": {pageCSRF(t, body)}, "user_code": {code}, "decision": {"approve"}, "label": {"barry"}})
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `labelled &#34;barry&#34;`) {
		t.Fatalf("approve: %d\n%s", res.StatusCode, body)
	}
	if res, _ := anon.post(page, m.URL(), url.Values{"csrf": {token}, "user_code": {code}, "decision": {"deny"}}); res.StatusCode != http.StatusConflict {
		t.Fatalf("a decision after the approval: %d", res.StatusCode)
	}

	// Anyone may deny.
	device, code2 := requestCode(t, addr, url.Values{"client_name": {"Mallory"}})
	if res, body := anon.post(page, m.URL(), url.Values{"csrf": {token}, "user_code": {code2}, "decision": {"deny"}}); res.StatusCode != http.StatusOK || !strings.Contains(body, "Denied") {
		t.Fatalf("an anonymous deny: %d\n%s", res.StatusCode, body)
	}
	res2, err := http.PostForm(addr+"/oauth/token", url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}, "device_code": {device}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res2.Body)
	_ = res2.Body.Close()
	if !strings.Contains(string(b), "access_denied") {
		t.Fatalf("the poll after a deny: %s", b)
	}

	cli(t, m, "agent", "update", "helper", "--pairing", "off")
	if res, _ := anon.get(page); res.StatusCode != http.StatusNotFound {
		t.Fatalf("the page with pairing off: %d", res.StatusCode)
	}
}
