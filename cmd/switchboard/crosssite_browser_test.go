package main

import (
	"html"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestSignedInOwnerArrivesFromAnotherSite follows, in a headless Chromium,
// links on another site's page (127.0.0.2 is another site than 127.0.0.1)
// to a /device page, to an MCP client's consent page and to the console:
// the owner signed in before is still signed in on each (the SameSite=Strict
// sign-in cookie, which the browser leaves out of a cross-site navigation,
// is sent by the page's own reload), and no page asks for the token again.
func TestSignedInOwnerArrivesFromAnotherSite(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	p := newBrowserPage(t) // closed before the server, which then waits for no connection of the browser
	cli(t, m, "agent", "create", "helper", "--mode", "inbox")
	_, code := requestCode(t, m.URL()+"/a/helper", url.Values{"client_name": {"barry"}, "client_id": {"barry-cli"}})

	issuer := m.URL() + "/a/helper"
	_, reg := postJSON(t, issuer+"/oauth/register", `{"client_name":"web client","redirect_uris":["http://127.0.0.1/callback"]}`, nil)
	clientID, _ := reg["client_id"].(string)
	_, challenge := pkce("cross-site-verifier-")
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {"http://127.0.0.1:9/callback"},
		"state": {"st"}, "code_challenge": {challenge}, "code_challenge_method": {"S256"}, "resource": {issuer + "/mcp"}}

	links := map[string]string{
		"device":  issuer + "/device?user_code=" + code,
		"consent": issuer + "/oauth/authorize?" + q.Encode(),
		"console": m.URL() + "/dashboard",
	}
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("127.0.0.2 cannot be listened on: %v", err)
	}
	other := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><title>elsewhere</title><a id="go" href="` + html.EscapeString(links[r.URL.Query().Get("to")]) + `">go</a>`))
	})}
	go func() { _ = other.Serve(ln) }()
	t.Cleanup(func() { _ = other.Close() })
	elsewhere := "http://" + ln.Addr().String() + "/?to="

	token := chromedp.CSS(`input[name="token"]`)
	p.do(t, 30*time.Second, chromedp.Navigate(m.URL()+"/dashboard"), chromedp.WaitVisible(token))
	p.do(t, 10*time.Second, chromedp.SendKeys(token, m.GeneratedOwnerToken), chromedp.Submit(token),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-agent="helper"]`)))

	for name, want := range map[string]string{
		"device":  `button[value="approve"]`,
		"consent": `button[value="approve"]`,
		"console": `tr[data-agent="helper"]`,
	} {
		p.do(t, 10*time.Second, chromedp.Navigate(elsewhere+name), chromedp.WaitVisible(chromedp.CSS(`#go`)))
		p.do(t, 10*time.Second, chromedp.Click(chromedp.CSS(`#go`)), chromedp.WaitReady(chromedp.CSS(`body`)))
		p.do(t, 10*time.Second, chromedp.WaitVisible(chromedp.CSS(want+`, input[name="token"]`)))
		if n := p.eval(t, `String(document.querySelectorAll('input[name="token"]').length)`); n != "0" {
			t.Fatalf("%s: a signed-in owner arriving from another site is asked to sign in again", name)
		}
		if got := p.eval(t, `location.href`); got != links[name] {
			t.Fatalf("%s: the browser is at %s, want %s", name, got, links[name])
		}
	}
	p.checkClean(t)
}
