package main

import (
	"net/http"
	"net/url"
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
	p := newBrowserPage(t)
	m := MustRunMain(t, t.TempDir(), "")
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
