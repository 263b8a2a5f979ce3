package agenthttp_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/facetest"
	"github.com/switchboard-dev/switchboard/internal/testwait"
)

func TestDirectoryAPI(t *testing.T) {
	h := facetest.New(t)
	_, alice := h.Account("alice")
	_, bob := h.Account("bob")
	_, me := h.NetAgent(alice, "me", "connector", "", "lab")
	mate, _ := h.NetAgent(bob, "mate", "connector", "code", "lab", "hidden")
	h.NetAgent(bob, "hook", "webhook", "prose", "lab")
	h.NetAgent(bob, "far", "connector", "code", "elsewhere")
	h.Live(mate)
	r := h.Owner("GET", "/directory", me, nil)
	var dir struct {
		Agents []map[string]any `json:"agents"`
	}
	facetest.MustJSON(t, r.Body, &dir)
	if r.Status != http.StatusOK || len(dir.Agents) != 2 {
		t.Fatalf("me's directory: %d %s", r.Status, r.Body)
	}
	e := dir.Agents[1]
	if e["handle"] != "mate" || e["live"] != true || e["approved"] != true || e["accepts_tasks"] != true ||
		!slices.Equal(facetest.Strings(e["communities"]), []string{"lab"}) || !strings.HasSuffix(e["card_url"].(string), "/a/mate/.well-known/agent-card.json") {
		t.Fatalf("mate's entry: %v", e)
	}
	if dir.Agents[0]["handle"] != "hook" || dir.Agents[0]["live"] != true {
		t.Fatalf("a healthy webhook agent: %v", dir.Agents[0])
	}
	facetest.MustJSON(t, h.Owner("GET", "/directory?skill=CODE&live=true", me, nil).Body, &dir)
	if len(dir.Agents) != 1 || dir.Agents[0]["handle"] != "mate" {
		t.Fatalf("live with code: %v", dir.Agents)
	}
	if r := h.Owner("GET", "/directory?community=elsewhere", me, nil); r.Status != http.StatusNotFound {
		t.Fatalf("a community not mine: %d %s", r.Status, r.Body)
	}
	if r := h.Owner("GET", "/directory?live=maybe", me, nil); r.Status != http.StatusBadRequest {
		t.Fatalf("a bad live: %d %s", r.Status, r.Body)
	}
	// Owners see their agents' communities (and their own agents).
	facetest.MustJSON(t, h.Owner("GET", "/directory", alice, nil).Body, &dir)
	if len(dir.Agents) != 3 {
		t.Fatalf("alice's directory: %v", dir.Agents)
	}
	facetest.MustJSON(t, h.Owner("GET", "/directory?limit=2", h.OperatorToken, nil).Body, &dir)
	r = h.Owner("GET", "/directory?limit=2", h.OperatorToken, nil)
	if len(dir.Agents) != 2 || !strings.Contains(string(r.Body), `"next_after":"hook"`) {
		t.Fatalf("the operator's first page: %s", r.Body)
	}
	// Liveness follows the session: a dropped one is gone from live=true.
	facetest.Must(t, h.DB.CloseSessions(context.Background(), []string{h.Live(mate)}))
	facetest.MustJSON(t, h.Owner("GET", "/directory?skill=code&live=true", me, nil).Body, &dir)
	if len(dir.Agents) != 0 {
		t.Fatalf("a dropped agent is listed live: %v", dir.Agents)
	}
}

// TestNetworkTasks: POST /tasks by name and by discovery, the 202 and the
// blocking answers, following with GET /tasks/{id}, and no_agent_found
// at once.
func TestNetworkTasks(t *testing.T) {
	h := facetest.New(t)
	_, alice := h.Account("alice")
	_, me := h.NetAgent(alice, "me", "connector", "", "lab")
	worker, _ := h.NetAgent(alice, "worker", "connector", "code", "lab")
	_, other := h.NetAgent(alice, "other", "connector", "", "lab")
	h.NetAgent(alice, "stranger", "connector", "code", "elsewhere")
	post := func(token string, body map[string]any) *facetest.Response {
		return h.Owner("POST", "/tasks", token, body)
	}

	// Nobody live: no_agent_found, at once.
	start := time.Now()
	r := post(me, map[string]any{"community": "lab", "skill": "code", "task_description": "fix it"})
	elapsed := time.Since(start)
	if r.Status != http.StatusNotFound || r.JSON["error"] != "no_agent_found" || !strings.Contains(r.JSON["reason"].(string), "none live") {
		t.Fatalf("nobody live: %d %s", r.Status, r.Body)
	}
	if elapsed > time.Second { // at once: never a wait (BenchmarkNoAgentFound measures it)
		t.Errorf("no_agent_found took %s", elapsed)
	}
	t.Logf("no_agent_found answered in %s", elapsed)

	h.Live(worker)
	r = post(me, map[string]any{"community": "lab", "skill": "code", "task_description": "fix it", "payload": map[string]any{"message": "the build"}})
	if r.Status != http.StatusAccepted || r.JSON["agent"] != "worker" {
		t.Fatalf("by discovery: %d %s", r.Status, r.Body)
	}
	id := r.JSON["task_id"].(string)
	task, err := h.DB.FindTaskByID(context.Background(), a2a.TaskID(id))
	facetest.Must(t, err)
	if got := switchboard.MessageText(task.A2A.History[0]); got != "fix it\nthe build" {
		t.Fatalf("the message: %q", got)
	}
	if task.PeerKind != switchboard.PeerAgent || task.PeerLabel != "me" {
		t.Fatalf("the task's peer: %q %q", task.PeerKind, task.PeerLabel)
	}
	if r := h.Owner("GET", "/tasks/"+id, me, nil); r.Status != http.StatusOK || r.JSON["agent"] != "worker" || r.JSON["from"] != "me" {
		t.Fatalf("the sender follows: %d %s", r.Status, r.Body)
	}
	if r := h.Owner("GET", "/tasks/"+id, other, nil); r.Status != http.StatusNotFound {
		t.Fatalf("another agent follows: %d %s", r.Status, r.Body)
	}

	// Blocking: the answer once the receiver finished.
	done := make(chan *facetest.Response, 1)
	go func() {
		done <- post(me, map[string]any{"to": "worker", "payload": map[string]any{"message": "now"}, "blocking": true, "timeout_seconds": 10})
	}()
	var blockingID a2a.TaskID
	testwait.For(t, "the blocking call's task", func() bool {
		tasks, _, err := h.DB.FindTasks(context.Background(), switchboard.TaskFilter{AgentID: &worker.ID, NoTotal: true})
		facetest.Must(t, err)
		for _, tk := range tasks {
			if a2a.TaskID(id) != tk.ID() {
				blockingID = tk.ID()
			}
		}
		return blockingID != ""
	})
	h.Reply(string(blockingID), a2a.TaskStateCompleted, "fixed")
	select {
	case r := <-done:
		if r.Status != http.StatusOK || r.JSON["status"] != "completed" || r.JSON["result"] != "fixed" ||
			r.JSON["agent"] != "worker" || r.JSON["task_id"] != string(blockingID) {
			t.Fatalf("blocking: %d %s", r.Status, r.Body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the blocking call did not answer")
	}
	// Blocking past its timeout: 202 with the state.
	r = post(me, map[string]any{"to": "worker", "payload": map[string]any{"message": "slow"}, "blocking": true, "timeout_seconds": 1})
	if r.Status != http.StatusAccepted || r.JSON["status"] != "submitted" {
		t.Fatalf("blocking past its timeout: %d %s", r.Status, r.Body)
	}

	// By name: a stranger reads as nobody; bad requests are 400.
	if r := post(me, map[string]any{"to": "stranger", "payload": map[string]any{"message": "hi"}}); r.Status != http.StatusNotFound || r.JSON["error"] != "no_agent_found" {
		t.Fatalf("to a stranger: %d %s", r.Status, r.Body)
	}
	if r := post(me, map[string]any{"to": "worker"}); r.Status != http.StatusBadRequest {
		t.Fatalf("no text: %d %s", r.Status, r.Body)
	}
	if r := post(me, map[string]any{"to": "worker", "payload": map[string]any{"message": "x"}, "timeout_seconds": 601}); r.Status != http.StatusBadRequest {
		t.Fatalf("too long a wait: %d %s", r.Status, r.Body)
	}
	// The owner sends as its agent, naming it, under the agent's rules;
	// another owner's agent is not found; an agent token names only its own.
	if r := post(alice, map[string]any{"to": "worker", "payload": map[string]any{"message": "x"}}); r.Status != http.StatusBadRequest {
		t.Fatalf("an owner token without agent: %d %s", r.Status, r.Body)
	}
	if r := post(alice, map[string]any{"agent": "me", "community": "lab", "skill": "code", "payload": map[string]any{"message": "x"}}); r.Status != http.StatusAccepted || r.JSON["agent"] != "worker" {
		t.Fatalf("the owner sends as me by discovery: %d %s", r.Status, r.Body)
	}
	if r := post(alice, map[string]any{"agent": "me", "to": "stranger", "payload": map[string]any{"message": "x"}}); r.Status != http.StatusNotFound || r.JSON["error"] != "no_agent_found" {
		t.Fatalf("the owner sends as me to a stranger: %d %s", r.Status, r.Body)
	}
	_, bob := h.Account("bob")
	if r := post(bob, map[string]any{"agent": "me", "to": "worker", "payload": map[string]any{"message": "x"}}); r.Status != http.StatusNotFound || r.JSON["error"] == "no_agent_found" {
		t.Fatalf("another owner sends as me: %d %s", r.Status, r.Body)
	}
	if r := post(me, map[string]any{"agent": "other", "to": "worker", "payload": map[string]any{"message": "x"}}); r.Status != http.StatusNotFound {
		t.Fatalf("an agent token naming another agent: %d %s", r.Status, r.Body)
	}
	// A retry with the same message_id returns the same task.
	a := post(me, map[string]any{"community": "lab", "payload": map[string]any{"message": "once"}, "message_id": "m-once"})
	b := post(me, map[string]any{"community": "lab", "payload": map[string]any{"message": "once"}, "message_id": "m-once"})
	if a.JSON["task_id"] != b.JSON["task_id"] || a.JSON["task_id"] == nil {
		t.Fatalf("a retry: %s then %s", a.Body, b.Body)
	}
	// An unapproved agent may not send.
	if r := h.Owner("POST", "/agents/me/unapprove", h.OperatorToken, nil); r.Status != http.StatusOK {
		t.Fatal(r.Status)
	}
	if r := post(me, map[string]any{"to": "worker", "payload": map[string]any{"message": "x"}}); r.Status != http.StatusForbidden {
		t.Fatalf("an unapproved sender: %d %s", r.Status, r.Body)
	}
}

// TestDirectoryNeedsApprovalAPI: under --require-approval an unapproved
// agent's token reads no directory (403, as for its sends), and its owner
// sees nothing of the communities it is in, nor issues their tokens,
// until the operator approves it.
func TestDirectoryNeedsApprovalAPI(t *testing.T) {
	h := facetest.New(t)
	h.Network.RequireApproval = true
	_, alice := h.Account("alice")
	h.NetAgent(h.OperatorToken, "mate", "connector", "code", "lab")
	_, newcomer := h.NetAgent(alice, "newcomer", "connector", "", "lab")
	r := h.Owner("GET", "/directory", newcomer, nil)
	if r.Status != http.StatusForbidden || !strings.Contains(r.Text(), "not approved") {
		t.Fatalf("an unapproved agent's directory: %d %s", r.Status, r.Body)
	}
	directory := func(token string) int {
		t.Helper()
		r := h.Owner("GET", "/directory", token, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("directory: %d %s", r.Status, r.Body)
		}
		var dir struct {
			Agents []map[string]any `json:"agents"`
		}
		facetest.MustJSON(t, r.Body, &dir)
		return len(dir.Agents)
	}
	if n := directory(alice); n != 0 {
		t.Fatalf("the owner of an agent waiting for approval sees %d agents", n)
	}
	if r := h.Owner("POST", "/communities/lab/tokens", alice, map[string]any{"label": "carol"}); r.Status != http.StatusNotFound {
		t.Fatalf("an owner whose agent waits for approval issues a community token: %d %s", r.Status, r.Body)
	}
	if r := h.Owner("POST", "/agents/newcomer/approve", h.OperatorToken, nil); r.Status != http.StatusOK {
		t.Fatalf("approve: %d %s", r.Status, r.Body)
	}
	if n := directory(newcomer); n != 1 {
		t.Fatalf("the approved agent sees %d agents", n)
	}
	if n := directory(alice); n != 2 {
		t.Fatalf("its owner sees %d agents", n)
	}
}
