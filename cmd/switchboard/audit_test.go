package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// TestAuditCommand: switchboard audit lists what the CLI changed, newest
// first, filtered by target and actor, bounded by --limit, as a table or
// JSON; no token the commands printed appears in it.
func TestAuditCommand(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	accountToken := cli(t, m, "account", "create", "alice")
	cli(t, m, "agent", "create", "helper")
	peer := cli(t, m, "token", "issue", "--agent", "helper", "ci")
	cli(t, m, "token", "revoke", "--agent", "helper", "ci")

	var entries []ownerapi.AuditEntry
	if err := json.Unmarshal([]byte(cli(t, m, "--json", "audit")), &entries); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if e.Action != "secret_key.rotate" { // the first start's sealing key
			got = append(got, e.Action+" "+e.TargetID)
		}
	}
	if want := "token.revoke peer:ci|token.issue peer:ci|token.issue agent|agent.create helper"; strings.Join(got[:4], "|") != want {
		t.Fatalf("audit: %q, want first %q", got, want)
	}
	out := cli(t, m, "audit", "--target", "helper")
	if !strings.Contains(out, "agent.create") || strings.Contains(out, "token.issue") {
		t.Fatalf("audit --target helper:\n%s", out)
	}
	out = cli(t, m, "audit", "--limit", "1", "--actor", "operator", "--since", "1h")
	if lines := strings.Count(out, "\n"); lines != 2 || !strings.Contains(out, "token.revoke") {
		t.Fatalf("audit --limit 1:\n%s", out)
	}
	all := cli(t, m, "audit", "--limit", "500")
	for _, s := range []string{m.GeneratedOwnerToken, strings.TrimSpace(peer), strings.TrimSpace(accountToken)} {
		for _, f := range strings.Fields(s) {
			if strings.HasPrefix(f, "sb") && len(f) > 20 && strings.Contains(all, f) {
				t.Fatalf("the audit log shows a token:\n%s", all)
			}
		}
	}
	if _, err := cliErr(m, "audit", "--since", "yesterday"); err == nil {
		t.Fatal("audit --since yesterday: no error")
	}
}

// TestAuditInBrowser: a refused and an accepted sign-in, and a peer token
// issued on the console, are on the console's audit page, newest first,
// without the tokens; the page has no script error.
func TestAuditInBrowser(t *testing.T) {
	p := newBrowserPage(t)
	m := MustRunMain(t, t.TempDir(), "")
	owner := m.GeneratedOwnerToken
	cli(t, m, "agent", "create", "helper")
	cli(t, m, "account", "create", "alice")

	token := chromedp.CSS(`input[name="token"]`)
	p.do(t, 30*time.Second, chromedp.Navigate(m.URL()+"/dashboard"), chromedp.WaitVisible(token),
		chromedp.SendKeys(token, "sbo_wrong"), chromedp.Submit(token), chromedp.WaitVisible(chromedp.CSS(`.problem`)))
	p.expectStatus(t, 401)
	p.do(t, 10*time.Second, chromedp.SendKeys(token, owner), chromedp.Submit(token),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-agent="helper"]`)))
	p.do(t, 10*time.Second, chromedp.Click(chromedp.CSS(`tr[data-agent="helper"] a.handle`)),
		chromedp.WaitVisible(chromedp.CSS(`#label`)),
		chromedp.SendKeys(chromedp.CSS(`#label`), "carol"),
		chromedp.Click(chromedp.CSS(`form[action$="/tokens"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#new-token`)))
	carol := p.eval(t, `document.getElementById("new-token").textContent`)

	p.do(t, 10*time.Second, chromedp.Click(chromedp.CSS(`a[href="/dashboard/audit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-audit]`)))
	rows := p.eval(t, `Array.from(document.querySelectorAll("tr[data-audit]")).map(r => r.cells[1].textContent + " " + r.cells[2].textContent).join("|")`)
	for _, want := range []string{"token.issue ok", "signin ok", "signin denied", "account.create ok", "agent.create ok"} {
		if !strings.Contains(rows, want) {
			t.Errorf("the audit page lacks %q: %s", want, rows)
		}
	}
	if !strings.HasPrefix(rows, "token.issue ok|signin ok|signin denied") {
		t.Errorf("the audit page is not newest first: %s", rows)
	}
	if html := p.eval(t, `document.documentElement.outerHTML`); strings.Contains(html, owner) || strings.Contains(html, carol) ||
		strings.Contains(html, "sbo_wrong") {
		t.Fatal("the audit page holds a token")
	}
	p.screenshot(t, "audit")
	p.checkClean(t)
}
