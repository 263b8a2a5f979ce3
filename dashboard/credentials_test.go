package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
)

var newAgentToken = regexp.MustCompile(`<code id="new-agent-token">(sba_[A-Za-z0-9_-]+)</code>`)

// TestRotateAgentToken: the owner's POST rotates the agent token and
// shows the new one once (never again, never in a URL); the old one is
// revoked; another owner gets 404, the operator may; a POST without the
// CSRF token is refused and changes nothing; an inbox agent has none.
func TestRotateAgentToken(t *testing.T) {
	h := newHarness(t)
	alice, token := h.account("alice", switchboard.RoleOwner)
	_, bobToken := h.account("bob", switchboard.RoleOwner)
	_, opToken := h.account("operator", switchboard.RoleOperator)
	g := h.agent(alice, "helper", "Helper", "")
	ctx := context.Background()
	old, hash := switchboard.NewToken(switchboard.TokenAgent)
	if err := h.db.CreateToken(ctx, &switchboard.Token{Hash: hash, Kind: switchboard.TokenAgent, AgentID: g.ID}, true); err != nil {
		t.Fatal(err)
	}
	c := h.client()
	c.signIn(token)
	_, page := c.get("/dashboard/agents/helper")
	if !strings.Contains(page, `action="/dashboard/agents/helper/agent-token"`) {
		t.Fatalf("no rotate form:\n%s", page)
	}
	form := url.Values{"csrf": {csrf(t, page)}}
	if res, _ := c.post("/dashboard/agents/helper/agent-token", url.Values{"csrf": {"wrong"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("without the CSRF token: %s", res.Status)
	}
	if _, err := h.db.FindTokenByHash(ctx, switchboard.HashToken(old)); err != nil {
		t.Fatalf("a refused POST rotated the token: %v", err)
	}

	other := h.client()
	otherPage := other.signIn(bobToken)
	if res, _ := other.post("/dashboard/agents/helper/agent-token", url.Values{"csrf": {csrf(t, otherPage)}}); res.StatusCode != http.StatusNotFound {
		t.Fatalf("another owner rotates: %s", res.Status)
	}

	res, page := c.post("/dashboard/agents/helper/agent-token", form)
	m := newAgentToken.FindStringSubmatch(page)
	if res.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("rotate: %s\n%s", res.Status, page)
	}
	if res.Header.Get("Location") != "" {
		t.Fatal("the rotation redirects (the token would be lost or put in a URL)")
	}
	if tok, err := h.db.FindTokenByHash(ctx, switchboard.HashToken(m[1])); err != nil || tok.AgentID != g.ID || tok.Kind != switchboard.TokenAgent {
		t.Fatalf("the new token: %+v %v", tok, err)
	}
	if _, err := h.db.FindTokenByHash(ctx, switchboard.HashToken(old)); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("the old token still works: %v", err)
	}
	if _, page = c.get("/dashboard/agents/helper"); strings.Contains(page, m[1]) {
		t.Fatal("the agent token is shown again")
	}
	if strings.Contains(h.log.String(), m[1]) {
		t.Fatal("the agent token is in the log")
	}

	op := h.client()
	opPage := op.signIn(opToken)
	if res, page := op.post("/dashboard/agents/helper/agent-token", url.Values{"csrf": {csrf(t, opPage)}}); res.StatusCode != http.StatusOK || !newAgentToken.MatchString(page) {
		t.Fatalf("the operator rotates: %s", res.Status)
	}

	desk := h.agent(alice, "desk", "Desk", "")
	inbox := switchboard.ModeInbox
	if _, err := h.relay.UpdateAgent(ctx, desk.ID, switchboard.AgentUpdate{Mode: &inbox}); err != nil {
		t.Fatal(err)
	}
	// An inbox agent has an agent token too: its identity on the network.
	if _, page = c.get("/dashboard/agents/desk"); !strings.Contains(page, `action="/dashboard/agents/desk/agent-token"`) {
		t.Fatalf("no rotate button for an inbox agent:\n%s", page)
	}
	res, page = c.post("/dashboard/agents/desk/agent-token", form)
	if res.StatusCode != http.StatusOK || !newAgentToken.MatchString(page) {
		t.Fatalf("an inbox agent's token: %s\n%s", res.Status, page)
	}
}

// TestDeleteAgent: deleting asks for the handle on a page of its own; a
// wrong handle, a missing CSRF token, another owner are refused and the
// agent stays; the right handle deletes it and its tokens.
func TestDeleteAgent(t *testing.T) {
	h := newHarness(t)
	alice, token := h.account("alice", switchboard.RoleOwner)
	_, bobToken := h.account("bob", switchboard.RoleOwner)
	g := h.agent(alice, "helper", "Helper", "")
	ctx := context.Background()
	c := h.client()
	c.signIn(token)
	if _, page := c.get("/dashboard/agents/helper"); !strings.Contains(page, `href="/dashboard/agents/helper/delete"`) {
		t.Fatalf("no delete link:\n%s", page)
	}
	res, page := c.get("/dashboard/agents/helper/delete")
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `<label for="confirm">`) {
		t.Fatalf("the confirmation page: %s\n%s", res.Status, page)
	}
	csrfToken := csrf(t, page)
	if res, _ := c.get("/dashboard/agents/helper/delete?confirm=helper"); res.StatusCode != http.StatusOK {
		t.Fatalf("a GET: %s", res.Status)
	}
	if res, _ := c.post("/dashboard/agents/helper/delete", url.Values{"confirm": {"helper"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("without the CSRF token: %s", res.Status)
	}
	if res, _ := c.postFrom("https://evil.example", "/dashboard/agents/helper/delete", url.Values{"csrf": {csrfToken}, "confirm": {"helper"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("from another origin: %s", res.Status)
	}
	res, page = c.post("/dashboard/agents/helper/delete", url.Values{"csrf": {csrfToken}, "confirm": {"helpe"}})
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(page, "to delete it") {
		t.Fatalf("a wrong handle: %s\n%s", res.Status, page)
	}
	other := h.client()
	otherPage := other.signIn(bobToken)
	if res, _ := other.get("/dashboard/agents/helper/delete"); res.StatusCode != http.StatusNotFound {
		t.Fatalf("another owner's confirmation page: %s", res.Status)
	}
	if res, _ := other.post("/dashboard/agents/helper/delete", url.Values{"csrf": {csrf(t, otherPage)}, "confirm": {"helper"}}); res.StatusCode != http.StatusNotFound {
		t.Fatalf("another owner deletes: %s", res.Status)
	}
	if _, err := h.db.FindAgentByID(ctx, g.ID); err != nil {
		t.Fatalf("a refused delete deleted: %v", err)
	}
	res, _ = c.post("/dashboard/agents/helper/delete", url.Values{"csrf": {csrfToken}, "confirm": {"helper"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard" {
		t.Fatalf("delete: %s", res.Status)
	}
	if _, err := h.db.FindAgentByID(ctx, g.ID); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("the agent is still there: %v", err)
	}
	if res, _ := c.get("/dashboard/agents/helper"); res.StatusCode != http.StatusNotFound {
		t.Fatalf("the deleted agent's page: %s", res.Status)
	}
}
