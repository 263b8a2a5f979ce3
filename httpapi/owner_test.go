package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
)

func TestOwnerAuth(t *testing.T) {
	h := newHarness(t)
	g := h.agent("alice")
	peer := h.peerToken(g, "bob")
	for name, tok := range map[string]string{"None": "", "Garbage": "sbo_nope", "PeerToken": peer} {
		t.Run(name, func(t *testing.T) {
			r := h.owner("GET", "/agents", tok, nil)
			if r.status != http.StatusUnauthorized || r.json["error"] == nil || r.header.Get("WWW-Authenticate") == "" {
				t.Fatalf("got %d %s", r.status, r.body)
			}
		})
	}
	r := h.do("GET", h.srv.URL+"/agents", map[string]string{"Authorization": "bearer   " + h.operatorToken + "  "}, "")
	if r.status != 200 {
		t.Fatalf("case-insensitive scheme with spaces: %d", r.status)
	}
}

func TestAccounts(t *testing.T) {
	h := newHarness(t)
	r := h.owner("POST", "/accounts", h.operatorToken, map[string]any{"name": "acme"})
	if r.status != http.StatusCreated || r.json["role"] != "owner" || !strings.HasPrefix(r.json["token"].(string), "sbo_") {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	acmeID, acmeToken := r.json["id"].(string), r.json["token"].(string)

	if r := h.owner("POST", "/accounts", h.operatorToken, map[string]any{"name": "acme"}); r.status != http.StatusConflict {
		t.Fatalf("duplicate name: %d", r.status)
	}
	if r := h.owner("POST", "/accounts", h.operatorToken, map[string]any{"name": "  "}); r.status != http.StatusBadRequest {
		t.Fatalf("empty name: %d", r.status)
	}
	if r := h.owner("POST", "/accounts", h.operatorToken, map[string]any{"nmae": "typo"}); r.status != http.StatusBadRequest {
		t.Fatalf("unknown field: %d", r.status)
	}
	who := h.owner("GET", "/account", acmeToken, nil)
	if who.json["name"] != "acme" || who.json["token"] != nil {
		t.Fatalf("whoami: %s", who.body)
	}
	// Owners cannot manage accounts.
	for _, req := range [][2]string{{"GET", "/accounts"}, {"POST", "/accounts"}, {"PATCH", "/accounts/" + acmeID}, {"POST", "/accounts/" + acmeID + "/rotate"}} {
		if r := h.owner(req[0], req[1], acmeToken, map[string]any{"name": "x"}); r.status != http.StatusForbidden {
			t.Fatalf("owner %s %s: %d", req[0], req[1], r.status)
		}
	}
	list := h.owner("GET", "/accounts", h.operatorToken, nil)
	if !strings.Contains(string(list.body), `"acme"`) || strings.Contains(string(list.body), "sbo_") {
		t.Fatalf("list: %s", list.body)
	}

	// Rotate: the old token stops working at once.
	rot := h.owner("POST", "/accounts/"+acmeID+"/rotate", h.operatorToken, nil)
	newToken, _ := rot.json["token"].(string)
	if rot.status != 200 || newToken == "" || newToken == acmeToken {
		t.Fatalf("rotate: %s", rot.body)
	}
	if r := h.owner("GET", "/account", acmeToken, nil); r.status != http.StatusUnauthorized {
		t.Fatalf("old token after rotation: %d", r.status)
	}
	self := h.owner("POST", "/account/rotate", newToken, nil)
	if self.status != 200 || h.owner("GET", "/account", newToken, nil).status != http.StatusUnauthorized {
		t.Fatalf("self rotation: %s", self.body)
	}
	newToken = self.json["token"].(string)

	// Disable: the token is refused and the account's agents vanish.
	h.owner("POST", "/agents", newToken, map[string]any{"handle": "acme-bot"})
	if r := h.owner("PATCH", "/accounts/"+acmeID, h.operatorToken, map[string]any{"disabled": true}); r.status != 200 || r.json["disabled"] != true {
		t.Fatalf("disable: %s", r.body)
	}
	if r := h.owner("GET", "/agents", newToken, nil); r.status != http.StatusForbidden {
		t.Fatalf("disabled account's token: %d", r.status)
	}
	if r := h.do("GET", h.srv.URL+"/a/acme-bot/.well-known/agent-card.json", nil, ""); r.status != 404 {
		t.Fatalf("disabled account's agent: %d", r.status)
	}
	h.owner("PATCH", "/accounts/"+acmeID, h.operatorToken, map[string]any{"disabled": false})
	if r := h.owner("GET", "/agents", newToken, nil); r.status != 200 {
		t.Fatalf("re-enabled: %d", r.status)
	}
	if r := h.owner("PATCH", "/accounts/"+h.operator.ID, h.operatorToken, map[string]any{"disabled": true}); r.status != http.StatusBadRequest {
		t.Fatalf("operator disabled itself: %d", r.status)
	}
	if r := h.owner("GET", "/accounts/nope", h.operatorToken, nil); r.status != 404 {
		t.Fatalf("unknown account: %d", r.status)
	}
}

func TestAgentsAPI(t *testing.T) {
	h := newHarness(t)
	_, alice := h.account("alice")
	_, bob := h.account("bob")

	r := h.owner("POST", "/agents", alice, map[string]any{
		"handle": "Helper", "name": "Helper", "description": "Helps", "mode": "inbox",
		"skills": []any{map[string]any{"id": "help", "name": "Help", "description": "helps", "tags": []any{"x"}}},
	})
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	id := r.json["id"].(string)
	if r.json["handle"] != "helper" || r.json["mode"] != "inbox" || r.json["accepts_tasks"] != true ||
		!strings.HasSuffix(r.json["address"].(string), "/a/helper/") {
		t.Fatalf("created: %s", r.body)
	}
	for name, body := range map[string]map[string]any{
		"NoHandle":   {"name": "x"},
		"BadHandle":  {"handle": "no spaces"},
		"DashEnd":    {"handle": "bad-"},
		"LongHandle": {"handle": strings.Repeat("a", 64)},
		"UUIDHandle": {"handle": "01234567-89ab-cdef-0123-456789abcdef"},
		"BadMode":    {"handle": "ok", "mode": "carrier-pigeon"},
		"BadSkill":   {"handle": "ok", "skills": []any{map[string]any{"id": "has space"}}},
		"LongDesc":   {"handle": "ok", "description": strings.Repeat("d", 4001)},
	} {
		t.Run(name, func(t *testing.T) {
			if r := h.owner("POST", "/agents", alice, body); r.status != http.StatusBadRequest {
				t.Fatalf("got %d %s", r.status, r.body)
			}
		})
	}
	if r := h.owner("POST", "/agents", bob, map[string]any{"handle": "helper"}); r.status != http.StatusConflict {
		t.Fatalf("taken handle: %d", r.status)
	}
	h.owner("POST", "/agents", bob, map[string]any{"handle": "bobs"})

	// Each owner sees and manages only its own agents; the operator sees all.
	if r := h.owner("GET", "/agents", alice, nil); strings.Contains(string(r.body), "bobs") || !strings.Contains(string(r.body), "helper") {
		t.Fatalf("alice's list: %s", r.body)
	}
	all := h.owner("GET", "/agents", h.operatorToken, nil)
	if !strings.Contains(string(all.body), "bobs") || !strings.Contains(string(all.body), "helper") {
		t.Fatalf("operator's list: %s", all.body)
	}
	for _, req := range [][2]string{{"GET", "/agents/helper"}, {"GET", "/agents/" + id}, {"PATCH", "/agents/helper"}, {"DELETE", "/agents/helper"}, {"GET", "/agents/helper/inbox"}, {"GET", "/agents/helper/tokens"}} {
		if r := h.owner(req[0], req[1], bob, map[string]any{"name": "stolen"}); r.status != http.StatusNotFound {
			t.Fatalf("bob %s %s: %d", req[0], req[1], r.status)
		}
	}
	if r := h.owner("GET", "/agents/"+id, h.operatorToken, nil); r.status != 200 {
		t.Fatalf("operator reads alice's agent: %d", r.status)
	}

	up := h.owner("PATCH", "/agents/helper", alice, map[string]any{"description": "Helps more", "accepts_tasks": false})
	if up.status != 200 || up.json["description"] != "Helps more" || up.json["accepts_tasks"] != false || up.json["name"] != "Helper" {
		t.Fatalf("update: %s", up.body)
	}
	if r := h.owner("PATCH", "/agents/helper", alice, map[string]any{"handle": "renamed"}); r.status != http.StatusBadRequest {
		t.Fatalf("handle change: %d", r.status)
	}
	card := h.do("GET", h.srv.URL+"/a/helper/.well-known/agent-card.json", nil, "")
	if card.json["description"] != "Helps more" {
		t.Fatalf("card after update: %s", card.body)
	}

	// The operator may create agents for an owner; owners may not.
	aliceID := h.owner("GET", "/account", alice, nil).json["id"].(string)
	if r := h.owner("POST", "/agents", h.operatorToken, map[string]any{"handle": "for-alice", "account_id": aliceID}); r.status != 201 || r.json["account_id"] != aliceID {
		t.Fatalf("operator creates for alice: %s", r.body)
	}
	if r := h.owner("POST", "/agents", bob, map[string]any{"handle": "sneaky", "account_id": aliceID}); r.status != http.StatusForbidden {
		t.Fatalf("bob creates for alice: %d", r.status)
	}

	if r := h.owner("DELETE", "/agents/helper", alice, nil); r.status != 200 {
		t.Fatalf("delete: %d", r.status)
	}
	if r := h.owner("GET", "/agents/helper", alice, nil); r.status != 404 {
		t.Fatalf("after delete: %d", r.status)
	}
	if r := h.do("GET", h.srv.URL+"/a/helper/.well-known/agent-card.json", nil, ""); r.status != 404 {
		t.Fatalf("card after delete: %d", r.status)
	}
}

func TestPeerTokensAPI(t *testing.T) {
	h := newHarness(t)
	h.agent("alice")
	r := h.owner("POST", "/agents/alice/tokens", h.operatorToken, map[string]any{"label": "bob"})
	if r.status != http.StatusCreated || r.json["label"] != "bob" || !strings.HasPrefix(r.json["token"].(string), "sbp_") {
		t.Fatalf("issue: %d %s", r.status, r.body)
	}
	tok := r.json["token"].(string)
	addr := h.srv.URL + "/a/alice"
	h.call(addr, tok, "ListTasks", map[string]any{}).result(t)
	taskID := h.send(h.agentByHandle("alice"), tok, "m1", "before rotation")

	if r := h.owner("POST", "/agents/alice/tokens", h.operatorToken, map[string]any{"label": "bob"}); r.status != http.StatusConflict {
		t.Fatalf("duplicate label: %d", r.status)
	}
	for _, bad := range []string{"", "has space", strings.Repeat("x", 65), "ünïcode"} {
		if r := h.owner("POST", "/agents/alice/tokens", h.operatorToken, map[string]any{"label": bad}); r.status != http.StatusBadRequest {
			t.Fatalf("label %q: %d", bad, r.status)
		}
	}
	rot := h.owner("POST", "/agents/alice/tokens", h.operatorToken, map[string]any{"label": "bob", "rotate": true})
	if rot.status != 201 {
		t.Fatalf("rotate: %s", rot.body)
	}
	wantRPCError(t, h.call(addr, tok, "ListTasks", map[string]any{}), 401, -31401)
	tok = rot.json["token"].(string)
	// A rotated token is the same peer: it still sees its tasks.
	h.call(addr, tok, "GetTask", map[string]any{"id": taskID}).result(t)

	list := h.owner("GET", "/agents/alice/tokens", h.operatorToken, nil)
	if strings.Contains(string(list.body), "sbp_") || strings.Count(string(list.body), `"label"`) != 1 {
		t.Fatalf("list shows secrets or revoked tokens: %s", list.body)
	}
	if all := h.owner("GET", "/agents/alice/tokens?all=1", h.operatorToken, nil); strings.Count(string(all.body), `"label"`) != 2 {
		t.Fatalf("list all: %s", all.body)
	}

	if r := h.owner("DELETE", "/agents/alice/tokens/bob", h.operatorToken, nil); r.status != 200 || r.json["revoked"] != true {
		t.Fatalf("revoke: %s", r.body)
	}
	wantRPCError(t, h.call(addr, tok, "ListTasks", map[string]any{}), 401, -31401)
	if r := h.owner("DELETE", "/agents/alice/tokens/bob", h.operatorToken, nil); r.status != 404 {
		t.Fatalf("revoke again: %d", r.status)
	}
	if r := h.owner("DELETE", "/agents/alice/tokens/nobody", h.operatorToken, nil); r.status != 404 {
		t.Fatalf("revoke unknown: %d", r.status)
	}

	// The label issued again after a revocation is a new peer: it does not
	// see the old bob's tasks.
	again := h.owner("POST", "/agents/alice/tokens", h.operatorToken, map[string]any{"label": "bob"})
	newBob := again.json["token"].(string)
	wantRPCError(t, h.call(addr, newBob, "GetTask", map[string]any{"id": taskID}), 200, -32001)
	if list := h.call(addr, newBob, "ListTasks", map[string]any{}).result(t); list["totalSize"] != float64(0) {
		t.Fatalf("new bob lists %v tasks", list["totalSize"])
	}

	// Another owner can neither issue nor revoke tokens of this agent.
	_, eve := h.account("eve")
	if r := h.owner("POST", "/agents/alice/tokens", eve, map[string]any{"label": "eve"}); r.status != 404 {
		t.Fatalf("eve issues: %d", r.status)
	}
	if r := h.owner("DELETE", "/agents/alice/tokens/bob", eve, nil); r.status != 404 {
		t.Fatalf("eve revokes: %d", r.status)
	}
	h.call(addr, newBob, "ListTasks", map[string]any{}).result(t)
}

func TestInboxAndReplyAPI(t *testing.T) {
	h := newHarness(t)
	g := h.agent("alice")
	bob := h.peerToken(g, "bob")
	first := h.send(g, bob, "m1", "first <b>question</b>")
	second := h.send(g, bob, "m2", "second question")
	done := h.send(g, bob, "m3", "already answered")
	h.owner("POST", "/tasks/"+done+"/reply", h.operatorToken, map[string]any{"text": "yes"})

	box := h.owner("GET", "/agents/alice/inbox", h.operatorToken, nil)
	tasks := box.json["tasks"].([]any)
	if len(tasks) != 2 || path(tasks[0], "id") != first || path(tasks[1], "id") != second {
		t.Fatalf("inbox: %s", box.body)
	}
	if path(tasks[0], "from") != "bob" || path(tasks[0], "text") != "first <b>question</b>" || path(tasks[0], "state") != "submitted" {
		t.Fatalf("inbox item: %v", tasks[0])
	}
	if all := h.owner("GET", "/agents/alice/inbox?all=1", h.operatorToken, nil); len(all.json["tasks"].([]any)) != 3 {
		t.Fatalf("inbox all: %s", all.body)
	}

	show := h.owner("GET", "/tasks/"+first, h.operatorToken, nil)
	if show.json["agent"] != "alice" || show.json["from"] != "bob" || path(show.json, "task", "id") != first || show.json["protocol"] != "1.0" {
		t.Fatalf("show: %s", show.body)
	}

	work := h.owner("POST", "/tasks/"+first+"/reply", h.operatorToken, map[string]any{"state": "working"})
	if work.status != 200 || work.json["state"] != "working" {
		t.Fatalf("working without text: %s", work.body)
	}
	ask := h.owner("POST", "/tasks/"+first+"/reply", h.operatorToken, map[string]any{"text": "which?", "state": "input-required"})
	if ask.json["state"] != "input-required" || path(ask.json, "task", "artifacts") != nil {
		t.Fatalf("input-required: %s", ask.body)
	}
	fin := h.owner("POST", "/tasks/"+first+"/reply", h.operatorToken, map[string]any{"text": "answer", "artifact_name": "result"})
	arts := path(fin.json, "task", "artifacts").([]any)
	if fin.json["state"] != "completed" || len(arts) != 1 || path(arts[0], "name") != "result" {
		t.Fatalf("complete: %s", fin.body)
	}
	if r := h.owner("POST", "/tasks/"+first+"/reply", h.operatorToken, map[string]any{"text": "again"}); r.status != http.StatusConflict {
		t.Fatalf("reply to finished task: %d", r.status)
	}
	if r := h.owner("POST", "/tasks/"+first+"/reply", h.operatorToken, map[string]any{"text": "correction", "force": true}); r.status != 200 {
		t.Fatalf("forced reply: %d", r.status)
	}
	for name, body := range map[string]map[string]any{
		"NoText":   {"state": "completed"},
		"BadState": {"text": "x", "state": "done"},
		"Canceled": {"text": "x", "state": "canceled"},
	} {
		if r := h.owner("POST", "/tasks/"+second+"/reply", h.operatorToken, body); r.status != http.StatusBadRequest {
			t.Fatalf("%s: %d %s", name, r.status, r.body)
		}
	}
	// The peer sees the answer.
	task := h.call(h.addr(g), bob, "GetTask", map[string]any{"id": first}).result(t)
	if path(task, "status", "state") != "TASK_STATE_COMPLETED" {
		t.Fatalf("peer view: %v", task)
	}
	// Another owner cannot read or answer the task.
	_, eve := h.account("eve")
	if r := h.owner("GET", "/tasks/"+second, eve, nil); r.status != 404 {
		t.Fatalf("eve reads: %d", r.status)
	}
	if r := h.owner("POST", "/tasks/"+second+"/reply", eve, map[string]any{"text": "x"}); r.status != 404 {
		t.Fatalf("eve answers: %d", r.status)
	}
	if r := h.owner("GET", "/tasks/nope", h.operatorToken, nil); r.status != 404 {
		t.Fatalf("unknown task: %d", r.status)
	}
}

func TestAgentModesAndCredentials(t *testing.T) {
	h := newHarness(t)
	_, alice := h.account("alice")

	// Connector is the default mode; the agent token is shown once.
	r := h.owner("POST", "/agents", alice, map[string]any{"handle": "conn"})
	tok, _ := r.json["agent_token"].(string)
	if r.status != 201 || r.json["mode"] != "connector" || !strings.HasPrefix(tok, "sba_") {
		t.Fatalf("create: %s", r.body)
	}
	if g := h.owner("GET", "/agents/conn", alice, nil); g.json["agent_token"] != nil {
		t.Fatalf("agent token shown again: %s", g.body)
	}
	// Agent tokens are their own kind: not a peer token, not an owner token.
	wantRPCError(t, h.call(h.srv.URL+"/a/conn", tok, "ListTasks", map[string]any{}), 401, -31401)
	if r := h.owner("GET", "/agents", tok, nil); r.status != 401 {
		t.Fatalf("agent token on the owner API: %d", r.status)
	}
	rot := h.owner("POST", "/agents/conn/agent-token", alice, nil)
	if rot.status != 200 || rot.json["agent_token"] == tok || !strings.HasPrefix(rot.json["agent_token"].(string), "sba_") {
		t.Fatalf("rotate: %s", rot.body)
	}
	if _, err := h.db.FindTokenByHash(t.Context(), switchboard.HashToken(tok)); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatal("the rotated agent token still works")
	}

	// Webhook agents need an endpoint and get a signing secret.
	if r := h.owner("POST", "/agents", alice, map[string]any{"handle": "hook", "mode": "webhook"}); r.status != 400 {
		t.Fatalf("webhook without endpoint: %d", r.status)
	}
	if r := h.owner("POST", "/agents", alice, map[string]any{"handle": "hook", "mode": "webhook", "endpoint": "ftp://x"}); r.status != 400 {
		t.Fatalf("bad endpoint: %d", r.status)
	}
	wh := h.owner("POST", "/agents", alice, map[string]any{"handle": "hook", "mode": "webhook", "endpoint": "https://hooks.example.com/a"})
	secret, _ := wh.json["webhook_secret"].(string)
	whTok, _ := wh.json["agent_token"].(string)
	if wh.status != 201 || !strings.HasPrefix(secret, "sbw_") || !strings.HasPrefix(whTok, "sba_") || wh.json["endpoint"] != "https://hooks.example.com/a" {
		t.Fatalf("webhook agent: %s", wh.body)
	}
	// Every agent has an agent token, whatever its mode, and rotates it.
	if r := h.owner("POST", "/agents/hook/agent-token", alice, nil); r.status != 200 || r.json["agent_token"] == whTok {
		t.Fatalf("agent token for a webhook agent: %s", r.body)
	}
	if _, err := h.db.FindTokenByHash(t.Context(), switchboard.HashToken(whTok)); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatal("the webhook agent's rotated token still works")
	}
	in := h.owner("POST", "/agents", alice, map[string]any{"handle": "desk", "mode": "inbox"})
	if inTok, _ := in.json["agent_token"].(string); in.status != 201 || !strings.HasPrefix(inTok, "sba_") {
		t.Fatalf("inbox agent: %s", in.body)
	}
	ws := h.owner("POST", "/agents/hook/webhook-secret", alice, nil)
	if ws.status != 200 || ws.json["webhook_secret"] == secret {
		t.Fatalf("rotate secret: %s", ws.body)
	}
	// Switching an agent to webhook mode needs an endpoint, and creates a secret.
	if r := h.owner("PATCH", "/agents/conn", alice, map[string]any{"mode": "webhook"}); r.status != 400 {
		t.Fatalf("to webhook without endpoint: %d", r.status)
	}
	sw := h.owner("PATCH", "/agents/conn", alice, map[string]any{"mode": "webhook", "endpoint": "https://x.example.com"})
	if sw.status != 200 || !strings.HasPrefix(sw.json["webhook_secret"].(string), "sbw_") {
		t.Fatalf("to webhook: %s", sw.body)
	}
	// Deliveries: what waits for an agent.
	d := h.owner("GET", "/agents/hook/deliveries", alice, nil)
	if d.status != 200 || d.json["deliveries"] == nil {
		t.Fatalf("deliveries: %s", d.body)
	}
	_, eve := h.account("eve")
	for _, p := range []string{"/agents/hook/webhook-secret", "/agents/conn/agent-token"} {
		if r := h.owner("POST", p, eve, nil); r.status != 404 {
			t.Fatalf("eve %s: %d", p, r.status)
		}
	}
}
