package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/dashboard"
)

var newOwnerToken = regexp.MustCompile(`<code id="new-token">(sbo_[A-Za-z0-9_-]+)</code>`)

// withApproval makes the deployment require approval of owners' agents.
func withApproval() harnessOption {
	return func(d *dashboard.Deps, _ *dashboard.Config, _ *harness) { d.Network.RequireApproval = true }
}

// TestOperatorPagesAreTheOperators: an owner gets 404 for every operator
// page and action, and sees no link to them (the health page is every
// owner's, without the operator's counts: TestHealthPagePublic).
func TestOperatorPagesAreTheOperators(t *testing.T) {
	h := newHarness(t)
	alice, token := h.account("alice", switchboard.RoleOwner)
	h.agent(alice, "helper", "Helper", "")
	c := h.client()
	home := c.signIn(token)
	if strings.Contains(home, `href="/dashboard/accounts"`) {
		t.Fatal("an owner sees the operator's links")
	}
	form := url.Values{"csrf": {csrf(t, home)}, "name": {"mallory"}}
	for _, path := range []string{"/dashboard/accounts", "/dashboard/approvals"} {
		if res, _ := c.get(path); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s", path, res.Status)
		}
	}
	for _, path := range []string{"/dashboard/accounts", "/dashboard/accounts/" + alice.ID + "/rotate",
		"/dashboard/accounts/" + alice.ID + "/disable", "/dashboard/accounts/" + alice.ID + "/enable", "/dashboard/agents/helper/approve"} {
		if res, _ := c.post(path, form); res.StatusCode != http.StatusNotFound {
			t.Errorf("POST %s: %s", path, res.Status)
		}
	}
	if a := findAccount(t, h, "mallory"); a != nil {
		t.Fatal("an owner created an account")
	}
}

// TestAccountsPage: the operator lists accounts, creates one (its owner
// token shown once, and working), disables and enables it, rotates its
// token (shown once; the old one ends); it cannot disable itself; POSTs
// without the CSRF token are refused.
func TestAccountsPage(t *testing.T) {
	h := newHarness(t)
	_, opToken := h.account("operator", switchboard.RoleOperator)
	h.account("alice", switchboard.RoleOwner)
	c := h.client()
	home := c.signIn(opToken)
	if !strings.Contains(home, `href="/dashboard/accounts"`) {
		t.Fatalf("no link to the accounts:\n%s", home)
	}
	res, page := c.get("/dashboard/accounts")
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `data-account="alice"`) || !strings.Contains(page, `data-account="operator"`) {
		t.Fatalf("accounts: %s\n%s", res.Status, page)
	}
	csrfToken := csrf(t, page)
	if res, _ := c.post("/dashboard/accounts", url.Values{"name": {"bob"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("create without the CSRF token: %s", res.Status)
	}
	res, page = c.post("/dashboard/accounts", url.Values{"csrf": {csrfToken}, "name": {"<b>bob</b>"}})
	m := newOwnerToken.FindStringSubmatch(page)
	if res.StatusCode != http.StatusCreated || m == nil || strings.Contains(page, "<b>bob") {
		t.Fatalf("create: %s\n%s", res.Status, page)
	}
	ctx := context.Background()
	bob := findAccount(t, h, "<b>bob</b>")
	if bob == nil {
		t.Fatal("the account was not created")
	}
	bobClient := h.client()
	bobClient.signIn(m[1])
	if _, page = c.get("/dashboard/accounts"); strings.Contains(page, m[1]) {
		t.Fatal("the owner token is shown again")
	}
	if res, page := c.post("/dashboard/accounts", url.Values{"csrf": {csrfToken}, "name": {"alice"}}); res.StatusCode != http.StatusUnprocessableEntity || newOwnerToken.MatchString(page) {
		t.Fatalf("a taken name: %s", res.Status)
	}
	// A name with a bidirectional override is shown as a problem, not as
	// an internal error.
	if res, page := c.post("/dashboard/accounts", url.Values{"csrf": {csrfToken}, "name": {"evil\u202eecila"}}); res.StatusCode != http.StatusUnprocessableEntity ||
		!strings.Contains(page, "name may not hold a bidirectional formatting character") {
		t.Fatalf("a name with U+202E: %s\n%s", res.Status, page)
	}

	if res, _ := c.post("/dashboard/accounts/"+bob.ID+"/disable", url.Values{"csrf": {"x"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("disable without the CSRF token: %s", res.Status)
	}
	if res, _ := c.post("/dashboard/accounts/"+bob.ID+"/disable", url.Values{"csrf": {csrfToken}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("disable: %s", res.Status)
	}
	if got, _ := h.db.FindAccountByID(ctx, bob.ID); !got.Disabled {
		t.Fatal("not disabled")
	}
	if _, page := bobClient.get("/dashboard"); !strings.Contains(page, `name="token"`) {
		t.Fatal("a disabled account is still signed in")
	}
	if res, _ := c.post("/dashboard/accounts/"+bob.ID+"/enable", url.Values{"csrf": {csrfToken}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("enable: %s", res.Status)
	}
	if got, _ := h.db.FindAccountByID(ctx, bob.ID); got.Disabled {
		t.Fatal("not enabled")
	}
	opAcct := findAccount(t, h, "operator")
	res, page = c.post("/dashboard/accounts/"+opAcct.ID+"/disable", url.Values{"csrf": {csrfToken}})
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(page, "the operator account cannot be disabled") {
		t.Fatalf("the operator disables itself: %s\n%s", res.Status, page)
	}

	res, page = c.post("/dashboard/accounts/"+bob.ID+"/rotate", url.Values{"csrf": {csrfToken}})
	again := newOwnerToken.FindStringSubmatch(page)
	if res.StatusCode != http.StatusOK || again == nil || again[1] == m[1] {
		t.Fatalf("rotate: %s\n%s", res.Status, page)
	}
	if _, err := h.db.FindTokenByHash(ctx, switchboard.HashToken(m[1])); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("the old owner token still works: %v", err)
	}
	if tok, err := h.db.FindTokenByHash(ctx, switchboard.HashToken(again[1])); err != nil || tok.AccountID != bob.ID {
		t.Fatalf("the new owner token: %+v %v", tok, err)
	}
	if res, _ := c.post("/dashboard/accounts/nope/rotate", url.Values{"csrf": {csrfToken}}); res.StatusCode != http.StatusNotFound {
		t.Fatalf("rotate a missing account: %s", res.Status)
	}
	for _, tok := range []string{m[1], again[1]} {
		if strings.Contains(h.log.String(), tok) {
			t.Fatal("an owner token is in the log")
		}
	}
}

// TestApprovals: with approval required, an owner's new agent waits on
// the operator's approvals page; the operator approves it there (CSRF
// checked) and it leaves the list.
func TestApprovals(t *testing.T) {
	h := newHarness(t, withApproval())
	_, opToken := h.account("operator", switchboard.RoleOperator)
	alice, _ := h.account("alice", switchboard.RoleOwner)
	g := h.agent(alice, "helper", "Helper", "<i>new</i>")
	ctx := context.Background()
	no := false
	if _, err := h.relay.UpdateAgent(ctx, g.ID, switchboard.AgentUpdate{Approved: &no}); err != nil {
		t.Fatal(err)
	}
	h.agent(alice, "ready", "Ready", "")
	c := h.client()
	c.signIn(opToken)
	res, page := c.get("/dashboard/approvals")
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `data-waiting="helper"`) || strings.Contains(page, `data-waiting="ready"`) ||
		!strings.Contains(page, "requires approval") || strings.Contains(page, "<i>new") {
		t.Fatalf("approvals: %s\n%s", res.Status, page)
	}
	if res, _ := c.post("/dashboard/agents/helper/approve", url.Values{"back": {"/dashboard/approvals"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("approve without the CSRF token: %s", res.Status)
	}
	res, _ = c.post("/dashboard/agents/helper/approve", url.Values{"csrf": {csrf(t, page)}, "back": {"/dashboard/approvals"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard/approvals" {
		t.Fatalf("approve: %s", res.Status)
	}
	if got, _ := h.db.FindAgentByID(ctx, g.ID); !got.Approved {
		t.Fatal("not approved")
	}
	if _, page = c.get("/dashboard/approvals"); strings.Contains(page, `data-waiting="helper"`) || !strings.Contains(page, "No agent waits") {
		t.Fatalf("after approval:\n%s", page)
	}
}

// findAccount returns the account with the name, or nil.
func findAccount(t *testing.T, h *harness, name string) *switchboard.Account {
	t.Helper()
	all, err := h.db.FindAccounts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range all {
		if a.Name == name {
			return a
		}
	}
	return nil
}
