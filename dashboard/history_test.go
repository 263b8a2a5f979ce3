package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/outbox"
	"github.com/switchboard-dev/switchboard/relay"
)

var nextLink = regexp.MustCompile(`<a href="([^"]+)" rel="next">`)

// TestHistory: an agent's finished tasks are listed newest first, 50 a
// page, with a link to the next; waiting tasks are not; another owner
// gets 404; a forged page token is refused.
func TestHistory(t *testing.T) {
	h := newHarness(t)
	alice, token := h.account("alice", switchboard.RoleOwner)
	_, bobToken := h.account("bob", switchboard.RoleOwner)
	g := h.agent(alice, "helper", "Helper", "")
	ctx := context.Background()
	var ids []a2a.TaskID
	for i := range relay.DefaultPageSize + 2 {
		peer := switchboard.Peer{AgentID: g.ID, ID: "peer-1", Label: "carol"}
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(fmt.Sprintf("task <%d>", i)))
		task, _, err := h.relay.SendMessage(ctx, g, peer, &a2a.SendMessageRequest{Message: msg}, switchboard.ProtocolV1)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID())
		if i == relay.DefaultPageSize+1 {
			break // the last one waits
		}
		if _, err := h.relay.ReplyToTask(ctx, task.ID(), relay.Reply{Text: "done", State: a2a.TaskStateCompleted}); err != nil {
			t.Fatal(err)
		}
	}
	c := h.client()
	c.signIn(token)
	if _, page := c.get("/dashboard/agents/helper"); !strings.Contains(page, `href="/dashboard/agents/helper/history"`) {
		t.Fatalf("no link to the history:\n%s", page)
	}
	res, page := c.get("/dashboard/agents/helper/history")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("history: %s", res.Status)
	}
	first := ids[relay.DefaultPageSize]
	if n := strings.Count(page, `<li data-task="`); n != relay.DefaultPageSize || !strings.Contains(page, `<li data-task="`+string(first)+`">`) {
		t.Fatalf("the first page lists %d tasks, or not the newest:\n%s", n, page)
	}
	if strings.Index(page, string(first)) > strings.Index(page, string(ids[relay.DefaultPageSize-1])) {
		t.Fatal("the first page is not newest first")
	}
	if strings.Contains(page, string(ids[relay.DefaultPageSize+1])) || strings.Contains(page, "task <") {
		t.Fatal("the history lists a waiting task, or peer text unescaped")
	}
	m := nextLink.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no link to the next page:\n%s", page)
	}
	res, page = c.get(strings.ReplaceAll(m[1], "&amp;", "&"))
	if res.StatusCode != http.StatusOK || strings.Count(page, `<li data-task="`) != 1 || !strings.Contains(page, string(ids[0])) || nextLink.MatchString(page) {
		t.Fatalf("the second page: %s\n%s", res.Status, page)
	}
	if res, _ := c.get("/dashboard/agents/helper/history?page=forged"); res.StatusCode != http.StatusBadRequest {
		t.Fatalf("a forged page token: %s", res.Status)
	}
	other := h.client()
	other.signIn(bobToken)
	if res, _ := other.get("/dashboard/agents/helper/history"); res.StatusCode != http.StatusNotFound {
		t.Fatalf("another owner's history: %s", res.Status)
	}
}

// TestOutbox: the outbox page lists what the agent sent on the network
// (tasks on other agents, naming them) and to other addresses (with the
// latest answer, escaped); another owner gets 404.
func TestOutbox(t *testing.T) {
	h := newHarness(t)
	alice, token := h.account("alice", switchboard.RoleOwner)
	_, bobToken := h.account("bob", switchboard.RoleOwner)
	g := h.agent(alice, "helper", "Helper", "")
	target := h.agent(alice, "writer", "Writer", "")
	ctx := context.Background()
	peer := switchboard.Peer{AgentID: target.ID, ID: g.ID, Label: g.Handle, Kind: switchboard.PeerAgent}
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("write <this>"))
	sent, _, err := h.relay.SendMessage(ctx, target, peer, &a2a.SendMessageRequest{Message: msg}, switchboard.ProtocolV1)
	if err != nil {
		t.Fatal(err)
	}
	o := &switchboard.Outbound{AgentID: g.ID, Target: "https://elsewhere.example/a/x", Endpoint: "https://elsewhere.example/a/x",
		Protocol: switchboard.ProtocolV1, Text: "hello there"}
	if err := h.outbox.Record(ctx, o, ""); err != nil {
		t.Fatal(err)
	}
	reply := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("<script>alert(1)</script>"))
	if _, err := h.outbox.Update(ctx, o.ID, outbox.OutboundResult{Source: switchboard.OutboundFromSend, Reply: reply}); err != nil {
		t.Fatal(err)
	}
	c := h.client()
	c.signIn(token)
	res, page := c.get("/dashboard/agents/helper/outbox")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("outbox: %s", res.Status)
	}
	for _, want := range []string{`<tr data-sent="` + string(sent.ID()) + `"><td>writer</td>`, "write &lt;this&gt;",
		`<tr data-outbound="` + o.ID + `">`, "hello there", "&lt;script&gt;alert(1)&lt;/script&gt;"} {
		if !strings.Contains(page, want) {
			t.Fatalf("the outbox lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "<script>alert") {
		t.Fatal("the answer is not escaped")
	}
	if _, page := c.get("/dashboard/agents/writer/outbox"); strings.Contains(page, string(sent.ID())) {
		t.Fatal("the target's outbox lists the task it was sent")
	}
	other := h.client()
	other.signIn(bobToken)
	if res, _ := other.get("/dashboard/agents/helper/outbox"); res.StatusCode != http.StatusNotFound {
		t.Fatalf("another owner's outbox: %s", res.Status)
	}
}
