package dashboard_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/push"
	"github.com/switchboard-dev/switchboard/relay"
)

// TestTaskPushes: a task's page shows the peer's push configuration with
// its key and token masked, and each push with its attempts, once the
// sender has tried; another owner cannot see the task.
func TestTaskPushes(t *testing.T) {
	h := newHarness(t)
	alice, token := h.account("alice", switchboard.RoleOwner)
	_, bobToken := h.account("bob", switchboard.RoleOwner)
	g := h.agent(alice, "helper", "Helper", "")
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(recv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = h.pushes.Run(ctx, push.SendConfig{Poll: 20 * time.Millisecond})
	}()
	t.Cleanup(func() { cancel(); <-done })

	const pushToken = "peer-push-token-0123456789"
	peer := switchboard.Peer{AgentID: g.ID, ID: "peer-1", Label: "carol"}
	req := &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("tell me")),
		Config: &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: recv.URL + "/hook?key=abc", Token: pushToken}}}
	task, _, err := h.relay.SendMessage(ctx, g, peer, req, switchboard.ProtocolV1)
	if err != nil {
		t.Fatal(err)
	}
	c := h.client()
	c.signIn(token)
	_, page := c.get("/dashboard/tasks/" + string(task.ID()))
	if !strings.Contains(page, "<h2>Push notifications</h2>") || !strings.Contains(page, recv.URL+"/hook?…") {
		t.Fatalf("the task's page lacks its push configuration:\n%s", page)
	}
	if _, err := h.relay.ReplyToTask(ctx, task.ID(), relay.Reply{Text: "working", State: a2a.TaskStateWorking}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "a push attempt", func() bool {
		hist, err := h.pushes.History(ctx, task.ID())
		return err == nil && len(hist.Attempts) > 0
	})
	_, page = c.get("/dashboard/tasks/" + string(task.ID()))
	for _, secret := range []string{"key=abc", pushToken} {
		if strings.Contains(page, secret) {
			t.Fatalf("the page shows %q", secret)
		}
	}
	if !strings.Contains(page, `aria-label="push of the working state"`) || !strings.Contains(page, "<td>HTTP 503</td>") {
		t.Fatalf("the push and its attempt are not shown:\n%s", page)
	}
	other := h.client()
	other.signIn(bobToken)
	if res, _ := other.get("/dashboard/tasks/" + string(task.ID())); res.StatusCode != http.StatusNotFound {
		t.Fatalf("another owner's task: %s", res.Status)
	}
}
