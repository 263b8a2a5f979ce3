package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestConsentPageInBrowser drives the MCP clients' consent page in a
// headless Chromium: the authorization link sends the owner to sign in
// and back, the client's claimed name shows as text, Allow sends the
// browser to the client's loopback redirect (another port than the one
// registered) with the code, which the page's policy lets through; the
// code then gets a working MCP token.
func TestConsentPageInBrowser(t *testing.T) {
	p := newBrowserPage(t)
	m := MustRunMain(t, t.TempDir(), "")
	cli(t, m, "agent", "create", "helper", "--mode", "inbox")
	codes := make(chan url.Values, 1)
	callback := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case codes <- r.URL.Query():
		default:
		}
		_, _ = w.Write([]byte("<!doctype html><title>done</title><p id=done>done</p>"))
	}))
	defer callback.Close()

	issuer, mcpURL := m.URL()+"/a/helper", m.URL()+"/a/helper/mcp"
	_, reg := postJSON(t, issuer+"/oauth/register", `{"client_name":`+jsonString(xssName)+`,"redirect_uris":["http://127.0.0.1/callback"]}`, nil)
	clientID, _ := reg["client_id"].(string)
	verifier, challenge := pkce("browser-verifier-")
	redirect := callback.URL + "/callback"
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect}, "state": {"st"},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "resource": {mcpURL}}

	token := chromedp.CSS(`input[name="token"]`)
	allow := chromedp.CSS(`button[value="approve"]`)
	p.do(t, 30*time.Second, chromedp.Navigate(issuer+"/oauth/authorize?"+q.Encode()), chromedp.WaitVisible(token))
	p.do(t, 10*time.Second, chromedp.SendKeys(token, m.GeneratedOwnerToken), chromedp.Submit(token), chromedp.WaitVisible(allow))
	p.screenshot(t, "consent")
	if got := p.eval(t, `document.querySelector('dd.claim').textContent`); got != "“"+xssName+"” (chosen by the application, not verified)" {
		t.Fatalf("the claimed name shows as %q", got)
	}
	if n := p.eval(t, `String(document.querySelectorAll('img, script').length)`); n != "0" {
		t.Fatalf("%s elements made of the client's text, or scripts", n)
	}
	p.do(t, 10*time.Second, chromedp.Click(allow), chromedp.WaitVisible(chromedp.CSS(`#done`)))
	p.checkClean(t)
	var got url.Values
	select {
	case got = <-codes:
	case <-time.After(5 * time.Second):
		t.Fatal("the browser never reached the client's redirect")
	}
	if got.Get("state") != "st" || got.Get("iss") != issuer || got.Get("code") == "" {
		t.Fatalf("the redirect carried %v", got)
	}
	status, tok := postJSON(t, issuer+"/oauth/token", "", url.Values{"grant_type": {"authorization_code"}, "code": {got.Get("code")},
		"client_id": {clientID}, "code_verifier": {verifier}, "redirect_uri": {redirect}})
	access, _ := tok["access_token"].(string)
	if status != http.StatusOK || mcpStatus(t, mcpURL, access) != http.StatusOK {
		t.Fatalf("token: %d %v", status, tok)
	}
}

// jsonString is s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
