package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// TestEveryFormChecksCSRF: every POST of the console, sent by the
// signed-in operator (who may do everything), is refused with 403 without
// the sign-in's CSRF token, and with it from another origin.
func TestEveryFormChecksCSRF(t *testing.T) {
	h := newHarness(t)
	_, opToken := h.account("operator", switchboard.RoleOperator)
	alice, _ := h.account("alice", switchboard.RoleOwner)
	h.agent(alice, "helper", "Helper", "")
	c := h.client()
	good := csrf(t, c.signIn(opToken))
	paths := []string{
		"/dashboard/logout", "/dashboard/accepts-tasks",
		"/dashboard/agents/helper/tokens", "/dashboard/agents/helper/tokens/revoke",
		"/dashboard/agents/helper/communities/join", "/dashboard/agents/helper/communities/leave",
		"/dashboard/agents/helper/aliases/remove",
		"/dashboard/agents/helper/agent-token", "/dashboard/agents/helper/delete",
		"/dashboard/agents/helper/wake", "/dashboard/agents/helper/wake/clear", "/dashboard/agents/helper/wake/test",
		"/dashboard/agents/helper/approve", "/dashboard/tasks/none/reply",
		"/dashboard/accounts", "/dashboard/accounts/" + alice.ID + "/disable",
		"/dashboard/accounts/" + alice.ID + "/enable", "/dashboard/accounts/" + alice.ID + "/rotate",
	}
	form := url.Values{"set": {"helper false"}, "label": {"x"}, "community": {"lab"}, "confirm": {"helper"}, "alias": {"bob"},
		"url": {"https://wake.example/"}, "name": {"eve"}, "text": {"x"}, "state": {"completed"}}
	for _, path := range paths {
		if res, _ := c.post(path, form); res.StatusCode != http.StatusForbidden {
			t.Errorf("POST %s without the CSRF token: %s", path, res.Status)
		}
		withToken := url.Values{"csrf": {good}}
		for k, v := range form {
			withToken[k] = v
		}
		if res, _ := c.postFrom("https://evil.example", path, withToken); res.StatusCode != http.StatusForbidden {
			t.Errorf("POST %s from another origin: %s", path, res.Status)
		}
	}
	if res, _ := c.get("/dashboard/agents/helper"); res.StatusCode != http.StatusOK {
		t.Fatalf("after the refused forms the agent is gone, or signed out: %s", res.Status)
	}
	if a := findAccount(t, h, "eve"); a != nil {
		t.Fatal("a refused form created an account")
	}
}

// TestEveryAgentRouteIsTheOwners: an owner signed in to another account,
// with their own valid CSRF token and the console's origin, gets 404 for
// every page and form of an agent that is not theirs, and for its task,
// as for one that does not exist; nothing changes.
func TestEveryAgentRouteIsTheOwners(t *testing.T) {
	h := newHarness(t)
	alice, _ := h.account("alice", switchboard.RoleOwner)
	_, bobToken := h.account("bob", switchboard.RoleOwner)
	g := h.agent(alice, "helper", "Helper", "")
	ctx := context.Background()
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("please"))
	task, _, err := h.relay.SendMessage(ctx, g, switchboard.Peer{AgentID: g.ID, ID: "peer-1", Label: "carol"},
		&a2a.SendMessageRequest{Message: msg}, switchboard.ProtocolV1)
	if err != nil {
		t.Fatal(err)
	}
	bob := h.client()
	good := csrf(t, bob.signIn(bobToken))
	for _, path := range []string{"/dashboard/agents/helper", "/dashboard/agents/helper/delete", "/dashboard/agents/helper/wake",
		"/dashboard/agents/helper/inbox", "/dashboard/agents/helper/history", "/dashboard/agents/helper/outbox",
		"/dashboard/tasks/" + string(task.ID())} {
		if res, body := bob.get(path); res.StatusCode != http.StatusNotFound || strings.Contains(body, "helper") {
			t.Errorf("GET %s: %s", path, res.Status)
		}
	}
	form := url.Values{"csrf": {good}, "set": {"helper false"}, "label": {"x"}, "community": {"lab"}, "confirm": {"helper"},
		"alias": {"bob"}, "url": {"https://wake.example/"}, "text": {"x"}, "state": {"completed"}}
	for _, path := range []string{"/dashboard/accepts-tasks",
		"/dashboard/agents/helper/tokens", "/dashboard/agents/helper/tokens/revoke",
		"/dashboard/agents/helper/communities/join", "/dashboard/agents/helper/communities/leave",
		"/dashboard/agents/helper/aliases/remove", "/dashboard/agents/helper/agent-token", "/dashboard/agents/helper/delete",
		"/dashboard/agents/helper/wake", "/dashboard/agents/helper/wake/clear", "/dashboard/agents/helper/wake/test",
		"/dashboard/tasks/" + string(task.ID()) + "/reply"} {
		if res, _ := bob.post(path, form); res.StatusCode != http.StatusNotFound {
			t.Errorf("POST %s: %s", path, res.Status)
		}
	}
	got, err := h.db.FindAgentByHandle(ctx, "helper")
	if err != nil || !got.AcceptsTasks {
		t.Fatalf("the agent after another owner's forms: %+v %v", got, err)
	}
	kind := switchboard.TokenPeer
	if toks, err := h.db.FindTokens(ctx, switchboard.TokenFilter{Kind: &kind, AgentID: &g.ID}); err != nil || len(toks) != 0 {
		t.Fatalf("another owner issued peer tokens: %v %v", toks, err)
	}
	if got, err := h.relay.FindTaskUnscoped(ctx, task.ID()); err != nil || got.State().Terminal() {
		t.Fatalf("another owner answered the task: %v", err)
	}
}
