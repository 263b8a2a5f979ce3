package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/netip"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/dashboard"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/server"
)

// pageClient is a browser-like client of one server: cookies kept,
// redirects not followed, forms sent with the server's Origin.
type pageClient struct {
	t    *testing.T
	base string
	hc   *http.Client
	// forwardedFor, if set, is sent as X-Forwarded-For: behind a trusted
	// proxy, the client counts as that address.
	forwardedFor string
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
	req, _ := http.NewRequest("GET", c.base+path, nil)
	if c.forwardedFor != "" {
		req.Header.Set("X-Forwarded-For", c.forwardedFor)
	}
	res, err := c.hc.Do(req)
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
	if c.forwardedFor != "" {
		req.Header.Set("X-Forwarded-For", c.forwardedFor)
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
	return requestCodeWith(t, addr, form, "")
}

// requestCodeWith is requestCode presenting a bearer token (none if empty),
// as a re-pairing does.
func requestCodeWith(t *testing.T, addr string, form url.Values, bearer string) (device, user string) {
	t.Helper()
	req, _ := http.NewRequest("POST", addr+"/oauth/device_authorization", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	res, err := http.DefaultClient.Do(req)
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

// pendingCodes returns the codes of the pending pairing requests of the
// account whose owner token is ownerToken (the generated one if empty).
func pendingCodes(t *testing.T, m *server.Server, ownerToken string) []string {
	t.Helper()
	args := []string{"--json", "pairing", "list"}
	if ownerToken != "" {
		args = append([]string{"--owner-token", ownerToken}, args...)
	}
	var all []agentPairings
	if err := json.Unmarshal([]byte(cli(t, m, args...)), &all); err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, a := range all {
		for _, p := range a.Pairings {
			codes = append(codes, p.UserCode)
		}
	}
	return codes
}

// pollOnce asks the address's token endpoint once with the device code
// and returns the answer's status and body.
func pollOnce(t *testing.T, addr, device string) (int, string) {
	t.Helper()
	res, err := http.PostForm(addr+"/oauth/token", url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}, "device_code": {device}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	return res.StatusCode, string(b)
}

// TestDevicePageLookupLimit: one address may look codes up or decide
// dashboard.DefaultSignInsPerMinute times a minute on the /device pages;
// the next lookup and the next decision are answered 429 with Retry-After
// (the decision is not applied), while another address is still served.
func TestDevicePageLookupLimit(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "", func(c *server.Config) {
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	})
	cli(t, m, "agent", "create", "helper", "--mode", "inbox")
	page := "/a/helper/device"

	// The limiter counts per calendar minute: a run that crosses a minute
	// starts again, with a new request, from another address.
	var code string
	for attempt := 1; ; attempt++ {
		_, code = requestCode(t, m.URL()+"/a/helper", url.Values{"client_name": {"Barry"}})
		minute := time.Now().Truncate(time.Minute)
		c := newPageClient(t, m.URL())
		c.forwardedFor = fmt.Sprintf("198.51.100.%d", attempt)
		if res, _ := c.get(page); res.StatusCode != http.StatusOK { // the entry form alone is not a lookup
			t.Fatalf("the entry form: %d", res.StatusCode)
		}
		res, body := c.get(page + "?user_code=" + code)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("the first lookup: %d\n%s", res.StatusCode, body)
		}
		csrf := pageCSRF(t, body)
		statuses := []int{res.StatusCode}
		for range dashboard.DefaultSignInsPerMinute - 1 {
			res, _ := c.get(page + "?user_code=BBBB-2222")
			statuses = append(statuses, res.StatusCode)
		}
		over, overBody := c.get(page + "?user_code=" + code)
		deny, denyBody := c.post(page, m.URL(), url.Values{"csrf": {csrf}, "user_code": {code}, "decision": {"deny"}})
		if !time.Now().Truncate(time.Minute).Equal(minute) && attempt < 3 {
			continue
		}
		for i, s := range statuses[1:] {
			if s != http.StatusNotFound {
				t.Fatalf("lookup %d of %d: %d", i+2, dashboard.DefaultSignInsPerMinute, s)
			}
		}
		for what, r := range map[string]*http.Response{"lookup": over, "decision": deny} {
			retry, err := strconv.Atoi(r.Header.Get("Retry-After"))
			if r.StatusCode != http.StatusTooManyRequests || err != nil || retry < 1 || retry > 60 {
				t.Fatalf("the %s over the limit: %d, Retry-After %q", what, r.StatusCode, r.Header.Get("Retry-After"))
			}
		}
		if !strings.Contains(overBody, "Too many code lookups") || !strings.Contains(denyBody, "Too many code lookups") {
			t.Fatalf("the pages over the limit:\n%s\n%s", overBody, denyBody)
		}
		break
	}
	if codes := pendingCodes(t, m, ""); !slices.Contains(codes, code) {
		t.Fatalf("pending after a refused deny: %v", codes)
	}
	other := newPageClient(t, m.URL())
	other.forwardedFor = "203.0.113.7"
	if res, body := other.get(page + "?user_code=" + code); res.StatusCode != http.StatusOK || !strings.Contains(body, code) {
		t.Fatalf("another address: %d\n%s", res.StatusCode, body)
	}
}

// expirePairing moves the expiry of m's pending request with the code to
// a minute ago, in the SQLite file behind m.
func expirePairing(t *testing.T, m *server.Server, code string) {
	t.Helper()
	raw, err := sql.Open("sqlite", sqlitetest.DSN(filepath.Join(m.Config.DataDir, "switchboard.db")))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	res, err := raw.Exec(`UPDATE pairings SET expires_at = $1 WHERE user_code = $2`,
		time.Now().Add(-time.Minute).UnixNano(), strings.ReplaceAll(code, "-", ""))
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("expire %s: %d rows", code, n)
	}
}

// TestDevicePageExpiredAndDecided: the page of an expired code answers 410
// and of a decided one 409, saying which, with no form to decide it; a
// decision posted for either is 409; a redeemed request is gone (404).
func TestDevicePageExpiredAndDecided(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	cli(t, m, "agent", "create", "helper", "--mode", "inbox")
	addr := m.URL() + "/a/helper"
	page := "/a/helper/device"
	anon := newPageClient(t, m.URL())
	_, pending := requestCode(t, addr, url.Values{"client_name": {"Barry"}})
	_, body := anon.get(page + "?user_code=" + pending)
	csrf := pageCSRF(t, body)

	noForm := func(body string) bool { return !strings.Contains(body, `name="decision"`) }
	_, expired := requestCode(t, addr, url.Values{"client_name": {"Late"}})
	expirePairing(t, m, expired)
	if res, body := anon.get(page + "?user_code=" + expired); res.StatusCode != http.StatusGone || !strings.Contains(body, "That code has expired") || !noForm(body) {
		t.Fatalf("an expired code: %d\n%s", res.StatusCode, body)
	}
	if res, body := anon.post(page, m.URL(), url.Values{"csrf": {csrf}, "user_code": {expired}, "decision": {"deny"}}); res.StatusCode != http.StatusConflict {
		t.Fatalf("denying an expired code: %d\n%s", res.StatusCode, body)
	}

	_, denied := requestCode(t, addr, url.Values{"client_name": {"Mallory"}})
	cli(t, m, "pairing", "deny", denied)
	if res, body := anon.get(page + "?user_code=" + denied); res.StatusCode != http.StatusConflict || !strings.Contains(body, "That request was denied already") || !noForm(body) {
		t.Fatalf("a denied code: %d\n%s", res.StatusCode, body)
	}

	device, approved := requestCode(t, addr, url.Values{"client_name": {"Barry"}})
	cli(t, m, "pairing", "approve", approved)
	if res, body := anon.get(page + "?user_code=" + approved); res.StatusCode != http.StatusConflict || !strings.Contains(body, "That request was approved already") || !noForm(body) {
		t.Fatalf("an approved code: %d\n%s", res.StatusCode, body)
	}
	if res, body := anon.post(page, m.URL(), url.Values{"csrf": {csrf}, "user_code": {approved}, "decision": {"deny"}}); res.StatusCode != http.StatusConflict {
		t.Fatalf("denying an approved code: %d\n%s", res.StatusCode, body)
	}
	if status, body := pollOnce(t, addr, device); status != http.StatusOK {
		t.Fatalf("redeem: %d %s", status, body)
	}
	if res, body := anon.get(page + "?user_code=" + approved); res.StatusCode != http.StatusNotFound || !strings.Contains(body, "No request has that code") {
		t.Fatalf("a redeemed code: %d\n%s", res.StatusCode, body)
	}
}

// TestDevicePageCSRFCookie: the page's CSRF cookie is HttpOnly,
// SameSite=Strict, scoped to the page's path, lasts an hour, is not Secure
// over http, holds the form's token, and is kept, not replaced, on the
// next visit.
func TestDevicePageCSRFCookie(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	cli(t, m, "agent", "create", "helper", "--mode", "inbox")
	_, code := requestCode(t, m.URL()+"/a/helper", url.Values{"client_name": {"Barry"}})
	c := newPageClient(t, m.URL())
	res, body := c.get("/a/helper/device?user_code=" + code)
	var ck *http.Cookie
	for _, k := range res.Cookies() {
		if k.Name == "switchboard_device" {
			ck = k
		}
	}
	if ck == nil {
		t.Fatalf("no CSRF cookie: %v", res.Header["Set-Cookie"])
	}
	if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/a/helper/device" || ck.Secure || ck.MaxAge != 3600 || len(ck.Value) != 43 {
		t.Fatalf("the CSRF cookie: %s", res.Header.Get("Set-Cookie"))
	}
	if pageCSRF(t, body) != ck.Value {
		t.Fatal("the form's token is not the cookie's")
	}
	res, body = c.get("/a/helper/device?user_code=" + code)
	if len(res.Cookies()) != 0 || pageCSRF(t, body) != ck.Value {
		t.Fatalf("the second visit: %v", res.Header["Set-Cookie"])
	}
}

// TestDevicePageOtherAccount: the owner of another account, signed in to
// the console, is offered no approval of an agent not theirs, and an
// approval posted anyway is refused (403) and leaves the request pending;
// the agent's owner, signed in, approves it.
func TestDevicePageOtherAccount(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	token := func(name string) string {
		var a struct {
			Token string `json:"token"`
		}
		if err := json.Unmarshal([]byte(cli(t, m, "--json", "account", "create", name)), &a); err != nil || a.Token == "" {
			t.Fatalf("account create %s: %v", name, err)
		}
		return a.Token
	}
	alice, mallory := token("alice"), token("mallory")
	cli(t, m, "--owner-token", alice, "agent", "create", "helper", "--mode", "inbox")
	cli(t, m, "--owner-token", mallory, "agent", "create", "mallorys", "--mode", "inbox")
	_, code := requestCode(t, m.URL()+"/a/helper", url.Values{"client_name": {"Barry"}})
	_, own := requestCode(t, m.URL()+"/a/mallorys", url.Values{"client_name": {"Barry"}})
	page := "/a/helper/device"

	other := newPageClient(t, m.URL())
	other.signIn(mallory)
	if _, body := other.get("/a/mallorys/device?user_code=" + own); !strings.Contains(body, `value="approve"`) {
		t.Fatalf("mallory is not offered approval of her own agent:\n%s", body)
	}
	_, body := other.get(page + "?user_code=" + code)
	if strings.Contains(body, `value="approve"`) || !strings.Contains(body, `value="deny"`) {
		t.Fatalf("another account's owner is offered approval:\n%s", body)
	}
	res, body := other.post(page, m.URL(), url.Values{"csrf": {pageCSRF(t, body)}, "user_code": {code}, "decision": {"approve"}, "label": {"mallory"}})
	if res.StatusCode != http.StatusForbidden || !strings.Contains(body, "Only the agent&#39;s owner") {
		t.Fatalf("another account's owner approving: %d\n%s", res.StatusCode, body)
	}
	if codes := pendingCodes(t, m, alice); len(codes) != 1 || codes[0] != code {
		t.Fatalf("pending after a refused approval: %v", codes)
	}

	owner := newPageClient(t, m.URL())
	owner.signIn(alice)
	_, body = owner.get(page + "?user_code=" + code)
	res, body = owner.post(page, m.URL(), url.Values{"csrf": {pageCSRF(t, body)}, "user_code": {code}, "decision": {"approve"}})
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "Approved") {
		t.Fatalf("the owner approving: %d\n%s", res.StatusCode, body)
	}
}

// TestDevicePageShowsReplaces: a re-pairing request (one that presented an
// active peer token of the agent) shows the label of the token an approval
// replaces; a request with an unknown bearer or none shows no such line.
func TestDevicePageShowsReplaces(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	cli(t, m, "agent", "create", "helper", "--mode", "inbox")
	var tok struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(cli(t, m, "--json", "token", "issue", "--agent", "helper", "barry")), &tok); err != nil || tok.Token == "" {
		t.Fatalf("token issue: %v", err)
	}
	addr := m.URL() + "/a/helper"
	c := newPageClient(t, m.URL())
	for bearer, want := range map[string]bool{tok.Token: true, "sbp_bogus": false, "": false} {
		_, code := requestCodeWith(t, addr, url.Values{"client_name": {"Barry"}}, bearer)
		res, body := c.get("/a/helper/device?user_code=" + code)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("the request page: %d\n%s", res.StatusCode, body)
		}
		if got := strings.Contains(body, "<dt>Replaces</dt><dd>the active token “barry”</dd>"); got != want {
			t.Fatalf("bearer %q: Replaces shown %v, want %v:\n%s", bearer, got, want, body)
		}
	}
}
