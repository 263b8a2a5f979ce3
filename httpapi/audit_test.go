package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/mcpauth"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// auditPage reads GET /audit with the query as token.
func (h *harness) auditPage(token, query string) ownerapi.AuditPage {
	h.t.Helper()
	r := h.owner("GET", "/audit"+query, token, nil)
	if r.status != http.StatusOK {
		h.t.Fatalf("GET /audit%s: HTTP %d: %s", query, r.status, r.body)
	}
	var p ownerapi.AuditPage
	must(h.t, json.Unmarshal(r.body, &p))
	return p
}

// TestAuditOwnerSeesOwnAccount: an owner reads the entries of its own
// account only, whatever its filter asks; the operator reads every
// account's. Each sees who acted, on what, from where, and the outcome.
func TestAuditOwnerSeesOwnAccount(t *testing.T) {
	h := newHarness(t)
	_, alice := h.account("alice")
	_, bob := h.account("bob")
	for _, c := range []struct{ token, handle string }{{alice, "alice-bot"}, {bob, "bob-bot"}} {
		if r := h.owner("POST", "/agents", c.token, map[string]any{"handle": c.handle, "mode": "inbox"}); r.status != http.StatusCreated {
			t.Fatalf("create %s: HTTP %d: %s", c.handle, r.status, r.body)
		}
		if r := h.owner("POST", "/agents/"+c.handle+"/tokens", c.token, map[string]any{"label": "ci"}); r.status != http.StatusCreated {
			t.Fatalf("issue: HTTP %d: %s", r.status, r.body)
		}
	}
	for _, q := range []string{"", "?target=bob-bot", "?actor=owner", "?target=token"} {
		for _, e := range h.auditPage(alice, q).Entries {
			if e.TargetID == "bob-bot" || strings.Contains(e.Detail, "bob-bot") {
				t.Fatalf("alice's audit log%s shows bob's entry %+v", q, e)
			}
		}
	}
	mine := h.auditPage(alice, "")
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
	all := h.auditPage(h.operatorToken, "")
	if len(all.Entries) != 6 {
		t.Fatalf("the operator sees %d entries, want 6", len(all.Entries))
	}
	if got := h.auditPage(h.operatorToken, "?target=bob-bot").Entries; len(got) != 1 || got[0].Action != "agent.create" {
		t.Fatalf("the operator's ?target=bob-bot: %+v", got)
	}
}

// TestAuditPages: ?limit pages the log newest first by its cursor, to the
// end; a bad limit, since or cursor is 400.
func TestAuditPages(t *testing.T) {
	h := newHarness(t)
	_, alice := h.account("alice")
	if r := h.owner("POST", "/agents", alice, map[string]any{"handle": "alice-bot", "mode": "inbox"}); r.status != http.StatusCreated {
		t.Fatalf("create: HTTP %d: %s", r.status, r.body)
	}
	for _, label := range []string{"a", "b", "c", "d"} {
		h.owner("POST", "/agents/alice-bot/tokens", alice, map[string]any{"label": label})
	}
	var got []string
	q := "?limit=2"
	for range 5 {
		p := h.auditPage(alice, q)
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
	if p := h.auditPage(alice, "?since=1h"); len(p.Entries) != 6 {
		t.Fatalf("since=1h: %d entries, want 6", len(p.Entries))
	}
	if p := h.auditPage(alice, "?since=2199-01-01T00:00:00Z"); len(p.Entries) != 0 {
		t.Fatalf("since the future: %d entries", len(p.Entries))
	}
	for _, q := range []string{"?limit=0", "?limit=201", "?limit=x", "?since=yesterday", "?cursor=nope"} {
		if r := h.owner("GET", "/audit"+q, alice, nil); r.status != http.StatusBadRequest {
			t.Errorf("GET /audit%s: HTTP %d, want 400: %s", q, r.status, r.body)
		}
	}
	if r := h.owner("GET", "/audit", "", nil); r.status != http.StatusUnauthorized {
		t.Errorf("GET /audit without a token: HTTP %d, want 401", r.status)
	}
}

// TestAuditNeverHoldsASecret makes every credential the owner API gives
// or takes (owner, agent, peer and MCP tokens, a rotation of each, a
// webhook secret, a front's bearer value and header value) and finds
// none of their values in any entry, while each change is recorded.
func TestAuditNeverHoldsASecret(t *testing.T) {
	var oauth *mcpauth.Service
	h := newHarness(t, withMCPOAuth(&oauth))
	var secrets []string
	keep := func(r *response, want int, field string) {
		t.Helper()
		if r.status != want {
			t.Fatalf("HTTP %d, want %d: %s", r.status, want, r.body)
		}
		v, _ := r.json[field].(string)
		if v == "" {
			t.Fatalf("no %s in %s", field, r.body)
		}
		secrets = append(secrets, v)
	}
	secrets = append(secrets, h.operatorToken)
	r := h.owner("POST", "/accounts", h.operatorToken, map[string]any{"name": "alice"})
	keep(r, http.StatusCreated, "token")
	aliceID := r.json["id"].(string)
	r = h.owner("POST", "/accounts/"+aliceID+"/rotate", h.operatorToken, nil)
	keep(r, http.StatusOK, "token")
	r = h.owner("POST", "/account/rotate", r.json["token"].(string), nil)
	keep(r, http.StatusOK, "token")
	alice := r.json["token"].(string)
	keep(h.owner("POST", "/agents", alice, map[string]any{"handle": "alice-bot"}), http.StatusCreated, "agent_token")
	keep(h.owner("POST", "/agents/alice-bot/agent-token", alice, nil), http.StatusOK, "agent_token")
	keep(h.owner("POST", "/agents/alice-bot/tokens", alice, map[string]any{"label": "ci"}), http.StatusCreated, "token")
	keep(h.owner("POST", "/agents/alice-bot/tokens", alice, map[string]any{"label": "ci", "rotate": true}), http.StatusCreated, "token")
	keep(h.owner("POST", "/agents/alice-bot/mcp-tokens", alice, map[string]any{"label": "desk"}), http.StatusCreated, "token")
	keep(h.owner("POST", "/agents", alice, map[string]any{"handle": "alice-hook", "mode": "webhook",
		"endpoint": "https://hooks.example/in"}), http.StatusCreated, "webhook_secret")
	keep(h.owner("POST", "/agents/alice-hook/webhook-secret", alice, nil), http.StatusOK, "webhook_secret")
	if r := h.owner("POST", "/agents", alice, map[string]any{"handle": "alice-later", "mode": "inbox"}); r.status != http.StatusCreated {
		t.Fatalf("create: HTTP %d: %s", r.status, r.body)
	}
	keep(h.owner("PATCH", "/agents/alice-later", alice, map[string]any{"mode": "webhook", "endpoint": "https://hooks.example/later"}),
		http.StatusOK, "webhook_secret")
	if r := h.owner("PUT", "/agents/alice-bot/communities/lab", alice, nil); r.status != http.StatusCreated {
		t.Fatalf("join: HTTP %d: %s", r.status, r.body)
	}
	keep(h.owner("POST", "/communities/lab/tokens", alice, map[string]any{"label": "lab-ci"}), http.StatusCreated, "token")
	if r := h.owner("DELETE", "/agents/alice-bot/tokens/ci", alice, nil); r.status != http.StatusOK {
		t.Fatalf("revoke: HTTP %d: %s", r.status, r.body)
	}
	// A wrong token is refused and leaves no trace of its value.
	wrong, _ := switchboard.NewToken(switchboard.TokenOwner)
	secrets = append(secrets, wrong)
	h.owner("POST", "/agents/alice-bot/tokens", wrong, map[string]any{"label": "x"})

	p := h.auditPage(h.operatorToken, "")
	raw := h.owner("GET", "/audit", h.operatorToken, nil).body
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
