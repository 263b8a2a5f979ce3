package a2aedge_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/facetest"
)

// TestAgentTokenAtAddress: an agent that shares a community with another
// calls its address with its own agent token, as a peer that is the agent.
func TestAgentTokenAtAddress(t *testing.T) {
	h := facetest.New(t)
	_, alice := h.Account("alice")
	_, me := h.NetAgent(alice, "me", "connector", "", "lab")
	worker, _ := h.NetAgent(alice, "worker", "inbox", "", "lab")
	stranger, _ := h.NetAgent(alice, "stranger", "inbox", "", "elsewhere")
	id := h.Send(worker, me, "m1", "hello worker")
	task, err := h.DB.FindTaskByID(context.Background(), a2a.TaskID(id))
	facetest.Must(t, err)
	if task.PeerKind != switchboard.PeerAgent || task.PeerLabel != "me" {
		t.Fatalf("the task's peer: %q %q", task.PeerKind, task.PeerLabel)
	}
	res := h.Call(h.Addr(worker), me, "GetTask", map[string]any{"id": id}).Result(t)
	if res["id"] != id {
		t.Fatalf("GetTask: %v", res)
	}
	if r := h.Owner("GET", "/tasks/"+id, me, nil); r.Status != http.StatusOK {
		t.Fatalf("GET /tasks/{id}: %d %s", r.Status, r.Body)
	}
	r := h.Call(h.Addr(stranger), me, "SendMessage", facetest.UserMessage("m2", "hi"))
	facetest.WantRPCError(t, r, http.StatusUnauthorized, -31401)
	// ListTasks at the address lists the agent's tasks there.
	res = h.Call(h.Addr(worker), me, "ListTasks", map[string]any{}).Result(t)
	if n := len(res["tasks"].([]any)); n != 1 {
		t.Fatalf("ListTasks: %d tasks", n)
	}
}

// TestCommunityAddress: a community's address serves a card with its live
// members' skills, routes a peer's new task by discovery (by the skill in
// the message's metadata), lets the peer follow and continue its tasks
// there, and says no_agent_found when no member can take one.
func TestCommunityAddress(t *testing.T) {
	h := facetest.New(t)
	_, alice := h.Account("alice")
	_, bob := h.Account("bob")
	coder, _ := h.NetAgent(alice, "coder", "connector", "code", "lab")
	writer, _ := h.NetAgent(alice, "writer", "connector", "prose", "lab")
	h.NetAgent(alice, "sleeper", "connector", "dreams", "lab") // never connected
	h.Live(coder)
	h.Live(writer)
	addr := h.Server.URL + "/c/lab"
	// No agent answers here: every send returns at once.
	userMessage := func(id, text string) map[string]any {
		m := facetest.UserMessage(id, text)
		m["configuration"] = map[string]any{"returnImmediately": true}
		return m
	}

	card := h.Do("GET", addr+"/.well-known/agent-card.json", nil, "")
	if card.Status != http.StatusOK || card.JSON["name"] != "Community lab" || card.JSON["url"] != addr {
		t.Fatalf("card: %d %s", card.Status, card.Body)
	}
	var ids []string
	for _, s := range card.JSON["skills"].([]any) {
		ids = append(ids, s.(map[string]any)["id"].(string))
	}
	if strings.Join(ids, ",") != "code,prose" {
		t.Fatalf("the card's skills: %v", ids)
	}
	if r := h.Do("GET", h.Server.URL+"/c/nowhere/.well-known/agent.json", nil, ""); r.Status != http.StatusNotFound {
		t.Fatalf("no such community: %d", r.Status)
	}

	// Peer tokens: the owners of members issue them; others see nothing.
	if r := h.Owner("POST", "/communities/lab/tokens", bob, map[string]any{"label": "carol"}); r.Status != http.StatusNotFound {
		t.Fatalf("an owner with no member issues: %d %s", r.Status, r.Body)
	}
	r := h.Owner("POST", "/communities/lab/tokens", alice, map[string]any{"label": "carol"})
	if r.Status != http.StatusCreated || r.JSON["community"] != "lab" || r.JSON["address"] != addr {
		t.Fatalf("issue: %d %s", r.Status, r.Body)
	}
	carol := r.JSON["token"].(string)

	msg := userMessage("m1", "write me a poem")
	msg["message"].(map[string]any)["metadata"] = map[string]any{"skill": "prose"}
	res := h.Call(addr, carol, "SendMessage", msg).Result(t)
	task := res["task"].(map[string]any)
	id := task["id"].(string)
	stored, err := h.DB.FindTaskByID(context.Background(), a2a.TaskID(id))
	facetest.Must(t, err)
	if stored.AgentID != writer.ID || stored.PeerKind != switchboard.PeerCommunity || stored.PeerLabel != "carol" {
		t.Fatalf("routed to %s as %q %q", stored.AgentID, stored.PeerKind, stored.PeerLabel)
	}
	if got := h.Call(addr, carol, "GetTask", map[string]any{"id": id}).Result(t); got["id"] != id {
		t.Fatalf("GetTask: %v", got)
	}
	list := h.Call(addr, carol, "ListTasks", map[string]any{}).Result(t)
	if n := len(list["tasks"].([]any)); n != 1 {
		t.Fatalf("ListTasks: %d", n)
	}
	// The same message again returns the same task.
	if again := h.Call(addr, carol, "SendMessage", msg).Result(t)["task"].(map[string]any); again["id"] != id {
		t.Fatalf("a retry started task %v", again["id"])
	}
	// A follow-up goes to the task's agent, whatever the skill says.
	h.Reply(id, a2a.TaskStateInputRequired, "which theme?")
	follow := userMessage("m2", "the sea")
	follow["message"].(map[string]any)["taskId"] = id
	follow["message"].(map[string]any)["metadata"] = map[string]any{"skill": "code"}
	if got := h.Call(addr, carol, "SendMessage", follow).Result(t)["task"].(map[string]any); got["id"] != id {
		t.Fatalf("follow-up: %v", got)
	}
	if got := h.Call(addr, carol, "CancelTask", map[string]any{"id": id}).Result(t); facetest.Path(got, "status", "state") != "TASK_STATE_CANCELED" {
		t.Fatalf("cancel: %v", got)
	}
	// Without a skill, any live member; an agent token of a member works
	// too (and is not chosen itself).
	coderToken := h.Owner("POST", "/agents/coder/agent-token", alice, nil).JSON["agent_token"].(string)
	for i := range 3 {
		res := h.Call(addr, coderToken, "SendMessage", userMessage("c"+string(rune('0'+i)), "anyone")).Result(t)
		got, err := h.DB.FindTaskByID(context.Background(), a2a.TaskID(res["task"].(map[string]any)["id"].(string)))
		facetest.Must(t, err)
		if got.AgentID != writer.ID || got.PeerKind != switchboard.PeerAgent {
			t.Fatalf("a member's send went to %s as %q", got.AgentID, got.PeerKind)
		}
	}

	// Nobody with the skill: no_agent_found, in either version's shape.
	none := userMessage("m3", "dream")
	none["message"].(map[string]any)["metadata"] = map[string]any{"skill": "dreams"}
	r = h.Call(addr, carol, "SendMessage", none)
	facetest.WantRPCError(t, r, http.StatusOK, -32051)
	info := facetest.Path(r.JSON, "error", "data").([]any)[0].(map[string]any)
	if info["reason"] != "NO_AGENT_FOUND" || facetest.Path(info, "metadata", "reason") != "no_agent_found" ||
		!strings.Contains(facetest.Path(info, "metadata", "detail").(string), "none live") {
		t.Fatalf("1.0 error data: %s", r.Body)
	}
	legacy := facetest.LegacyMessage("m4", "dream")
	legacy["message"].(map[string]any)["metadata"] = map[string]any{"skill": "dreams"}
	r = h.Call(addr, carol, "message/send", legacy)
	if facetest.Path(r.JSON, "error", "data", "reason") != "no_agent_found" {
		t.Fatalf("0.3 error data: %s", r.Body)
	}

	// Credentials: a community token opens no agent's address, an agent's
	// peer token no community's, a revoked one nothing.
	facetest.WantRPCError(t, h.Call(h.Addr(coder), carol, "GetTask", map[string]any{"id": id}), http.StatusUnauthorized, -31401)
	if r := h.Owner("DELETE", "/communities/lab/tokens/carol", alice, nil); r.Status != http.StatusOK {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	facetest.WantRPCError(t, h.Call(addr, carol, "GetTask", map[string]any{"id": id}), http.StatusUnauthorized, -31401)
	if r := h.Owner("GET", "/communities/lab/tokens?all=1", alice, nil); !strings.Contains(string(r.Body), `"active":false`) {
		t.Fatalf("list: %s", r.Body)
	}
}
