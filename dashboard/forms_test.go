package dashboard_test

import (
	"net/http"
	"net/url"
	"testing"

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
