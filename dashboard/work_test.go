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

// TestInboxAndReply: the inbox lists a waiting task with its sender and
// text (escaped, marked untrusted), the task's page shows the
// conversation, and a reply through the form completes the task as
// POST /tasks/{id}/reply does; another owner cannot see it.
func TestInboxAndReply(t *testing.T) {
	h := newHarness(t)
	alice, token := h.account("alice", switchboard.RoleOwner)
	_, bobToken := h.account("bob", switchboard.RoleOwner)
	g := h.agent(alice, "helper", "Helper", "")
	ctx := context.Background()
	peer := switchboard.Peer{AgentID: g.ID, ID: "peer-1", Label: `<b>carol</b>`}
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(`<script>alert("text")</script> please`))
	task, _, err := h.relay.SendMessage(ctx, g, peer, &a2a.SendMessageRequest{Message: msg}, switchboard.ProtocolV1)
	if err != nil {
		t.Fatal(err)
	}
	c := h.client()
	c.signIn(token)
	res, page := c.get("/dashboard/agents/helper/inbox")
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `data-task="`+string(task.ID())+`"`) {
		t.Fatalf("inbox: %s\n%s", res.Status, page)
	}
	for _, raw := range []string{"<script>alert", "<b>carol"} {
		if strings.Contains(page, raw) {
			t.Fatalf("the inbox holds %q unescaped", raw)
		}
	}
	if !strings.Contains(page, `&lt;script&gt;alert(&#34;text&#34;)&lt;/script&gt; please`) || !strings.Contains(page, "untrusted peer text") {
		t.Fatalf("the inbox does not show the text as untrusted text:\n%s", page)
	}

	res, page = c.get("/dashboard/tasks/" + string(task.ID()))
	if res.StatusCode != http.StatusOK || strings.Contains(page, "<script>alert") || !strings.Contains(page, `action="/dashboard/tasks/`+string(task.ID())+`/reply"`) {
		t.Fatalf("task page: %s\n%s", res.Status, page)
	}
	other := h.client()
	otherPage := other.signIn(bobToken)
	if res, _ := other.get("/dashboard/tasks/" + string(task.ID())); res.StatusCode != http.StatusNotFound {
		t.Fatalf("another owner's task: %s", res.Status)
	}
	form := url.Values{"csrf": {csrf(t, page)}, "text": {"done <i>here</i>"}, "state": {"completed"}}
	if res, _ := other.post("/dashboard/tasks/"+string(task.ID())+"/reply", url.Values{"csrf": {csrf(t, otherPage)}, "text": {"x"}, "state": {"completed"}}); res.StatusCode != http.StatusNotFound {
		t.Fatalf("another owner's reply: %s", res.Status)
	}
	if res, _ := c.post("/dashboard/tasks/"+string(task.ID())+"/reply", url.Values{"csrf": form["csrf"], "text": {"x"}, "state": {"maybe"}}); res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("a reply with a bad state: %s", res.Status)
	}
	res, _ = c.post("/dashboard/tasks/"+string(task.ID())+"/reply", form)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("reply: %s", res.Status)
	}
	got, err := h.relay.FindTaskUnscoped(ctx, task.ID())
	if err != nil || got.State() != a2a.TaskStateCompleted {
		t.Fatalf("after the reply: %v %v", got.State(), err)
	}
	_, page = c.get("/dashboard/tasks/" + string(task.ID()))
	if !strings.Contains(page, "done &lt;i&gt;here&lt;/i&gt;") || strings.Contains(page, `/reply"`) {
		t.Fatalf("the finished task's page:\n%s", page)
	}
	if _, page = c.get("/dashboard/agents/helper/inbox"); strings.Contains(page, string(task.ID())) {
		t.Fatal("the answered task is still in the inbox")
	}
}
