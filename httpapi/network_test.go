package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/testwait"
)

// netAgent creates, through the owner API, an agent of the account with
// the token in the communities, and returns it with its agent token.
func (h *harness) netAgent(token, handle, mode, skill string, communities ...string) (*switchboard.Agent, string) {
	h.t.Helper()
	body := map[string]any{"handle": handle, "mode": mode}
	if skill != "" {
		body["skills"] = []map[string]any{{"id": skill, "name": skill, "tags": []string{"tag-" + skill}}}
	}
	if mode == "webhook" {
		body["endpoint"] = "https://hook.example/" + handle
	}
	r := h.owner("POST", "/agents", token, body)
	if r.status != http.StatusCreated {
		h.t.Fatalf("create %s: %d %s", handle, r.status, r.body)
	}
	for _, c := range communities {
		if r := h.owner("PUT", "/agents/"+handle+"/communities/"+c, h.operatorToken, nil); r.status != http.StatusCreated {
			h.t.Fatalf("join %s to %s: %d %s", handle, c, r.status, r.body)
		}
	}
	token, _ = r.json["agent_token"].(string)
	return h.agentByHandle(handle), token
}

// live opens a session for the agent, as a connection of some instance.
func (h *harness) live(g *switchboard.Agent) string {
	h.t.Helper()
	holder := "conn/test/" + switchboard.NewID()
	now := time.Now()
	_, err := h.db.OpenSession(context.Background(), &switchboard.AgentSession{AgentID: g.ID, Holder: holder, InstanceID: "test",
		ConnectedAt: now, ExpiresAt: now.Add(time.Minute)})
	must(h.t, err)
	return holder
}

func TestApprovalAPI(t *testing.T) {
	h := newHarness(t)
	h.network.RequireApproval = true
	_, owner := h.account("alice")
	r := h.owner("POST", "/agents", owner, map[string]any{"handle": "newcomer"})
	if r.status != http.StatusCreated || r.json["approved"] != false {
		t.Fatalf("an owner's new agent: %d %s", r.status, r.body)
	}
	if r := h.owner("POST", "/agents", h.operatorToken, map[string]any{"handle": "staff"}); r.json["approved"] != true {
		t.Fatalf("the operator's new agent: %s", r.body)
	}
	if r := h.owner("POST", "/agents/newcomer/approve", owner, nil); r.status != http.StatusForbidden || !strings.Contains(r.body2(), "only the operator may approve agents") {
		t.Fatalf("an owner approves: %d %s", r.status, r.body)
	}
	if r := h.owner("POST", "/agents/newcomer/approve", h.operatorToken, nil); r.status != http.StatusOK || r.json["approved"] != true {
		t.Fatalf("approve: %d %s", r.status, r.body)
	}
	if r := h.owner("GET", "/agents/newcomer", owner, nil); r.json["approved"] != true {
		t.Fatalf("after approval: %s", r.body)
	}
	if r := h.owner("POST", "/agents/newcomer/unapprove", h.operatorToken, nil); r.status != http.StatusOK || r.json["approved"] != false {
		t.Fatalf("unapprove: %d %s", r.status, r.body)
	}
}

func (r *response) body2() string { return string(r.body) }

func mustJSON(t testing.TB, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
}

func TestCommunitiesAPI(t *testing.T) {
	h := newHarness(t)
	_, alice := h.account("alice")
	_, bob := h.account("bob")
	h.netAgent(alice, "a1", "inbox", "")
	h.netAgent(bob, "b1", "inbox", "")
	join := func(token, agent, c string) *response {
		return h.owner("PUT", "/agents/"+agent+"/communities/"+c, token, nil)
	}
	if r := join(alice, "a1", "Lab"); r.status != http.StatusCreated || !slices.Equal(strs(r.json["communities"]), []string{"lab"}) {
		t.Fatalf("join: %d %s", r.status, r.body)
	}
	if r := join(alice, "a1", "lab"); r.status != http.StatusOK {
		t.Fatalf("join again: %d %s", r.status, r.body)
	}
	if r := join(alice, "a1", "not a slug"); r.status != http.StatusBadRequest {
		t.Fatalf("a bad name: %d %s", r.status, r.body)
	}
	if r := join(bob, "a1", "lab"); r.status != http.StatusNotFound {
		t.Fatalf("another owner's agent: %d %s", r.status, r.body)
	}
	if r := join(bob, "b1", "lab"); r.status != http.StatusCreated {
		t.Fatalf("bob joins: %d %s", r.status, r.body)
	}
	if r := h.owner("PUT", "/communities/staff", alice, map[string]any{"closed": true}); r.status != http.StatusForbidden {
		t.Fatalf("an owner closes: %d %s", r.status, r.body)
	}
	if r := h.owner("PUT", "/communities/staff", h.operatorToken, map[string]any{"closed": true}); r.status != http.StatusCreated || r.json["closed"] != true ||
		!strings.HasSuffix(r.json["address"].(string), "/c/staff") {
		t.Fatalf("the operator closes: %d %s", r.status, r.body)
	}
	if r := join(alice, "a1", "staff"); r.status != http.StatusForbidden || !strings.Contains(string(r.body), "closed") {
		t.Fatalf("an owner joins a closed community: %d %s", r.status, r.body)
	}
	if r := join(h.operatorToken, "a1", "staff"); r.status != http.StatusCreated {
		t.Fatalf("the operator adds to a closed community: %d %s", r.status, r.body)
	}
	r := h.owner("GET", "/communities", alice, nil)
	var list []map[string]any
	mustJSON(t, r.body, &list)
	if len(list) != 2 || list[0]["name"] != "lab" || list[0]["members"] != 2.0 || list[1]["name"] != "staff" || list[1]["closed"] != true {
		t.Fatalf("alice's communities: %s", r.body)
	}
	mustJSON(t, h.owner("GET", "/communities", bob, nil).body, &list)
	if len(list) != 1 || list[0]["name"] != "lab" {
		t.Fatalf("bob's communities: %v", list)
	}
	if r := h.owner("DELETE", "/agents/a1/communities/staff", alice, nil); r.status != http.StatusOK || !slices.Equal(strs(r.json["communities"]), []string{"lab"}) {
		t.Fatalf("leave a closed community: %d %s", r.status, r.body)
	}
	if r := h.owner("DELETE", "/agents/a1/communities/staff", alice, nil); r.status != http.StatusNotFound {
		t.Fatalf("leave again: %d %s", r.status, r.body)
	}
}

func strs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func TestDirectoryAPI(t *testing.T) {
	h := newHarness(t)
	_, alice := h.account("alice")
	_, bob := h.account("bob")
	_, me := h.netAgent(alice, "me", "connector", "", "lab")
	mate, _ := h.netAgent(bob, "mate", "connector", "code", "lab", "hidden")
	h.netAgent(bob, "hook", "webhook", "prose", "lab")
	h.netAgent(bob, "far", "connector", "code", "elsewhere")
	h.live(mate)
	r := h.owner("GET", "/directory", me, nil)
	var dir struct {
		Agents []map[string]any `json:"agents"`
	}
	mustJSON(t, r.body, &dir)
	if r.status != http.StatusOK || len(dir.Agents) != 2 {
		t.Fatalf("me's directory: %d %s", r.status, r.body)
	}
	e := dir.Agents[1]
	if e["handle"] != "mate" || e["live"] != true || e["approved"] != true || e["accepts_tasks"] != true ||
		!slices.Equal(strs(e["communities"]), []string{"lab"}) || !strings.HasSuffix(e["card_url"].(string), "/a/mate/.well-known/agent-card.json") {
		t.Fatalf("mate's entry: %v", e)
	}
	if dir.Agents[0]["handle"] != "hook" || dir.Agents[0]["live"] != true {
		t.Fatalf("a healthy webhook agent: %v", dir.Agents[0])
	}
	mustJSON(t, h.owner("GET", "/directory?skill=CODE&live=true", me, nil).body, &dir)
	if len(dir.Agents) != 1 || dir.Agents[0]["handle"] != "mate" {
		t.Fatalf("live with code: %v", dir.Agents)
	}
	if r := h.owner("GET", "/directory?community=elsewhere", me, nil); r.status != http.StatusNotFound {
		t.Fatalf("a community not mine: %d %s", r.status, r.body)
	}
	if r := h.owner("GET", "/directory?live=maybe", me, nil); r.status != http.StatusBadRequest {
		t.Fatalf("a bad live: %d %s", r.status, r.body)
	}
	// Owners see their agents' communities (and their own agents).
	mustJSON(t, h.owner("GET", "/directory", alice, nil).body, &dir)
	if len(dir.Agents) != 3 {
		t.Fatalf("alice's directory: %v", dir.Agents)
	}
	mustJSON(t, h.owner("GET", "/directory?limit=2", h.operatorToken, nil).body, &dir)
	r = h.owner("GET", "/directory?limit=2", h.operatorToken, nil)
	if len(dir.Agents) != 2 || !strings.Contains(string(r.body), `"next_after":"hook"`) {
		t.Fatalf("the operator's first page: %s", r.body)
	}
	// Liveness follows the session: a dropped one is gone from live=true.
	must(t, h.db.CloseSessions(context.Background(), []string{h.live(mate)}))
	mustJSON(t, h.owner("GET", "/directory?skill=code&live=true", me, nil).body, &dir)
	if len(dir.Agents) != 0 {
		t.Fatalf("a dropped agent is listed live: %v", dir.Agents)
	}
}

// TestNetworkTasks: POST /tasks by name and by discovery, the 202 and the
// blocking answers, following with GET /tasks/{id}, and no_agent_found
// at once.
func TestNetworkTasks(t *testing.T) {
	h := newHarness(t)
	_, alice := h.account("alice")
	_, me := h.netAgent(alice, "me", "connector", "", "lab")
	worker, _ := h.netAgent(alice, "worker", "connector", "code", "lab")
	_, other := h.netAgent(alice, "other", "connector", "", "lab")
	h.netAgent(alice, "stranger", "connector", "code", "elsewhere")
	post := func(token string, body map[string]any) *response { return h.owner("POST", "/tasks", token, body) }

	// Nobody live: no_agent_found, at once.
	start := time.Now()
	r := post(me, map[string]any{"community": "lab", "skill": "code", "task_description": "fix it"})
	elapsed := time.Since(start)
	if r.status != http.StatusNotFound || r.json["error"] != "no_agent_found" || !strings.Contains(r.json["reason"].(string), "none live") {
		t.Fatalf("nobody live: %d %s", r.status, r.body)
	}
	if elapsed > time.Second { // at once: never a wait (BenchmarkNoAgentFound measures it)
		t.Errorf("no_agent_found took %s", elapsed)
	}
	t.Logf("no_agent_found answered in %s", elapsed)

	h.live(worker)
	r = post(me, map[string]any{"community": "lab", "skill": "code", "task_description": "fix it", "payload": map[string]any{"message": "the build"}})
	if r.status != http.StatusAccepted || r.json["agent"] != "worker" {
		t.Fatalf("by discovery: %d %s", r.status, r.body)
	}
	id := r.json["task_id"].(string)
	task, err := h.db.FindTaskByID(context.Background(), a2a.TaskID(id))
	must(t, err)
	if got := switchboard.MessageText(task.A2A.History[0]); got != "fix it\nthe build" {
		t.Fatalf("the message: %q", got)
	}
	if task.PeerKind != switchboard.PeerAgent || task.PeerLabel != "me" {
		t.Fatalf("the task's peer: %q %q", task.PeerKind, task.PeerLabel)
	}
	if r := h.owner("GET", "/tasks/"+id, me, nil); r.status != http.StatusOK || r.json["agent"] != "worker" || r.json["from"] != "me" {
		t.Fatalf("the sender follows: %d %s", r.status, r.body)
	}
	if r := h.owner("GET", "/tasks/"+id, other, nil); r.status != http.StatusNotFound {
		t.Fatalf("another agent follows: %d %s", r.status, r.body)
	}

	// Blocking: the answer once the receiver finished.
	done := make(chan *response, 1)
	go func() {
		done <- post(me, map[string]any{"to": "worker", "payload": map[string]any{"message": "now"}, "blocking": true, "timeout_seconds": 10})
	}()
	var blockingID a2a.TaskID
	testwait.For(t, "the blocking call's task", func() bool {
		tasks, _, err := h.db.FindTasks(context.Background(), switchboard.TaskFilter{AgentID: &worker.ID, NoTotal: true})
		must(t, err)
		for _, tk := range tasks {
			if a2a.TaskID(id) != tk.ID() {
				blockingID = tk.ID()
			}
		}
		return blockingID != ""
	})
	h.reply(string(blockingID), a2a.TaskStateCompleted, "fixed")
	select {
	case r := <-done:
		if r.status != http.StatusOK || r.json["status"] != "completed" || r.json["result"] != "fixed" ||
			r.json["agent"] != "worker" || r.json["task_id"] != string(blockingID) {
			t.Fatalf("blocking: %d %s", r.status, r.body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the blocking call did not answer")
	}
	// Blocking past its timeout: 202 with the state.
	r = post(me, map[string]any{"to": "worker", "payload": map[string]any{"message": "slow"}, "blocking": true, "timeout_seconds": 1})
	if r.status != http.StatusAccepted || r.json["status"] != "submitted" {
		t.Fatalf("blocking past its timeout: %d %s", r.status, r.body)
	}

	// By name: a stranger reads as nobody; bad requests are 400.
	if r := post(me, map[string]any{"to": "stranger", "payload": map[string]any{"message": "hi"}}); r.status != http.StatusNotFound || r.json["error"] != "no_agent_found" {
		t.Fatalf("to a stranger: %d %s", r.status, r.body)
	}
	if r := post(me, map[string]any{"to": "worker"}); r.status != http.StatusBadRequest {
		t.Fatalf("no text: %d %s", r.status, r.body)
	}
	if r := post(me, map[string]any{"to": "worker", "payload": map[string]any{"message": "x"}, "timeout_seconds": 601}); r.status != http.StatusBadRequest {
		t.Fatalf("too long a wait: %d %s", r.status, r.body)
	}
	// The owner sends as its agent, naming it, under the agent's rules;
	// another owner's agent is not found; an agent token names only its own.
	if r := post(alice, map[string]any{"to": "worker", "payload": map[string]any{"message": "x"}}); r.status != http.StatusBadRequest {
		t.Fatalf("an owner token without agent: %d %s", r.status, r.body)
	}
	if r := post(alice, map[string]any{"agent": "me", "community": "lab", "skill": "code", "payload": map[string]any{"message": "x"}}); r.status != http.StatusAccepted || r.json["agent"] != "worker" {
		t.Fatalf("the owner sends as me by discovery: %d %s", r.status, r.body)
	}
	if r := post(alice, map[string]any{"agent": "me", "to": "stranger", "payload": map[string]any{"message": "x"}}); r.status != http.StatusNotFound || r.json["error"] != "no_agent_found" {
		t.Fatalf("the owner sends as me to a stranger: %d %s", r.status, r.body)
	}
	_, bob := h.account("bob")
	if r := post(bob, map[string]any{"agent": "me", "to": "worker", "payload": map[string]any{"message": "x"}}); r.status != http.StatusNotFound || r.json["error"] == "no_agent_found" {
		t.Fatalf("another owner sends as me: %d %s", r.status, r.body)
	}
	if r := post(me, map[string]any{"agent": "other", "to": "worker", "payload": map[string]any{"message": "x"}}); r.status != http.StatusNotFound {
		t.Fatalf("an agent token naming another agent: %d %s", r.status, r.body)
	}
	// A retry with the same message_id returns the same task.
	a := post(me, map[string]any{"community": "lab", "payload": map[string]any{"message": "once"}, "message_id": "m-once"})
	b := post(me, map[string]any{"community": "lab", "payload": map[string]any{"message": "once"}, "message_id": "m-once"})
	if a.json["task_id"] != b.json["task_id"] || a.json["task_id"] == nil {
		t.Fatalf("a retry: %s then %s", a.body, b.body)
	}
	// An unapproved agent may not send.
	if r := h.owner("POST", "/agents/me/unapprove", h.operatorToken, nil); r.status != http.StatusOK {
		t.Fatal(r.status)
	}
	if r := post(me, map[string]any{"to": "worker", "payload": map[string]any{"message": "x"}}); r.status != http.StatusForbidden {
		t.Fatalf("an unapproved sender: %d %s", r.status, r.body)
	}
}

// TestAgentTokenAtAddress: an agent that shares a community with another
// calls its address with its own agent token, as a peer that is the agent.
func TestAgentTokenAtAddress(t *testing.T) {
	h := newHarness(t)
	_, alice := h.account("alice")
	_, me := h.netAgent(alice, "me", "connector", "", "lab")
	worker, _ := h.netAgent(alice, "worker", "inbox", "", "lab")
	stranger, _ := h.netAgent(alice, "stranger", "inbox", "", "elsewhere")
	id := h.send(worker, me, "m1", "hello worker")
	task, err := h.db.FindTaskByID(context.Background(), a2a.TaskID(id))
	must(t, err)
	if task.PeerKind != switchboard.PeerAgent || task.PeerLabel != "me" {
		t.Fatalf("the task's peer: %q %q", task.PeerKind, task.PeerLabel)
	}
	res := h.call(h.addr(worker), me, "GetTask", map[string]any{"id": id}).result(t)
	if res["id"] != id {
		t.Fatalf("GetTask: %v", res)
	}
	if r := h.owner("GET", "/tasks/"+id, me, nil); r.status != http.StatusOK {
		t.Fatalf("GET /tasks/{id}: %d %s", r.status, r.body)
	}
	r := h.call(h.addr(stranger), me, "SendMessage", userMessage("m2", "hi"))
	wantRPCError(t, r, http.StatusUnauthorized, -31401)
	// ListTasks at the address lists the agent's tasks there.
	res = h.call(h.addr(worker), me, "ListTasks", map[string]any{}).result(t)
	if n := len(res["tasks"].([]any)); n != 1 {
		t.Fatalf("ListTasks: %d tasks", n)
	}
}

// TestCommunityAddress: a community's address serves a card with its live
// members' skills, routes a peer's new task by discovery (by the skill in
// the message's metadata), lets the peer follow and continue its tasks
// there, and says no_agent_found when no member can take one.
func TestCommunityAddress(t *testing.T) {
	h := newHarness(t)
	_, alice := h.account("alice")
	_, bob := h.account("bob")
	coder, _ := h.netAgent(alice, "coder", "connector", "code", "lab")
	writer, _ := h.netAgent(alice, "writer", "connector", "prose", "lab")
	h.netAgent(alice, "sleeper", "connector", "dreams", "lab") // never connected
	h.live(coder)
	h.live(writer)
	addr := h.srv.URL + "/c/lab"
	// No agent answers here: every send returns at once.
	userMessage := func(id, text string) map[string]any {
		m := userMessage(id, text)
		m["configuration"] = map[string]any{"returnImmediately": true}
		return m
	}

	card := h.do("GET", addr+"/.well-known/agent-card.json", nil, "")
	if card.status != http.StatusOK || card.json["name"] != "Community lab" || card.json["url"] != addr {
		t.Fatalf("card: %d %s", card.status, card.body)
	}
	var ids []string
	for _, s := range card.json["skills"].([]any) {
		ids = append(ids, s.(map[string]any)["id"].(string))
	}
	if strings.Join(ids, ",") != "code,prose" {
		t.Fatalf("the card's skills: %v", ids)
	}
	if r := h.do("GET", h.srv.URL+"/c/nowhere/.well-known/agent.json", nil, ""); r.status != http.StatusNotFound {
		t.Fatalf("no such community: %d", r.status)
	}

	// Peer tokens: the owners of members issue them; others see nothing.
	if r := h.owner("POST", "/communities/lab/tokens", bob, map[string]any{"label": "carol"}); r.status != http.StatusNotFound {
		t.Fatalf("an owner with no member issues: %d %s", r.status, r.body)
	}
	r := h.owner("POST", "/communities/lab/tokens", alice, map[string]any{"label": "carol"})
	if r.status != http.StatusCreated || r.json["community"] != "lab" || r.json["address"] != addr {
		t.Fatalf("issue: %d %s", r.status, r.body)
	}
	carol := r.json["token"].(string)

	msg := userMessage("m1", "write me a poem")
	msg["message"].(map[string]any)["metadata"] = map[string]any{"skill": "prose"}
	res := h.call(addr, carol, "SendMessage", msg).result(t)
	task := res["task"].(map[string]any)
	id := task["id"].(string)
	stored, err := h.db.FindTaskByID(context.Background(), a2a.TaskID(id))
	must(t, err)
	if stored.AgentID != writer.ID || stored.PeerKind != switchboard.PeerCommunity || stored.PeerLabel != "carol" {
		t.Fatalf("routed to %s as %q %q", stored.AgentID, stored.PeerKind, stored.PeerLabel)
	}
	if got := h.call(addr, carol, "GetTask", map[string]any{"id": id}).result(t); got["id"] != id {
		t.Fatalf("GetTask: %v", got)
	}
	list := h.call(addr, carol, "ListTasks", map[string]any{}).result(t)
	if n := len(list["tasks"].([]any)); n != 1 {
		t.Fatalf("ListTasks: %d", n)
	}
	// The same message again returns the same task.
	if again := h.call(addr, carol, "SendMessage", msg).result(t)["task"].(map[string]any); again["id"] != id {
		t.Fatalf("a retry started task %v", again["id"])
	}
	// A follow-up goes to the task's agent, whatever the skill says.
	h.reply(id, a2a.TaskStateInputRequired, "which theme?")
	follow := userMessage("m2", "the sea")
	follow["message"].(map[string]any)["taskId"] = id
	follow["message"].(map[string]any)["metadata"] = map[string]any{"skill": "code"}
	if got := h.call(addr, carol, "SendMessage", follow).result(t)["task"].(map[string]any); got["id"] != id {
		t.Fatalf("follow-up: %v", got)
	}
	if got := h.call(addr, carol, "CancelTask", map[string]any{"id": id}).result(t); path(got, "status", "state") != "TASK_STATE_CANCELED" {
		t.Fatalf("cancel: %v", got)
	}
	// Without a skill, any live member; an agent token of a member works
	// too (and is not chosen itself).
	coderToken := h.owner("POST", "/agents/coder/agent-token", alice, nil).json["agent_token"].(string)
	for i := range 3 {
		res := h.call(addr, coderToken, "SendMessage", userMessage("c"+string(rune('0'+i)), "anyone")).result(t)
		got, err := h.db.FindTaskByID(context.Background(), a2a.TaskID(res["task"].(map[string]any)["id"].(string)))
		must(t, err)
		if got.AgentID != writer.ID || got.PeerKind != switchboard.PeerAgent {
			t.Fatalf("a member's send went to %s as %q", got.AgentID, got.PeerKind)
		}
	}

	// Nobody with the skill: no_agent_found, in either version's shape.
	none := userMessage("m3", "dream")
	none["message"].(map[string]any)["metadata"] = map[string]any{"skill": "dreams"}
	r = h.call(addr, carol, "SendMessage", none)
	wantRPCError(t, r, http.StatusOK, -32051)
	info := path(r.json, "error", "data").([]any)[0].(map[string]any)
	if info["reason"] != "NO_AGENT_FOUND" || path(info, "metadata", "reason") != "no_agent_found" ||
		!strings.Contains(path(info, "metadata", "detail").(string), "none live") {
		t.Fatalf("1.0 error data: %s", r.body)
	}
	legacy := legacyMessage("m4", "dream")
	legacy["message"].(map[string]any)["metadata"] = map[string]any{"skill": "dreams"}
	r = h.call(addr, carol, "message/send", legacy)
	if path(r.json, "error", "data", "reason") != "no_agent_found" {
		t.Fatalf("0.3 error data: %s", r.body)
	}

	// Credentials: a community token opens no agent's address, an agent's
	// peer token no community's, a revoked one nothing.
	wantRPCError(t, h.call(h.addr(coder), carol, "GetTask", map[string]any{"id": id}), http.StatusUnauthorized, -31401)
	if r := h.owner("DELETE", "/communities/lab/tokens/carol", alice, nil); r.status != http.StatusOK {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	wantRPCError(t, h.call(addr, carol, "GetTask", map[string]any{"id": id}), http.StatusUnauthorized, -31401)
	if r := h.owner("GET", "/communities/lab/tokens?all=1", alice, nil); !strings.Contains(string(r.body), `"active":false`) {
		t.Fatalf("list: %s", r.body)
	}
}

// TestDirectoryNeedsApprovalAPI: under --require-approval an unapproved
// agent's token reads no directory (403, as for its sends), and its owner
// sees nothing of the communities it is in, nor issues their tokens,
// until the operator approves it.
func TestDirectoryNeedsApprovalAPI(t *testing.T) {
	h := newHarness(t)
	h.network.RequireApproval = true
	_, alice := h.account("alice")
	h.netAgent(h.operatorToken, "mate", "connector", "code", "lab")
	_, newcomer := h.netAgent(alice, "newcomer", "connector", "", "lab")
	r := h.owner("GET", "/directory", newcomer, nil)
	if r.status != http.StatusForbidden || !strings.Contains(r.body2(), "not approved") {
		t.Fatalf("an unapproved agent's directory: %d %s", r.status, r.body)
	}
	directory := func(token string) int {
		t.Helper()
		r := h.owner("GET", "/directory", token, nil)
		if r.status != http.StatusOK {
			t.Fatalf("directory: %d %s", r.status, r.body)
		}
		var dir struct {
			Agents []map[string]any `json:"agents"`
		}
		mustJSON(t, r.body, &dir)
		return len(dir.Agents)
	}
	if n := directory(alice); n != 0 {
		t.Fatalf("the owner of an agent waiting for approval sees %d agents", n)
	}
	if r := h.owner("POST", "/communities/lab/tokens", alice, map[string]any{"label": "carol"}); r.status != http.StatusNotFound {
		t.Fatalf("an owner whose agent waits for approval issues a community token: %d %s", r.status, r.body)
	}
	if r := h.owner("POST", "/agents/newcomer/approve", h.operatorToken, nil); r.status != http.StatusOK {
		t.Fatalf("approve: %d %s", r.status, r.body)
	}
	if n := directory(newcomer); n != 1 {
		t.Fatalf("the approved agent sees %d agents", n)
	}
	if n := directory(alice); n != 2 {
		t.Fatalf("its owner sees %d agents", n)
	}
}
