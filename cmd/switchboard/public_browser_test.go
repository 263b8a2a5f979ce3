package main

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/switchboard-dev/switchboard/internal/acmetest"
)

// TestHealthPublicInBrowser: the operator's health page in a headless
// Chromium lists the deployment's name and every agent's domain, with
// DNS, certificate and card: one reachable, one without DNS, one whose
// certificate is for other names, each failing one with its problem and
// fix. At a phone's width the page is no wider than the screen.
func TestHealthPublicInBrowser(t *testing.T) {
	p := newBrowserPage(t)
	m := runPublicMain(t, "sb.test", "bot.example.com")
	acmetest.SetNoAddress(t, "gone.example.com")
	cli(t, m, "agent", "create", "bob", "--mode", "inbox", "--domain", "bot.example.com")
	cli(t, m, "agent", "create", "carl", "--mode", "inbox", "--domain", "gone.example.com")
	cli(t, m, "agent", "create", "dora", "--mode", "inbox", "--domain", "dora.example.com")

	token := chromedp.CSS(`input[name="token"]`)
	p.do(t, 30*time.Second, chromedp.Navigate(m.URL()+"/dashboard"), chromedp.WaitVisible(token))
	p.do(t, 10*time.Second, chromedp.SendKeys(token, m.GeneratedOwnerToken), chromedp.Submit(token),
		chromedp.WaitVisible(chromedp.CSS(`header a[href="/dashboard/health"]`)))
	p.do(t, 30*time.Second, chromedp.Click(chromedp.CSS(`header a[href="/dashboard/health"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-public="https://sb.test"][data-state="ok"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-public="https://bot.example.com"][data-state="ok"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-public="https://gone.example.com"][data-state="failing"] [data-problem]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-public="https://dora.example.com"][data-state="failing"] [data-problem]`)))
	for sel, want := range map[string]string{
		`tr[data-public="https://bot.example.com"] [data-check="certificate"]`: "ok, 60 days left, by sb.test",
		`tr[data-public="https://bot.example.com"] [data-check="page"]`:        "card ok",
		`tr[data-public="https://sb.test"] [data-check="page"]`:                "health ok",
		`tr[data-public="https://gone.example.com"] [data-problem]`:            "no A/AAAA record for gone.example.com",
		`tr[data-public="https://dora.example.com"] [data-problem]`:            "the certificate served for dora.example.com is for sb.test, bot.example.com",
	} {
		got := p.eval(t, `document.querySelector(`+"`"+sel+"`"+`).textContent`)
		if !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", sel, got, want)
		}
	}
	p.screenshot(t, "health-public")

	p.do(t, 10*time.Second, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`main h1`)))
	if wide := p.eval(t, `String(document.documentElement.scrollWidth > window.innerWidth)`); wide != "false" {
		t.Errorf("the health page is wider than a phone: %s px", p.eval(t, `String(document.documentElement.scrollWidth)`))
	}
	p.checkClean(t)
}
