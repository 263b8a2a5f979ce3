package main

import (
	"html"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestDevicePageInBrowser drives the /device page in a headless Chromium:
// the owner, signed in to the console, follows the link a peer was given,
// sees the claims as text (markup stays text), approves, and the peer's
// next poll gets the token; the page runs no script and the browser
// reports no policy violation.
func TestDevicePageInBrowser(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	p := newBrowserPage(t) // closed before the server, whose shutdown would wait 5 s for the browser's open connections
	cli(t, m, "agent", "create", "helper", "--mode", "inbox")
	device, code := requestCode(t, m.URL()+"/a/helper", url.Values{"client_name": {xssName}, "client_id": {"barry-cli"}})

	token := chromedp.CSS(`input[name="token"]`)
	p.do(t, 30*time.Second, chromedp.Navigate(m.URL()+"/dashboard"), chromedp.WaitVisible(token))
	p.do(t, 10*time.Second, chromedp.SendKeys(token, m.GeneratedOwnerToken), chromedp.Submit(token),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-agent="helper"]`)))

	p.do(t, 10*time.Second, chromedp.Navigate(m.URL()+"/a/helper/device?user_code="+code),
		chromedp.WaitVisible(chromedp.CSS(`button[value="approve"]`)))
	p.screenshot(t, "device")
	if got := p.eval(t, `document.querySelector('.code').textContent`); got != code {
		t.Fatalf("the code shows as %q", got)
	}
	if got := p.eval(t, `document.querySelector('dd.claim').textContent`); got != "“"+xssName+"”" {
		t.Fatalf("the claimed name shows as %q", got)
	}
	if n := p.eval(t, `String(document.querySelectorAll('img, script').length)`); n != "0" {
		t.Fatalf("%s elements made of the requester's text, or scripts", n)
	}
	label := chromedp.CSS(`input[name="label"]`)
	p.do(t, 10*time.Second, chromedp.SendKeys(label, "barry"), chromedp.Click(chromedp.CSS(`button[value="approve"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.notice`)))
	if got := p.eval(t, `document.querySelector('.notice').textContent`); !strings.Contains(got, `"barry"`) {
		t.Fatalf("the notice says %q", got)
	}
	p.checkClean(t)

	res, err := http.PostForm(m.URL()+"/a/helper/oauth/token", url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}, "device_code": {device}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("the poll after the approval: %d", res.StatusCode)
	}
}

// TestDevicePageDenyInBrowser: a visitor who is not signed in follows the
// link, is offered Deny only, denies, and the peer's next poll gets
// access_denied.
func TestDevicePageDenyInBrowser(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	p := newBrowserPage(t) // closed before the server, whose shutdown would wait 5 s for the browser's open connections
	cli(t, m, "agent", "create", "helper", "--mode", "inbox")
	addr := m.URL() + "/a/helper"
	device, code := requestCode(t, addr, url.Values{"client_name": {"Mallory"}})

	deny := chromedp.CSS(`button[value="deny"]`)
	p.do(t, 30*time.Second, chromedp.Navigate(addr+"/device?user_code="+code), chromedp.WaitVisible(deny))
	if n := p.eval(t, `String(document.querySelectorAll('button[value="approve"], input[name="label"]').length)`); n != "0" {
		t.Fatalf("a visitor not signed in is offered approval (%s elements)", n)
	}
	p.do(t, 10*time.Second, chromedp.Click(deny), chromedp.WaitVisible(chromedp.CSS(`.notice`)))
	if got := p.eval(t, `document.querySelector('.notice').textContent`); !strings.Contains(got, "Denied") {
		t.Fatalf("the notice says %q", got)
	}
	p.checkClean(t)
	if status, body := pollOnce(t, addr, device); status != http.StatusBadRequest || !strings.Contains(body, `"error":"access_denied"`) {
		t.Fatalf("the poll after the deny: %d %s", status, body)
	}
}

// TestDevicePageTamperedCSRFInBrowser: a form whose CSRF token does not
// match the page's cookie is refused with 403, and the request stays
// pending.
func TestDevicePageTamperedCSRFInBrowser(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	p := newBrowserPage(t) // closed before the server, whose shutdown would wait 5 s for the browser's open connections
	cli(t, m, "agent", "create", "helper", "--mode", "inbox")
	_, code := requestCode(t, m.URL()+"/a/helper", url.Values{"client_name": {"Mallory"}})

	deny := chromedp.CSS(`button[value="deny"]`)
	p.do(t, 30*time.Second, chromedp.Navigate(m.URL()+"/a/helper/device?user_code="+code), chromedp.WaitVisible(deny))
	p.eval(t, `document.querySelector('input[name="csrf"]').value = 'A'.repeat(43)`)
	p.do(t, 10*time.Second, chromedp.Click(deny), chromedp.WaitVisible(chromedp.CSS(`.problem`)))
	if got := p.eval(t, `document.querySelector('.problem').textContent`); !strings.Contains(got, "This form expired or came from another site") {
		t.Fatalf("the page says %q", got)
	}
	p.expectStatus(t, http.StatusForbidden)
	p.checkClean(t)
	if codes := pendingCodes(t, m, ""); !slices.Contains(codes, code) {
		t.Fatalf("the request is no longer pending after a refused deny: %v", codes)
	}
}

// TestDevicePageForeignOriginInBrowser: forms on other origins that post a
// decision to the /device page, with the page's own CSRF token, are
// refused with 403 and the request stays pending: from another port of the
// same host (same site, so the browser sends the SameSite=Strict cookie:
// only the Origin check refuses it) and from another site (127.0.0.2, where
// the browser leaves the cookie out as well). The same token from the page
// itself then works.
func TestDevicePageForeignOriginInBrowser(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	p := newBrowserPage(t) // closed before the server, whose shutdown would wait 5 s for the browser's open connections
	cli(t, m, "agent", "create", "helper", "--mode", "inbox")
	device, code := requestCode(t, m.URL()+"/a/helper", url.Values{"client_name": {"Mallory"}})
	target := m.URL() + "/a/helper/device"

	deny := chromedp.CSS(`button[value="deny"]`)
	p.do(t, 30*time.Second, chromedp.Navigate(target+"?user_code="+code), chromedp.WaitVisible(deny))
	csrf := p.eval(t, `document.querySelector('input[name="csrf"]').value`)

	form := `<!doctype html><title>elsewhere</title><form method="post" action="` + html.EscapeString(target) + `">` +
		`<input type="hidden" name="csrf" value="` + html.EscapeString(csrf) + `">` +
		`<input type="hidden" name="user_code" value="` + html.EscapeString(code) + `">` +
		`<button id="go" name="decision" value="deny">go</button></form>`
	serve := func(host string) string {
		ln, err := net.Listen("tcp", host+":0")
		if err != nil {
			t.Skipf("%s cannot be listened on: %v", host, err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(form))
		})}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
		return "http://" + ln.Addr().String() + "/"
	}
	// The same site first: the cross-site answer may set the browser a new
	// cookie, as it came without one.
	for _, elsewhere := range []string{serve("127.0.0.1"), serve("127.0.0.2")} {
		p.do(t, 10*time.Second, chromedp.Navigate(elsewhere), chromedp.WaitVisible(chromedp.CSS(`#go`)))
		p.do(t, 10*time.Second, chromedp.Click(chromedp.CSS(`#go`)), chromedp.WaitVisible(chromedp.CSS(`.problem`)))
		if got := p.eval(t, `location.href + " " + document.querySelector('.problem').textContent`); got != target+" This form expired or came from another site. Open the link again." {
			t.Fatalf("from %s: %q", elsewhere, got)
		}
		p.expectStatus(t, http.StatusForbidden)
		if codes := pendingCodes(t, m, ""); !slices.Contains(codes, code) {
			t.Fatalf("from %s: the request is no longer pending: %v", elsewhere, codes)
		}
	}
	p.checkClean(t)

	p.do(t, 10*time.Second, chromedp.Navigate(target+"?user_code="+code), chromedp.WaitVisible(deny))
	p.do(t, 10*time.Second, chromedp.Click(deny), chromedp.WaitVisible(chromedp.CSS(`.notice`)))
	if status, body := pollOnce(t, m.URL()+"/a/helper", device); !strings.Contains(body, `"error":"access_denied"`) {
		t.Fatalf("the poll after the deny on the page: %d %s", status, body)
	}
	p.checkClean(t)
}
