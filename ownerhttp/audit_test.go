package ownerhttp_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/facetest"
	"github.com/switchboard-dev/switchboard/mcpauth"
)

// TestAuditOwnerSeesOwnAccount: an owner reads the entries of its own
// account only, whatever its filter asks; the operator reads every
// account's. Each sees who acted, on what, from where, and the outcome.
func TestAuditOwnerSeesOwnAccount(t *testing.T) {
	h := facetest.New(t)
	_, alice := h.Account("alice")
	_, bob := h.Account("bob")
	for _, c := range []struct{ token, handle string }{{alice, "alice-bot"}, {bob, "bob-bot"}} {
		if r := h.Owner("POST", "/agents", c.token, map[string]any{"handle": c.handle, "mode": "inbox"}); r.Status != http.StatusCreated {
			t.Fatalf("create %s: HTTP %d: %s", c.handle, r.Status, r.Body)
		}
		if r := h.Owner("POST", "/agents/"+c.handle+"/tokens", c.token, map[string]any{"label": "ci"}); r.Status != http.StatusCreated {
			t.Fatalf("issue: HTTP %d: %s", r.Status, r.Body)
		}
	}
	for _, q := range []string{"", "?target=bob-bot", "?actor=owner", "?target=token"} {
		for _, e := range h.AuditPage(alice, q).Entries {
			if e.TargetID == "bob-bot" || strings.Contains(e.Detail, "bob-bot") {
				t.Fatalf("alice's audit log%s shows bob's entry %+v", q, e)
			}
		}
	}
	mine := h.AuditPage(alice, "")
	// Newest first: the peer token, the agent token issued with the agent,
	// the agent.
	if len(mine.Entries) != 3 {
		t.Fatalf("alice sees %d entries, want her 3: %+v", len(mine.Entries), mine.Entries)
	}
	issue, agentToken, create := mine.Entries[0], mine.Entries[1], mine.Entries[2]
	if agentToken.Action != string(switchboard.AuditTokenIssue) || agentToken.TargetID != "agent" || agentToken.Detail != "agent alice-bot" {
		t.Fatalf("agent token entry %+v", agentToken)
	}
	if create.Action != string(switchboard.AuditAgentCreate) || create.TargetID != "alice-bot" || create.Outcome != "ok" ||
		create.ActorKind != "owner" || create.ClientAddr != "127.0.0.1" {
		t.Fatalf("create entry %+v", create)
	}
	if issue.Action != string(switchboard.AuditTokenIssue) || issue.TargetID != "peer:ci" || issue.Detail != "agent alice-bot" {
		t.Fatalf("issue entry %+v", issue)
	}
	all := h.AuditPage(h.OperatorToken, "")
	if len(all.Entries) != 6 {
		t.Fatalf("the operator sees %d entries, want 6", len(all.Entries))
	}
	if got := h.AuditPage(h.OperatorToken, "?target=bob-bot").Entries; len(got) != 1 || got[0].Action != "agent.create" {
		t.Fatalf("the operator's ?target=bob-bot: %+v", got)
	}
}

// TestAuditPages: ?limit pages the log newest first by its cursor, to the
// end; a bad limit, since or cursor is 400.
func TestAuditPages(t *testing.T) {
	h := facetest.New(t)
	_, alice := h.Account("alice")
	if r := h.Owner("POST", "/agents", alice, map[string]any{"handle": "alice-bot", "mode": "inbox"}); r.Status != http.StatusCreated {
		t.Fatalf("create: HTTP %d: %s", r.Status, r.Body)
	}
	for _, label := range []string{"a", "b", "c", "d"} {
		h.Owner("POST", "/agents/alice-bot/tokens", alice, map[string]any{"label": label})
	}
	var got []string
	q := "?limit=2"
	for range 5 {
		p := h.AuditPage(alice, q)
		for _, e := range p.Entries {
			got = append(got, e.TargetID)
		}
		if p.Next == "" {
			break
		}
		q = "?limit=2&cursor=" + url.QueryEscape(p.Next)
	}
	if want := "peer:d peer:c peer:b peer:a agent alice-bot"; strings.Join(got, " ") != want {
		t.Fatalf("pages gave %q, want %q", strings.Join(got, " "), want)
	}
	if p := h.AuditPage(alice, "?since=1h"); len(p.Entries) != 6 {
		t.Fatalf("since=1h: %d entries, want 6", len(p.Entries))
	}
	if p := h.AuditPage(alice, "?since=2199-01-01T00:00:00Z"); len(p.Entries) != 0 {
		t.Fatalf("since the future: %d entries", len(p.Entries))
	}
	for _, q := range []string{"?limit=0", "?limit=201", "?limit=x", "?since=yesterday", "?cursor=nope"} {
		if r := h.Owner("GET", "/audit"+q, alice, nil); r.Status != http.StatusBadRequest {
			t.Errorf("GET /audit%s: HTTP %d, want 400: %s", q, r.Status, r.Body)
		}
	}
	if r := h.Owner("GET", "/audit", "", nil); r.Status != http.StatusUnauthorized {
		t.Errorf("GET /audit without a token: HTTP %d, want 401", r.Status)
	}
}

// TestAuditNeverHoldsASecret makes every credential the owner API gives
// or takes (owner, agent, peer and MCP tokens, a rotation of each, a
// webhook secret, a front's bearer value and header value) and finds
// none of their values in any entry, while each change is recorded.
func TestAuditNeverHoldsASecret(t *testing.T) {
	var oauth *mcpauth.Service
	h := facetest.New(t, facetest.WithMCPOAuth(&oauth))
	var secrets []string
	keep := func(r *facetest.Response, want int, field string) {
		t.Helper()
		if r.Status != want {
			t.Fatalf("HTTP %d, want %d: %s", r.Status, want, r.Body)
		}
		v, _ := r.JSON[field].(string)
		if v == "" {
			t.Fatalf("no %s in %s", field, r.Body)
		}
		secrets = append(secrets, v)
	}
	secrets = append(secrets, h.OperatorToken)
	r := h.Owner("POST", "/accounts", h.OperatorToken, map[string]any{"name": "alice"})
	keep(r, http.StatusCreated, "token")
	aliceID := r.JSON["id"].(string)
	r = h.Owner("POST", "/accounts/"+aliceID+"/rotate", h.OperatorToken, nil)
	keep(r, http.StatusOK, "token")
	r = h.Owner("POST", "/account/rotate", r.JSON["token"].(string), nil)
	keep(r, http.StatusOK, "token")
	alice := r.JSON["token"].(string)
	keep(h.Owner("POST", "/agents", alice, map[string]any{"handle": "alice-bot"}), http.StatusCreated, "agent_token")
	keep(h.Owner("POST", "/agents/alice-bot/agent-token", alice, nil), http.StatusOK, "agent_token")
	keep(h.Owner("POST", "/agents/alice-bot/tokens", alice, map[string]any{"label": "ci"}), http.StatusCreated, "token")
	keep(h.Owner("POST", "/agents/alice-bot/tokens", alice, map[string]any{"label": "ci", "rotate": true}), http.StatusCreated, "token")
	keep(h.Owner("POST", "/agents/alice-bot/mcp-tokens", alice, map[string]any{"label": "desk"}), http.StatusCreated, "token")
	keep(h.Owner("POST", "/agents", alice, map[string]any{"handle": "alice-hook", "mode": "webhook",
		"endpoint": "https://hooks.example/in"}), http.StatusCreated, "webhook_secret")
	keep(h.Owner("POST", "/agents/alice-hook/webhook-secret", alice, nil), http.StatusOK, "webhook_secret")
	if r := h.Owner("POST", "/agents", alice, map[string]any{"handle": "alice-later", "mode": "inbox"}); r.Status != http.StatusCreated {
		t.Fatalf("create: HTTP %d: %s", r.Status, r.Body)
	}
	keep(h.Owner("PATCH", "/agents/alice-later", alice, map[string]any{"mode": "webhook", "endpoint": "https://hooks.example/later"}),
		http.StatusOK, "webhook_secret")
	if r := h.Owner("PUT", "/agents/alice-bot/communities/lab", alice, nil); r.Status != http.StatusCreated {
		t.Fatalf("join: HTTP %d: %s", r.Status, r.Body)
	}
	keep(h.Owner("POST", "/communities/lab/tokens", alice, map[string]any{"label": "lab-ci"}), http.StatusCreated, "token")
	if r := h.Owner("DELETE", "/agents/alice-bot/tokens/ci", alice, nil); r.Status != http.StatusOK {
		t.Fatalf("revoke: HTTP %d: %s", r.Status, r.Body)
	}
	// A wrong token is refused and leaves no trace of its value.
	wrong, _ := switchboard.NewToken(switchboard.TokenOwner)
	secrets = append(secrets, wrong)
	h.Owner("POST", "/agents/alice-bot/tokens", wrong, map[string]any{"label": "x"})

	p := h.AuditPage(h.OperatorToken, "")
	raw := h.Owner("GET", "/audit", h.OperatorToken, nil).Body
	for _, s := range secrets {
		if strings.Contains(string(raw), s) {
			t.Errorf("the audit log holds the secret %q: %s", s, raw)
		}
		if len(s) > 12 && strings.Contains(string(raw), s[len(s)-12:]) {
			t.Errorf("the audit log holds the end of the secret %q", s)
		}
	}
	actions := map[string]int{}
	for _, e := range p.Entries {
		actions[e.Action+" "+e.TargetID]++
	}
	for _, want := range []string{"account.create " + aliceID, "token.rotate owner", "agent.create alice-bot", "token.issue agent",
		"token.rotate agent", "token.issue peer:ci", "token.rotate peer:ci", "token.issue mcp:desk", "agent.create alice-hook",
		"token.rotate webhook_secret", "token.issue webhook_secret", "token.revoke peer:ci", "token.issue peer:lab-ci", "community.join lab"} {
		if actions[want] == 0 {
			t.Errorf("no entry %q in %v", want, actions)
		}
	}
	if actions["token.rotate owner"] != 2 {
		t.Errorf("owner token rotations recorded %d times, want 2", actions["token.rotate owner"])
	}
}
