package ownerhttp_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/facetest"
)

func TestOwnerAuth(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	peer := h.PeerToken(g, "bob")
	for name, tok := range map[string]string{"None": "", "Garbage": "sbo_nope", "PeerToken": peer} {
		t.Run(name, func(t *testing.T) {
			r := h.Owner("GET", "/agents", tok, nil)
			if r.Status != http.StatusUnauthorized || r.JSON["error"] == nil || r.Header.Get("WWW-Authenticate") == "" {
				t.Fatalf("got %d %s", r.Status, r.Body)
			}
		})
	}
	r := h.Do("GET", h.Server.URL+"/agents", map[string]string{"Authorization": "bearer   " + h.OperatorToken + "  "}, "")
	if r.Status != 200 {
		t.Fatalf("case-insensitive scheme with spaces: %d", r.Status)
	}
}

func TestAccounts(t *testing.T) {
	h := facetest.New(t)
	r := h.Owner("POST", "/accounts", h.OperatorToken, map[string]any{"name": "acme"})
	if r.Status != http.StatusCreated || r.JSON["role"] != "owner" || !strings.HasPrefix(r.JSON["token"].(string), "sbo_") {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	acmeID, acmeToken := r.JSON["id"].(string), r.JSON["token"].(string)

	if r := h.Owner("POST", "/accounts", h.OperatorToken, map[string]any{"name": "acme"}); r.Status != http.StatusConflict {
		t.Fatalf("duplicate name: %d", r.Status)
	}
	if r := h.Owner("POST", "/accounts", h.OperatorToken, map[string]any{"name": "  "}); r.Status != http.StatusBadRequest {
		t.Fatalf("empty name: %d", r.Status)
	}
	if r := h.Owner("POST", "/accounts", h.OperatorToken, map[string]any{"nmae": "typo"}); r.Status != http.StatusBadRequest {
		t.Fatalf("unknown field: %d", r.Status)
	}
	who := h.Owner("GET", "/account", acmeToken, nil)
	if who.JSON["name"] != "acme" || who.JSON["token"] != nil {
		t.Fatalf("whoami: %s", who.Body)
	}
	// Owners cannot manage accounts.
	for _, req := range [][2]string{{"GET", "/accounts"}, {"POST", "/accounts"}, {"PATCH", "/accounts/" + acmeID}, {"POST", "/accounts/" + acmeID + "/rotate"}} {
		if r := h.Owner(req[0], req[1], acmeToken, map[string]any{"name": "x"}); r.Status != http.StatusForbidden {
			t.Fatalf("owner %s %s: %d", req[0], req[1], r.Status)
		}
	}
	list := h.Owner("GET", "/accounts", h.OperatorToken, nil)
	if !strings.Contains(string(list.Body), `"acme"`) || strings.Contains(string(list.Body), "sbo_") {
		t.Fatalf("list: %s", list.Body)
	}

	// Rotate: the old token stops working at once.
	rot := h.Owner("POST", "/accounts/"+acmeID+"/rotate", h.OperatorToken, nil)
	newToken, _ := rot.JSON["token"].(string)
	if rot.Status != 200 || newToken == "" || newToken == acmeToken {
		t.Fatalf("rotate: %s", rot.Body)
	}
	if r := h.Owner("GET", "/account", acmeToken, nil); r.Status != http.StatusUnauthorized {
		t.Fatalf("old token after rotation: %d", r.Status)
	}
	self := h.Owner("POST", "/account/rotate", newToken, nil)
	if self.Status != 200 || h.Owner("GET", "/account", newToken, nil).Status != http.StatusUnauthorized {
		t.Fatalf("self rotation: %s", self.Body)
	}
	newToken = self.JSON["token"].(string)

	// Disable: the token is refused and the account's agents vanish.
	h.Owner("POST", "/agents", newToken, map[string]any{"handle": "acme-bot"})
	if r := h.Owner("PATCH", "/accounts/"+acmeID, h.OperatorToken, map[string]any{"disabled": true}); r.Status != 200 || r.JSON["disabled"] != true {
		t.Fatalf("disable: %s", r.Body)
	}
	if r := h.Owner("GET", "/agents", newToken, nil); r.Status != http.StatusForbidden {
		t.Fatalf("disabled account's token: %d", r.Status)
	}
	if r := h.Do("GET", h.Server.URL+"/a/acme-bot/.well-known/agent-card.json", nil, ""); r.Status != 404 {
		t.Fatalf("disabled account's agent: %d", r.Status)
	}
	h.Owner("PATCH", "/accounts/"+acmeID, h.OperatorToken, map[string]any{"disabled": false})
	if r := h.Owner("GET", "/agents", newToken, nil); r.Status != 200 {
		t.Fatalf("re-enabled: %d", r.Status)
	}
	if r := h.Owner("PATCH", "/accounts/"+h.Operator.ID, h.OperatorToken, map[string]any{"disabled": true}); r.Status != http.StatusBadRequest {
		t.Fatalf("operator disabled itself: %d", r.Status)
	}
	if r := h.Owner("GET", "/accounts/nope", h.OperatorToken, nil); r.Status != 404 {
		t.Fatalf("unknown account: %d", r.Status)
	}
}

func TestAgentsAPI(t *testing.T) {
	h := facetest.New(t)
	_, alice := h.Account("alice")
	_, bob := h.Account("bob")

	r := h.Owner("POST", "/agents", alice, map[string]any{
		"handle": "Helper", "name": "Helper", "description": "Helps", "mode": "inbox",
		"skills": []any{map[string]any{"id": "help", "name": "Help", "description": "helps", "tags": []any{"x"}}},
	})
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	id := r.JSON["id"].(string)
	if r.JSON["handle"] != "helper" || r.JSON["mode"] != "inbox" || r.JSON["accepts_tasks"] != true ||
		!strings.HasSuffix(r.JSON["address"].(string), "/a/helper/") {
		t.Fatalf("created: %s", r.Body)
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
			if r := h.Owner("POST", "/agents", alice, body); r.Status != http.StatusBadRequest {
				t.Fatalf("got %d %s", r.Status, r.Body)
			}
		})
	}
	if r := h.Owner("POST", "/agents", bob, map[string]any{"handle": "helper"}); r.Status != http.StatusConflict {
		t.Fatalf("taken handle: %d", r.Status)
	}
	h.Owner("POST", "/agents", bob, map[string]any{"handle": "bobs"})

	// Each owner sees and manages only its own agents; the operator sees all.
	if r := h.Owner("GET", "/agents", alice, nil); strings.Contains(string(r.Body), "bobs") || !strings.Contains(string(r.Body), "helper") {
		t.Fatalf("alice's list: %s", r.Body)
	}
	all := h.Owner("GET", "/agents", h.OperatorToken, nil)
	if !strings.Contains(string(all.Body), "bobs") || !strings.Contains(string(all.Body), "helper") {
		t.Fatalf("operator's list: %s", all.Body)
	}
	for _, req := range [][2]string{{"GET", "/agents/helper"}, {"GET", "/agents/" + id}, {"PATCH", "/agents/helper"}, {"DELETE", "/agents/helper"}, {"GET", "/agents/helper/inbox"}, {"GET", "/agents/helper/tokens"}} {
		if r := h.Owner(req[0], req[1], bob, map[string]any{"name": "stolen"}); r.Status != http.StatusNotFound {
			t.Fatalf("bob %s %s: %d", req[0], req[1], r.Status)
		}
	}
	if r := h.Owner("GET", "/agents/"+id, h.OperatorToken, nil); r.Status != 200 {
		t.Fatalf("operator reads alice's agent: %d", r.Status)
	}

	up := h.Owner("PATCH", "/agents/helper", alice, map[string]any{"description": "Helps more", "accepts_tasks": false})
	if up.Status != 200 || up.JSON["description"] != "Helps more" || up.JSON["accepts_tasks"] != false || up.JSON["name"] != "Helper" {
		t.Fatalf("update: %s", up.Body)
	}
	if r := h.Owner("PATCH", "/agents/helper", alice, map[string]any{"handle": "renamed"}); r.Status != http.StatusBadRequest {
		t.Fatalf("handle change: %d", r.Status)
	}
	card := h.Do("GET", h.Server.URL+"/a/helper/.well-known/agent-card.json", nil, "")
	if card.JSON["description"] != "Helps more" {
		t.Fatalf("card after update: %s", card.Body)
	}

	// The operator may create agents for an owner; owners may not.
	aliceID := h.Owner("GET", "/account", alice, nil).JSON["id"].(string)
	if r := h.Owner("POST", "/agents", h.OperatorToken, map[string]any{"handle": "for-alice", "account_id": aliceID}); r.Status != 201 || r.JSON["account_id"] != aliceID {
		t.Fatalf("operator creates for alice: %s", r.Body)
	}
	if r := h.Owner("POST", "/agents", bob, map[string]any{"handle": "sneaky", "account_id": aliceID}); r.Status != http.StatusForbidden {
		t.Fatalf("bob creates for alice: %d", r.Status)
	}

	if r := h.Owner("DELETE", "/agents/helper", alice, nil); r.Status != 200 {
		t.Fatalf("delete: %d", r.Status)
	}
	if r := h.Owner("GET", "/agents/helper", alice, nil); r.Status != 404 {
		t.Fatalf("after delete: %d", r.Status)
	}
	if r := h.Do("GET", h.Server.URL+"/a/helper/.well-known/agent-card.json", nil, ""); r.Status != 404 {
		t.Fatalf("card after delete: %d", r.Status)
	}
}

func TestPeerTokensAPI(t *testing.T) {
	h := facetest.New(t)
	h.Agent("alice")
	r := h.Owner("POST", "/agents/alice/tokens", h.OperatorToken, map[string]any{"label": "bob"})
	if r.Status != http.StatusCreated || r.JSON["label"] != "bob" || !strings.HasPrefix(r.JSON["token"].(string), "sbp_") {
		t.Fatalf("issue: %d %s", r.Status, r.Body)
	}
	tok := r.JSON["token"].(string)
	addr := h.Server.URL + "/a/alice"
	h.Call(addr, tok, "ListTasks", map[string]any{}).Result(t)
	taskID := h.Send(h.AgentByHandle("alice"), tok, "m1", "before rotation")

	if r := h.Owner("POST", "/agents/alice/tokens", h.OperatorToken, map[string]any{"label": "bob"}); r.Status != http.StatusConflict {
		t.Fatalf("duplicate label: %d", r.Status)
	}
	for _, bad := range []string{"", "has space", strings.Repeat("x", 65), "ünïcode"} {
		if r := h.Owner("POST", "/agents/alice/tokens", h.OperatorToken, map[string]any{"label": bad}); r.Status != http.StatusBadRequest {
			t.Fatalf("label %q: %d", bad, r.Status)
		}
	}
	rot := h.Owner("POST", "/agents/alice/tokens", h.OperatorToken, map[string]any{"label": "bob", "rotate": true})
	if rot.Status != 201 {
		t.Fatalf("rotate: %s", rot.Body)
	}
	facetest.WantRPCError(t, h.Call(addr, tok, "ListTasks", map[string]any{}), 401, -31401)
	tok = rot.JSON["token"].(string)
	// A rotated token is the same peer: it still sees its tasks.
	h.Call(addr, tok, "GetTask", map[string]any{"id": taskID}).Result(t)

	list := h.Owner("GET", "/agents/alice/tokens", h.OperatorToken, nil)
	if strings.Contains(string(list.Body), "sbp_") || strings.Count(string(list.Body), `"label"`) != 1 {
		t.Fatalf("list shows secrets or revoked tokens: %s", list.Body)
	}
	if all := h.Owner("GET", "/agents/alice/tokens?all=1", h.OperatorToken, nil); strings.Count(string(all.Body), `"label"`) != 2 {
		t.Fatalf("list all: %s", all.Body)
	}

	if r := h.Owner("DELETE", "/agents/alice/tokens/bob", h.OperatorToken, nil); r.Status != 200 || r.JSON["revoked"] != true {
		t.Fatalf("revoke: %s", r.Body)
	}
	facetest.WantRPCError(t, h.Call(addr, tok, "ListTasks", map[string]any{}), 401, -31401)
	if r := h.Owner("DELETE", "/agents/alice/tokens/bob", h.OperatorToken, nil); r.Status != 404 {
		t.Fatalf("revoke again: %d", r.Status)
	}
	if r := h.Owner("DELETE", "/agents/alice/tokens/nobody", h.OperatorToken, nil); r.Status != 404 {
		t.Fatalf("revoke unknown: %d", r.Status)
	}

	// The label issued again after a revocation is a new peer: it does not
	// see the old bob's tasks.
	again := h.Owner("POST", "/agents/alice/tokens", h.OperatorToken, map[string]any{"label": "bob"})
	newBob := again.JSON["token"].(string)
	facetest.WantRPCError(t, h.Call(addr, newBob, "GetTask", map[string]any{"id": taskID}), 200, -32001)
	if list := h.Call(addr, newBob, "ListTasks", map[string]any{}).Result(t); list["totalSize"] != float64(0) {
		t.Fatalf("new bob lists %v tasks", list["totalSize"])
	}

	// Another owner can neither issue nor revoke tokens of this agent.
	_, eve := h.Account("eve")
	if r := h.Owner("POST", "/agents/alice/tokens", eve, map[string]any{"label": "eve"}); r.Status != 404 {
		t.Fatalf("eve issues: %d", r.Status)
	}
	if r := h.Owner("DELETE", "/agents/alice/tokens/bob", eve, nil); r.Status != 404 {
		t.Fatalf("eve revokes: %d", r.Status)
	}
	h.Call(addr, newBob, "ListTasks", map[string]any{}).Result(t)
}

func TestInboxAndReplyAPI(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	bob := h.PeerToken(g, "bob")
	first := h.Send(g, bob, "m1", "first <b>question</b>")
	second := h.Send(g, bob, "m2", "second question")
	done := h.Send(g, bob, "m3", "already answered")
	h.Owner("POST", "/tasks/"+done+"/reply", h.OperatorToken, map[string]any{"text": "yes"})

	box := h.Owner("GET", "/agents/alice/inbox", h.OperatorToken, nil)
	tasks := box.JSON["tasks"].([]any)
	if len(tasks) != 2 || facetest.Path(tasks[0], "id") != first || facetest.Path(tasks[1], "id") != second {
		t.Fatalf("inbox: %s", box.Body)
	}
	if facetest.Path(tasks[0], "from") != "bob" || facetest.Path(tasks[0], "text") != "first <b>question</b>" || facetest.Path(tasks[0], "state") != "submitted" {
		t.Fatalf("inbox item: %v", tasks[0])
	}
	if all := h.Owner("GET", "/agents/alice/inbox?all=1", h.OperatorToken, nil); len(all.JSON["tasks"].([]any)) != 3 {
		t.Fatalf("inbox all: %s", all.Body)
	}

	show := h.Owner("GET", "/tasks/"+first, h.OperatorToken, nil)
	if show.JSON["agent"] != "alice" || show.JSON["from"] != "bob" || facetest.Path(show.JSON, "task", "id") != first || show.JSON["protocol"] != "1.0" {
		t.Fatalf("show: %s", show.Body)
	}

	work := h.Owner("POST", "/tasks/"+first+"/reply", h.OperatorToken, map[string]any{"state": "working"})
	if work.Status != 200 || work.JSON["state"] != "working" {
		t.Fatalf("working without text: %s", work.Body)
	}
	ask := h.Owner("POST", "/tasks/"+first+"/reply", h.OperatorToken, map[string]any{"text": "which?", "state": "input-required"})
	if ask.JSON["state"] != "input-required" || facetest.Path(ask.JSON, "task", "artifacts") != nil {
		t.Fatalf("input-required: %s", ask.Body)
	}
	fin := h.Owner("POST", "/tasks/"+first+"/reply", h.OperatorToken, map[string]any{"text": "answer", "artifact_name": "result"})
	arts := facetest.Path(fin.JSON, "task", "artifacts").([]any)
	if fin.JSON["state"] != "completed" || len(arts) != 1 || facetest.Path(arts[0], "name") != "result" {
		t.Fatalf("complete: %s", fin.Body)
	}
	if r := h.Owner("POST", "/tasks/"+first+"/reply", h.OperatorToken, map[string]any{"text": "again"}); r.Status != http.StatusConflict {
		t.Fatalf("reply to finished task: %d", r.Status)
	}
	if r := h.Owner("POST", "/tasks/"+first+"/reply", h.OperatorToken, map[string]any{"text": "correction", "force": true}); r.Status != 200 {
		t.Fatalf("forced reply: %d", r.Status)
	}
	for name, body := range map[string]map[string]any{
		"NoText":   {"state": "completed"},
		"BadState": {"text": "x", "state": "done"},
		"Canceled": {"text": "x", "state": "canceled"},
	} {
		if r := h.Owner("POST", "/tasks/"+second+"/reply", h.OperatorToken, body); r.Status != http.StatusBadRequest {
			t.Fatalf("%s: %d %s", name, r.Status, r.Body)
		}
	}
	// The peer sees the answer.
	task := h.Call(h.Addr(g), bob, "GetTask", map[string]any{"id": first}).Result(t)
	if facetest.Path(task, "status", "state") != "TASK_STATE_COMPLETED" {
		t.Fatalf("peer view: %v", task)
	}
	// Another owner cannot read or answer the task.
	_, eve := h.Account("eve")
	if r := h.Owner("GET", "/tasks/"+second, eve, nil); r.Status != 404 {
		t.Fatalf("eve reads: %d", r.Status)
	}
	if r := h.Owner("POST", "/tasks/"+second+"/reply", eve, map[string]any{"text": "x"}); r.Status != 404 {
		t.Fatalf("eve answers: %d", r.Status)
	}
	if r := h.Owner("GET", "/tasks/nope", h.OperatorToken, nil); r.Status != 404 {
		t.Fatalf("unknown task: %d", r.Status)
	}
}

func TestAgentModesAndCredentials(t *testing.T) {
	h := facetest.New(t)
	_, alice := h.Account("alice")

	// Connector is the default mode; the agent token is shown once.
	r := h.Owner("POST", "/agents", alice, map[string]any{"handle": "conn"})
	tok, _ := r.JSON["agent_token"].(string)
	if r.Status != 201 || r.JSON["mode"] != "connector" || !strings.HasPrefix(tok, "sba_") {
		t.Fatalf("create: %s", r.Body)
	}
	if g := h.Owner("GET", "/agents/conn", alice, nil); g.JSON["agent_token"] != nil {
		t.Fatalf("agent token shown again: %s", g.Body)
	}
	// Agent tokens are their own kind: not a peer token, not an owner token.
	facetest.WantRPCError(t, h.Call(h.Server.URL+"/a/conn", tok, "ListTasks", map[string]any{}), 401, -31401)
	if r := h.Owner("GET", "/agents", tok, nil); r.Status != 401 {
		t.Fatalf("agent token on the owner API: %d", r.Status)
	}
	rot := h.Owner("POST", "/agents/conn/agent-token", alice, nil)
	if rot.Status != 200 || rot.JSON["agent_token"] == tok || !strings.HasPrefix(rot.JSON["agent_token"].(string), "sba_") {
		t.Fatalf("rotate: %s", rot.Body)
	}
	if _, err := h.DB.FindTokenByHash(t.Context(), switchboard.HashToken(tok)); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatal("the rotated agent token still works")
	}

	// Webhook agents need an endpoint and get a signing secret.
	if r := h.Owner("POST", "/agents", alice, map[string]any{"handle": "hook", "mode": "webhook"}); r.Status != 400 {
		t.Fatalf("webhook without endpoint: %d", r.Status)
	}
	if r := h.Owner("POST", "/agents", alice, map[string]any{"handle": "hook", "mode": "webhook", "endpoint": "ftp://x"}); r.Status != 400 {
		t.Fatalf("bad endpoint: %d", r.Status)
	}
	wh := h.Owner("POST", "/agents", alice, map[string]any{"handle": "hook", "mode": "webhook", "endpoint": "https://hooks.example.com/a"})
	secret, _ := wh.JSON["webhook_secret"].(string)
	whTok, _ := wh.JSON["agent_token"].(string)
	if wh.Status != 201 || !strings.HasPrefix(secret, "sbw_") || !strings.HasPrefix(whTok, "sba_") || wh.JSON["endpoint"] != "https://hooks.example.com/a" {
		t.Fatalf("webhook agent: %s", wh.Body)
	}
	// Every agent has an agent token, whatever its mode, and rotates it.
	if r := h.Owner("POST", "/agents/hook/agent-token", alice, nil); r.Status != 200 || r.JSON["agent_token"] == whTok {
		t.Fatalf("agent token for a webhook agent: %s", r.Body)
	}
	if _, err := h.DB.FindTokenByHash(t.Context(), switchboard.HashToken(whTok)); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatal("the webhook agent's rotated token still works")
	}
	in := h.Owner("POST", "/agents", alice, map[string]any{"handle": "desk", "mode": "inbox"})
	if inTok, _ := in.JSON["agent_token"].(string); in.Status != 201 || !strings.HasPrefix(inTok, "sba_") {
		t.Fatalf("inbox agent: %s", in.Body)
	}
	ws := h.Owner("POST", "/agents/hook/webhook-secret", alice, nil)
	if ws.Status != 200 || ws.JSON["webhook_secret"] == secret {
		t.Fatalf("rotate secret: %s", ws.Body)
	}
	// Switching an agent to webhook mode needs an endpoint, and creates a secret.
	if r := h.Owner("PATCH", "/agents/conn", alice, map[string]any{"mode": "webhook"}); r.Status != 400 {
		t.Fatalf("to webhook without endpoint: %d", r.Status)
	}
	sw := h.Owner("PATCH", "/agents/conn", alice, map[string]any{"mode": "webhook", "endpoint": "https://x.example.com"})
	if sw.Status != 200 || !strings.HasPrefix(sw.JSON["webhook_secret"].(string), "sbw_") {
		t.Fatalf("to webhook: %s", sw.Body)
	}
	// Deliveries: what waits for an agent.
	d := h.Owner("GET", "/agents/hook/deliveries", alice, nil)
	if d.Status != 200 || d.JSON["deliveries"] == nil {
		t.Fatalf("deliveries: %s", d.Body)
	}
	_, eve := h.Account("eve")
	for _, p := range []string{"/agents/hook/webhook-secret", "/agents/conn/agent-token"} {
		if r := h.Owner("POST", p, eve, nil); r.Status != 404 {
			t.Fatalf("eve %s: %d", p, r.Status)
		}
	}
}
