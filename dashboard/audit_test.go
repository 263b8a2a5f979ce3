package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
)

// TestAuditPageOwnAccountOnly: a failed and a successful sign-in are
// recorded (the failed one without the token offered); an owner's audit
// page lists its own account's entries only, the operator's every
// account's; pages follow one another, newest first.
func TestAuditPageOwnAccountOnly(t *testing.T) {
	h := newHarness(t)
	op, opToken := h.account("operator", switchboard.RoleOperator)
	alice, aliceToken := h.account("alice", switchboard.RoleOwner)
	_, bobToken := h.account("bob", switchboard.RoleOwner)
	h.agent(alice, "alice-bot", "Alice's bot", "")
	_ = op

	wrong, _ := switchboard.NewToken(switchboard.TokenOwner)
	c := h.client()
	_, form := c.get("/dashboard")
	if res, _ := c.post("/dashboard/login", url.Values{"csrf": {csrf(t, form)}, "token": {wrong}}); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a wrong token: %s", res.Status)
	}
	bobC := h.client()
	bobC.signIn(bobToken)
	aliceC := h.client()
	page := aliceC.signIn(aliceToken)
	res, _ := aliceC.post("/dashboard/agents/alice-bot/tokens", url.Values{"csrf": {csrf(t, page)}, "label": {"ci"}})
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("issue: %s", res.Status)
	}

	res, mine := aliceC.get("/dashboard/audit")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("alice's audit page: %s", res.Status)
	}
	if got := strings.Count(mine, "<tr data-audit>"); got != 2 {
		t.Fatalf("alice's audit page lists %d entries, want her sign-in and her token:\n%s", got, mine)
	}
	if !strings.Contains(mine, "token.issue") || !strings.Contains(mine, "token peer:ci") || strings.Contains(mine, bobToken) ||
		strings.Contains(mine, "denied") {
		t.Fatalf("alice's audit page:\n%s", mine)
	}
	if strings.Index(mine, "token.issue") > strings.Index(mine, "signin") {
		t.Fatal("the audit page is not newest first")
	}

	opC := h.client()
	opC.signIn(opToken)
	_, all := opC.get("/dashboard/audit")
	if got := strings.Count(all, "<tr data-audit>"); got != 5 {
		t.Fatalf("the operator's audit page lists %d entries, want 5 (a refused sign-in, three sign-ins, a token):\n%s", got, all)
	}
	if !strings.Contains(all, "<strong>denied</strong>") || strings.Contains(all, wrong) {
		t.Fatalf("the refused sign-in on the operator's page:\n%s", all)
	}
	if res, _ := opC.get("/dashboard/audit?page=nonsense"); res.StatusCode != http.StatusBadRequest {
		t.Fatalf("a bad page: %s", res.Status)
	}
	if res, _ := h.client().get("/dashboard/audit"); res.StatusCode == http.StatusOK {
		t.Fatal("the audit page answers without a sign-in")
	}
}

// TestAuditConsent: an owner's answers to an MCP client on the consent
// page, a denial and an approval, are in the audit log, in the agent's
// account, naming the client and never the code.
func TestAuditConsent(t *testing.T) {
	h := newHarness(t)
	alice, token := h.account("alice", switchboard.RoleOwner)
	h.agent(alice, "helper", "Helper", "")
	client := h.oauthClient()
	q := authorizeQuery(client, h.base+"/a/helper/mcp")
	path := "/a/helper/oauth/authorize"
	c := h.client()
	c.signIn(token)
	_, page := c.get(path + "?" + q.Encode())
	good := csrf(t, page)
	if res, _ := c.postWith(sameOriginForm, path, consentForm(q, good, "deny")); res.StatusCode != http.StatusSeeOther || codeIssued(res) {
		t.Fatalf("deny: %s", res.Status)
	}
	res, _ := c.postWith(sameOriginForm, path, consentForm(q, good, "approve"))
	if !codeIssued(res) {
		t.Fatalf("approve: %s", res.Status)
	}
	loc, _ := url.Parse(res.Header.Get("Location"))
	code := loc.Query().Get("code")
	entries, _, err := h.db.FindAuditEntries(context.Background(), switchboard.AuditFilter{AccountID: &alice.ID, Target: client.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("%d consent entries, want 2: %+v", len(entries), entries)
	}
	for i, want := range []string{"allowed, agent helper", "denied, agent helper"} {
		e := entries[i]
		if e.Action != switchboard.AuditMCPConsent || e.ActorID != alice.ID || !strings.HasPrefix(e.Detail, want) ||
			strings.Contains(e.Detail, code) || e.Outcome != switchboard.AuditOK {
			t.Fatalf("entry %d: %+v, want %q", i, e, want)
		}
	}
}
