package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/switchboard-dev/switchboard/dashboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/server"
)

// serveTLS serves m's handler over TLS on another loopback port (with a
// certificate of httptest's own) until the test ends, and returns its
// base URL: requests there come with r.TLS set, as when the server serves
// TLS itself.
func serveTLS(t *testing.T, m *server.Server) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(m.Handler())
	srv.Config.ConnContext = httpapi.ConnContext
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL
}

// cookies returns the browser's cookies for the URL, by name.
func (p *browserPage) cookies(t *testing.T, u string) map[string]*network.Cookie {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{u}})
	if err != nil {
		t.Fatalf("read the browser's cookies: %v", err)
	}
	byName := map[string]*network.Cookie{}
	for _, c := range res.Cookies {
		byName[c.Name] = c
	}
	return byName
}

// TestConsoleOverHTTPSInBrowser drives the console in a headless Chromium
// over TLS and over plain http at once. Over https the browser keeps the
// sign-in cookie as __Host-switchboard_signin (it refuses such a cookie
// unless Secure, for Path=/ and without Domain), Secure, HttpOnly,
// SameSite=Strict, for 7 days, and is signed in with it; over
// http://127.0.0.1 the cookie is switchboard_signin, not Secure, and works
// as before. /dashboard/static/ is a 404, not a listing. The account
// endpoint's consent page ticks no agent: Allow with none chosen is
// refused, with one ticked the application gets a code.
func TestConsoleOverHTTPSInBrowser(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	p := newBrowserPageWith(t, chromedp.Flag("ignore-certificate-errors", true))
	cli(t, m, "agent", "create", "helper", "--mode", "inbox")
	cli(t, m, "agent", "create", "second", "--mode", "inbox")
	secure := serveTLS(t, m)

	token := chromedp.CSS(`input[name="token"]`)
	for _, base := range []string{secure, m.URL()} {
		p.do(t, 30*time.Second, chromedp.Navigate(base+"/dashboard"), chromedp.WaitVisible(token))
		p.do(t, 10*time.Second, chromedp.SendKeys(token, m.GeneratedOwnerToken), chromedp.Submit(token),
			chromedp.WaitVisible(chromedp.CSS(`tr[data-agent="helper"]`)))
	}
	// Cookies are not kept per port: the browser sends the http sign-in's
	// cookie to the https console too, which reads only its own.
	jar := p.cookies(t, secure+"/dashboard")
	ck := jar["__Host-switchboard_signin"]
	if ck == nil {
		t.Fatalf("over https the browser holds %v, no __Host-switchboard_signin", jar)
	}
	lifetime := time.Until(time.Unix(int64(ck.Expires), 0))
	if !ck.Secure || !ck.HTTPOnly || ck.SameSite != network.CookieSameSiteStrict || ck.Path != "/" ||
		lifetime < dashboard.DefaultLifetime-time.Hour || lifetime > dashboard.DefaultLifetime {
		t.Fatalf("the https sign-in cookie: %+v (expires in %s)", ck, lifetime)
	}
	if ck := jar["switchboard_signin"]; ck == nil || ck.Secure {
		t.Fatalf("over http the browser holds %+v, want switchboard_signin, not Secure", ck)
	}

	p.do(t, 10*time.Second, chromedp.Navigate(secure+"/dashboard/static/"), chromedp.WaitVisible(chromedp.CSS(`main`)))
	p.expectStatus(t, http.StatusNotFound)
	if n := p.eval(t, `String(document.querySelectorAll('a[href="console.css"], pre').length)`); n != "0" {
		t.Fatal("/dashboard/static/ lists its files")
	}

	codes := make(chan url.Values, 1)
	callback := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case codes <- r.URL.Query():
		default:
		}
		_, _ = w.Write([]byte("<!doctype html><title>done</title><p id=done>done</p>"))
	}))
	defer callback.Close()
	_, reg := postJSON(t, m.URL()+"/oauth/register", `{"client_name":"web client","redirect_uris":["http://127.0.0.1/callback"]}`, nil)
	clientID, _ := reg["client_id"].(string)
	_, challenge := pkce("https-verifier-")
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {callback.URL + "/callback"}, "state": {"st"},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "resource": {secure + "/mcp"}}
	consent := secure + "/oauth/authorize?" + q.Encode()
	allow := chromedp.CSS(`button[value="approve"]`)
	p.do(t, 10*time.Second, chromedp.Navigate(consent), chromedp.WaitVisible(allow))
	if boxes, ticked := p.eval(t, `String(document.querySelectorAll('input[name="agent"]').length)`),
		p.eval(t, `String(document.querySelectorAll('input[name="agent"]:checked').length)`); boxes != "2" || ticked != "0" {
		t.Fatalf("the consent page has %s agent boxes, %s ticked; want 2, none", boxes, ticked)
	}
	if action := p.attr(t, `form[method="post"]`, "action"); action != "/oauth/authorize" {
		t.Fatalf("the consent form posts to %q", action)
	}
	p.do(t, 10*time.Second, chromedp.Click(allow), chromedp.WaitVisible(chromedp.CSS(`.problem`)))
	p.expectStatus(t, http.StatusBadRequest)
	select {
	case got := <-codes:
		t.Fatalf("Allow with no agent chosen reached the client: %v", got)
	default:
	}
	p.do(t, 10*time.Second, chromedp.Navigate(consent), chromedp.WaitVisible(allow),
		chromedp.Click(chromedp.CSS(`input[name="agent"][value="second"]`)), chromedp.Click(allow),
		chromedp.WaitVisible(chromedp.CSS(`#done`)))
	select {
	case got := <-codes:
		if got.Get("code") == "" || got.Get("state") != "st" {
			t.Fatalf("the redirect carried %v", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the browser never reached the client's redirect")
	}

	// Signing out over https ends that sign-in only: the https console
	// then asks for the token although the browser still sends the http
	// sign-in's cookie, which still signs in over http.
	p.do(t, 10*time.Second, chromedp.Navigate(secure+"/dashboard"), chromedp.WaitVisible(chromedp.CSS(`form[action="/dashboard/logout"] button`)),
		chromedp.Click(chromedp.CSS(`form[action="/dashboard/logout"] button`)), chromedp.WaitVisible(token))
	if jar := p.cookies(t, secure+"/dashboard"); jar["__Host-switchboard_signin"] != nil || jar["switchboard_signin"] == nil {
		t.Fatalf("after signing out over https the browser holds %v", jar)
	}
	p.do(t, 10*time.Second, chromedp.Navigate(secure+"/dashboard"), chromedp.WaitVisible(token))
	p.do(t, 10*time.Second, chromedp.Navigate(m.URL()+"/dashboard"), chromedp.WaitVisible(chromedp.CSS(`tr[data-agent="helper"]`)))
	p.checkClean(t)
}
