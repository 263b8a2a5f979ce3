package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/server"
)

// The strings an owner (or someone who talks one into it) might put in an
// agent's name and description to run script in the console.
const (
	xssName        = `<img src=x onerror="alert('name')">`
	xssDescription = `<script>alert('description')</script>"'&`
	xssText        = `<img src=x onerror="alert('text')"><script>alert('text')</script>`
)

// TestDashboardInBrowser drives the console in a headless Chromium: a
// wrong token is refused, the owner signs in (the token never in the URL
// or the page), an agent goes live on the open page within 2 s of its
// connector connecting, and offline within 2 s of it leaving; the
// accepts_tasks switch holds a task back and, flipped again, lets it
// through; the agent's page lists its synced aliases and removes one;
// names and descriptions with markup stay text; no dialog opens
// and the console shows no error (a Content-Security-Policy refusal
// would be one); sign-out ends it.
func TestDashboardInBrowser(t *testing.T) {
	p := newBrowserPage(t)
	m := MustRunMain(t, t.TempDir(), "", func(c *server.Config) { c.Heartbeat = 500 * time.Millisecond })
	owner := m.GeneratedOwnerToken
	_, agentToken, peerToken := connectAgent(t, m, "helper")
	cli(t, m, "agent", "create", "xss", "--name", xssName, "--description", xssDescription)
	cli(t, m, "agent", "join", "helper", "lab")

	// Sign in: a wrong token first.
	token := chromedp.CSS(`input[name="token"]`)
	p.do(t, 30*time.Second, chromedp.Navigate(m.URL()+"/dashboard"), chromedp.WaitVisible(token))
	p.screenshot(t, "signin")
	p.do(t, 10*time.Second, chromedp.SendKeys(token, "sbo_wrong"), chromedp.Submit(token),
		chromedp.WaitVisible(chromedp.CSS(`.problem`)))
	p.do(t, 10*time.Second, chromedp.SendKeys(token, owner), chromedp.Submit(token),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-agent="helper"]`)),
		chromedp.WaitReady(chromedp.CSS(`body[data-live="on"]`)))
	if href := p.eval(t, `location.href`); href != m.URL()+"/dashboard" {
		t.Fatalf("after sign-in the page is %s", href)
	}
	if html := p.eval(t, `document.documentElement.outerHTML`); strings.Contains(html, owner) {
		t.Fatal("the page holds the owner token")
	}
	p.checkXSSIsText(t)

	// The agent goes live on the open page.
	work := make(chan string, 8)
	connected := make(chan time.Time, 4)
	ctx, stopConnector := context.WithCancel(context.Background())
	done := make(chan struct{})
	cl := &connector.Client{URLs: []string{m.URL()}, Token: agentToken, Logger: slog.New(slog.DiscardHandler),
		OnConnect: func(string) { connected <- time.Now() },
		Handler: connector.HandlerFunc(func(_ context.Context, w *connector.Work) {
			work <- w.Text()
			_ = w.Reply("done: " + w.Text())
		})}
	go func() { defer close(done); _ = cl.Run(ctx) }()
	t.Cleanup(func() { stopConnector(); <-done })
	select {
	case <-connected:
	case <-time.After(10 * time.Second):
		t.Fatal("the connector did not connect")
	}
	live := chromedp.CSS(`tr[data-agent="helper"] .badge.on`)
	p.do(t, 2*time.Second, chromedp.WaitVisible(live))
	p.checkXSSIsText(t) // the list came again through the stream

	// Paused: a new task waits (the page counts it) and is not offered.
	toggle := chromedp.CSS(`button[aria-label="accepts tasks helper"]`)
	p.do(t, 10*time.Second, chromedp.Click(toggle), chromedp.WaitReady(chromedp.CSS(`button[aria-label="accepts tasks helper"][aria-checked="false"]`)))
	var shown struct {
		AcceptsTasks bool `json:"accepts_tasks"`
	}
	if err := json.Unmarshal([]byte(cli(t, m, "--json", "agent", "show", "helper")), &shown); err != nil || shown.AcceptsTasks {
		t.Fatalf("after the switch: accepts_tasks %v (%v)", shown.AcceptsTasks, err)
	}
	held := peerSend(t, m, "helper", peerToken, "m-held", "held back", "", false)
	p.do(t, 2*time.Second, chromedp.WaitVisible(chromedp.Search(`//tr[@data-agent="helper"]/td[@class="waiting" and text()="1"]`)))
	select {
	case got := <-work:
		t.Fatalf("a paused agent was offered %q", got)
	default:
	}
	p.screenshot(t, "agents")

	// Accepting again: the task goes through.
	p.do(t, 10*time.Second, chromedp.Click(toggle), chromedp.WaitReady(chromedp.CSS(`button[aria-label="accepts tasks helper"][aria-checked="true"]`)))
	select {
	case got := <-work:
		if got != "held back" {
			t.Fatalf("offered %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the task was not offered after the switch went back on")
	}
	waitTask(t, m, "helper", peerToken, held.ID, func(task *peerTask) bool { return task.Status.State == "TASK_STATE_COMPLETED" })
	p.do(t, 2*time.Second, chromedp.WaitVisible(chromedp.Search(`//tr[@data-agent="helper"]/td[@class="waiting" and text()="0"]`)))

	// The agent leaves: offline within 2 s.
	stopConnector()
	<-done
	p.do(t, 2*time.Second, chromedp.WaitVisible(chromedp.CSS(`tr[data-agent="helper"] .badge.off`)))

	// Synced aliases, uploaded from the CLI's peers.json as owners do.
	t.Setenv("SWITCHBOARD_CONFIG_DIR", t.TempDir())
	for _, alias := range []string{"bob", "lab"} {
		if _, errOut, err := cliIO(m, "sbp_alias-token-"+alias+"\n", "peers", "add", alias, "https://"+alias+".example/a/"+alias, "--token-stdin"); err != nil {
			t.Fatalf("peers add %s: %v\n%s", alias, err, errOut)
		}
	}
	cli(t, m, "peers", "sync", "--agent", "helper")

	// The agent's page: a peer token issued there works, once revoked it
	// does not; the synced aliases are listed (never their tokens).
	p.do(t, 10*time.Second, chromedp.Click(chromedp.CSS(`tr[data-agent="helper"] a.handle`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-alias="bob"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-alias="lab"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#label`)),
		chromedp.SendKeys(chromedp.CSS(`#label`), "carol"),
		chromedp.Click(chromedp.CSS(`form[action$="/tokens"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#new-token`)))
	carol := p.eval(t, `document.getElementById("new-token").textContent`)
	if !strings.HasPrefix(carol, "sbp_") {
		t.Fatalf("issued %q", carol)
	}
	if href := p.eval(t, `location.href`); strings.Contains(href, carol) {
		t.Fatal("the token is in the URL")
	}
	p.screenshot(t, "agent")
	if task := peerSend(t, m, "helper", carol, "m-carol", "from carol", "", false); task.ID == "" {
		t.Fatal("carol's token was refused")
	}
	p.do(t, 10*time.Second, chromedp.Navigate(m.URL()+"/dashboard/agents/helper"),
		chromedp.Click(chromedp.CSS(`button[aria-label="revoke carol"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`tr[data-token="carol"]`)))
	if st, _ := peerStatus(t, m, "helper", carol); st != http.StatusUnauthorized {
		t.Fatalf("a revoked token: %d", st)
	}
	if html := p.eval(t, `document.documentElement.outerHTML`); strings.Contains(html, "sbp_alias-token") {
		t.Fatal("the page shows a synced alias's token")
	}
	p.do(t, 10*time.Second, chromedp.Click(chromedp.CSS(`button[aria-label="remove alias lab"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`tr[data-alias="lab"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-alias="bob"]`)))
	if out := cli(t, m, "peers", "synced", "--agent", "helper"); strings.Contains(out, "lab") || !strings.Contains(out, "bob  https://bob.example/a/bob  token kept") {
		t.Fatalf("after removing lab in the console: %s", out)
	}
	p.do(t, 10*time.Second, chromedp.Navigate(m.URL()+"/dashboard"), chromedp.WaitVisible(chromedp.CSS(`tr[data-agent="helper"]`)))

	// An inbox agent's task: the peer's text stays text, the owner answers
	// on the task's page, and the peer's GetTask sees it completed.
	cli(t, m, "agent", "create", "desk", "--mode", "inbox")
	var deskTok struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(cli(t, m, "--json", "token", "issue", "--agent", "desk", "bob")), &deskTok); err != nil {
		t.Fatal(err)
	}
	asked := peerSend(t, m, "desk", deskTok.Token, "m-desk", xssText, "", false)
	p.do(t, 10*time.Second, chromedp.Navigate(m.URL()+"/dashboard/agents/desk/inbox"),
		chromedp.WaitVisible(chromedp.CSS(`li[data-task="`+asked.ID+`"]`)))
	if got := p.eval(t, `document.querySelector('li[data-task="`+asked.ID+`"] .peer-text').textContent`); got != xssText {
		t.Fatalf("the peer's text shows as %q", got)
	}
	p.screenshot(t, "inbox")
	p.do(t, 10*time.Second, chromedp.Click(chromedp.CSS(`li[data-task="`+asked.ID+`"] a`)),
		chromedp.WaitVisible(chromedp.CSS(`#text`)),
		chromedp.SendKeys(chromedp.CSS(`#text`), "answered"),
		chromedp.Click(chromedp.CSS(`form[action$="/reply"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`dd[data-state="completed"]`)))
	p.screenshot(t, "task")
	waitTask(t, m, "desk", deskTok.Token, asked.ID, func(task *peerTask) bool {
		return task.Status.State == "TASK_STATE_COMPLETED" && task.answer() == "answered"
	})

	// The agent token, rotated on the agent's page: shown once, the old
	// one refused, the new one taken.
	p.do(t, 10*time.Second, chromedp.Navigate(m.URL()+"/dashboard/agents/helper"),
		chromedp.Click(chromedp.CSS(`form[action$="/agent-token"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`#new-agent-token`)))
	rotated := p.eval(t, `document.getElementById("new-agent-token").textContent`)
	if !strings.HasPrefix(rotated, "sba_") || strings.Contains(p.eval(t, `location.href`), rotated) {
		t.Fatalf("rotated to %q, or the token is in the URL", rotated)
	}
	if st := bearerStatus(t, m, "/tasks/none", agentToken); st != http.StatusUnauthorized {
		t.Fatalf("the old agent token: %d", st)
	}
	if st := bearerStatus(t, m, "/tasks/none", rotated); st != http.StatusNotFound {
		t.Fatalf("the new agent token: %d", st)
	}
	p.do(t, 10*time.Second, chromedp.Navigate(m.URL()+"/dashboard/agents/helper"), chromedp.WaitVisible(chromedp.CSS(`#label`)))
	if html := p.eval(t, `document.documentElement.outerHTML`); strings.Contains(html, rotated) {
		t.Fatal("the agent token is shown again")
	}

	// The wake webhook: set on its page, the key and the URL's secret
	// never shown.
	p.do(t, 10*time.Second, chromedp.Click(chromedp.CSS(`a[href="/dashboard/agents/helper/wake"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#url`)),
		chromedp.SendKeys(chromedp.CSS(`#url`), "https://wake.example/hook?key=url-secret-1234"),
		chromedp.SendKeys(chromedp.CSS(`#key`), "wake-key-5678"),
		chromedp.Submit(chromedp.CSS(`#url`)),
		chromedp.WaitVisible(chromedp.CSS(`form[action$="/wake/test"]`)))
	if html := p.eval(t, `document.documentElement.outerHTML`); strings.Contains(html, "url-secret-1234") || strings.Contains(html, "wake-key-5678") {
		t.Fatal("the wake page shows a secret")
	}
	p.screenshot(t, "wake")

	// Deleting an agent asks for its handle first.
	cli(t, m, "agent", "create", "doomed")
	p.do(t, 10*time.Second, chromedp.Navigate(m.URL()+"/dashboard/agents/doomed"),
		chromedp.Click(chromedp.CSS(`a[href="/dashboard/agents/doomed/delete"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#confirm`)),
		chromedp.SendKeys(chromedp.CSS(`#confirm`), "doome"),
		chromedp.Submit(chromedp.CSS(`#confirm`)),
		chromedp.WaitVisible(chromedp.CSS(`.problem`)))
	if st := bearerStatus(t, m, "/agents/doomed", owner); st != http.StatusOK {
		t.Fatalf("a wrong handle deleted the agent: %d", st)
	}
	p.do(t, 10*time.Second, chromedp.SendKeys(chromedp.CSS(`#confirm`), "doomed"),
		chromedp.Submit(chromedp.CSS(`#confirm`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-agent="helper"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`tr[data-agent="doomed"]`)))
	if st := bearerStatus(t, m, "/agents/doomed", owner); st != http.StatusNotFound {
		t.Fatalf("the deleted agent: %d", st)
	}

	// The operator creates an account: its owner token is shown once and
	// signs in to the API.
	p.do(t, 10*time.Second, chromedp.Click(chromedp.CSS(`header a[href="/dashboard/accounts"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#name`)),
		chromedp.SendKeys(chromedp.CSS(`#name`), "Carol & Co"),
		chromedp.Submit(chromedp.CSS(`#name`)),
		chromedp.WaitVisible(chromedp.CSS(`#new-token`)))
	carolOwner := p.eval(t, `document.getElementById("new-token").textContent`)
	if !strings.HasPrefix(carolOwner, "sbo_") || strings.Contains(p.eval(t, `location.href`), carolOwner) {
		t.Fatalf("created %q, or the token is in the URL", carolOwner)
	}
	if st := bearerStatus(t, m, "/account", carolOwner); st != http.StatusOK {
		t.Fatalf("the new account's token: %d", st)
	}
	p.screenshot(t, "accounts")
	p.do(t, 10*time.Second, chromedp.Navigate(m.URL()+"/dashboard/accounts"), chromedp.WaitVisible(chromedp.CSS(`tr[data-account="Carol & Co"]`)))
	if html := p.eval(t, `document.documentElement.outerHTML`); strings.Contains(html, carolOwner) {
		t.Fatal("the owner token is shown again")
	}
	p.do(t, 10*time.Second, chromedp.Click(chromedp.CSS(`header a[href="/dashboard/health"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-count="agents"]`)))
	p.screenshot(t, "health")

	// At a phone's width no page is wider than the screen (wide tables
	// scroll inside their own box).
	p.do(t, 10*time.Second, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	for _, path := range []string{"/dashboard", "/dashboard/agents/helper", "/dashboard/agents/helper/wake",
		"/dashboard/agents/helper/outbox", "/dashboard/accounts", "/dashboard/health"} {
		p.do(t, 10*time.Second, chromedp.Navigate(m.URL()+path), chromedp.WaitVisible(chromedp.CSS(`main h1`)))
		if wide := p.eval(t, `String(document.documentElement.scrollWidth > window.innerWidth)`); wide != "false" {
			t.Errorf("%s is wider than a phone: %s px", path, p.eval(t, `String(document.documentElement.scrollWidth)`))
		}
	}
	p.do(t, 10*time.Second, chromedp.EmulateReset())

	// Sign out.
	p.do(t, 10*time.Second, chromedp.Click(chromedp.CSS(`header form button`)), chromedp.WaitVisible(token))
	p.checkClean(t)
}

// peerStatus sends GetTask with a peer token and returns the HTTP status.
func peerStatus(t *testing.T, m *server.Server, handle, peerToken string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", m.URL()+"/a/"+handle, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`))
	req.Header.Set("Authorization", "Bearer "+peerToken)
	req.Header.Set("A2A-Version", "1.0")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// bearerStatus sends GET path with a bearer token and returns the HTTP
// status.
func bearerStatus(t *testing.T, m *server.Server, path, token string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", m.URL()+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	return res.StatusCode
}

// eval evaluates a JavaScript expression that returns a string.
func (p *browserPage) eval(t *testing.T, expr string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return s
}

// checkXSSIsText: the xss agent's name and description are shown as the
// text they are, with no element made of them.
func (p *browserPage) checkXSSIsText(t *testing.T) {
	t.Helper()
	if got := p.eval(t, `document.querySelector('tr[data-agent="xss"] .name').textContent`); got != xssName {
		t.Fatalf("the name shows as %q", got)
	}
	if got := p.eval(t, `document.querySelector('tr[data-agent="xss"] .desc').textContent`); got != xssDescription {
		t.Fatalf("the description shows as %q", got)
	}
	if n := p.eval(t, `String(document.querySelectorAll('#agents img, #agents script').length)`); n != "0" {
		t.Fatalf("%s elements made of owners' text", n)
	}
}
