package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// TestAgentsList: an owner sees its own agents, never another's; the
// operator sees every account's, by account; a live session shows live.
func TestAgentsList(t *testing.T) {
	h := newHarness(t)
	_, opToken := h.account("operator", switchboard.RoleOperator)
	alice, aliceToken := h.account("alice", switchboard.RoleOwner)
	bob, _ := h.account("bob", switchboard.RoleOwner)
	helper := h.agent(alice, "helper", "Helper", "")
	h.agent(bob, "bobs", "Bob's agent", "")
	now := time.Now()
	if _, err := h.db.OpenSession(context.Background(), &switchboard.AgentSession{AgentID: helper.ID, Holder: "c1",
		InstanceID: "i1", ConnectedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	page := h.client().signIn(aliceToken)
	if !strings.Contains(page, `data-agent="helper"`) || strings.Contains(page, `data-agent="bobs"`) {
		t.Fatalf("alice's page:\n%s", page)
	}
	if !strings.Contains(page, `class="badge on">live`) {
		t.Fatalf("helper is not shown live:\n%s", page)
	}
	page = h.client().signIn(opToken)
	if !strings.Contains(page, `data-agent="helper"`) || !strings.Contains(page, `data-agent="bobs"`) ||
		!strings.Contains(page, "Account alice") || !strings.Contains(page, "Account bob") {
		t.Fatalf("the operator's page:\n%s", page)
	}
}

// TestToggleWithoutScript: the toggle is a plain form POST: 303 back to
// the list, the agent's accepts_tasks stored, its connection told
// (agentchange.<id>) as PATCH /agents/{ref} does; another owner's agent
// is not found.
func TestToggleWithoutScript(t *testing.T) {
	h := newHarness(t)
	alice, token := h.account("alice", switchboard.RoleOwner)
	bob, _ := h.account("bob", switchboard.RoleOwner)
	g := h.agent(alice, "helper", "Helper", "")
	h.agent(bob, "bobs", "Bob's", "")
	c := h.client()
	page := c.signIn(token)
	if !strings.Contains(page, `aria-checked="true" name="set" value="helper false" aria-label="accepts tasks helper"`) {
		t.Fatalf("no switch named accepts tasks helper:\n%s", page)
	}
	ctx := context.Background()
	w, err := h.bus.Watch(ctx, switchboard.AgentChangeSubject(g.ID))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	res, _ := c.post("/dashboard/accepts-tasks", url.Values{"csrf": {csrf(t, page)}, "set": {"helper false"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard" {
		t.Fatalf("toggle: %s", res.Status)
	}
	<-w.C()
	if got, _ := h.db.FindAgentByID(ctx, g.ID); got.AcceptsTasks {
		t.Fatal("accepts_tasks is still true")
	}
	_, page = c.get("/dashboard")
	if !strings.Contains(page, `aria-checked="false" name="set" value="helper true" aria-label="accepts tasks helper"`) {
		t.Fatalf("the switch is not off:\n%s", page)
	}
	token2 := csrf(t, page)
	if res, _ := c.post("/dashboard/accepts-tasks", url.Values{"csrf": {token2}, "set": {"bobs false"}}); res.StatusCode != http.StatusNotFound {
		t.Fatalf("toggle of another owner's agent: %s", res.Status)
	}
	if res, _ := c.post("/dashboard/accepts-tasks", url.Values{"csrf": {token2}, "set": {"helper maybe"}}); res.StatusCode != http.StatusBadRequest {
		t.Fatalf("toggle to maybe: %s", res.Status)
	}
	if res, _ := c.post("/dashboard/accepts-tasks", url.Values{"csrf": {token2}, "set": {"helper true"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("toggle back: %s", res.Status)
	}
	if got, _ := h.db.FindAgentByID(ctx, g.ID); !got.AcceptsTasks {
		t.Fatal("accepts_tasks is still false")
	}
}

// TestFormsGoBackHereOnly: a form's back field sends the browser back to
// a console page only; another host, a scheme-relative URL or a line
// break goes to /dashboard.
func TestFormsGoBackHereOnly(t *testing.T) {
	h := newHarness(t)
	acct, token := h.account("alice", switchboard.RoleOwner)
	h.agent(acct, "helper", "Helper", "")
	c := h.client()
	good := csrf(t, c.signIn(token))
	for back, want := range map[string]string{
		"/dashboard/agents/helper":       "/dashboard/agents/helper",
		"https://evil.example/dashboard": "/dashboard",
		"//evil.example/dashboard":       "/dashboard",
		"/dashboard\\@evil.example":      "/dashboard",
		"/dashboard\r\nSet-Cookie: x=y":  "/dashboard",
	} {
		res, _ := c.post("/dashboard/accepts-tasks", url.Values{"csrf": {good}, "set": {"helper true"}, "back": {back}})
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != want {
			t.Errorf("back %q: %s to %q, want %q", back, res.Status, res.Header.Get("Location"), want)
		}
	}
}
