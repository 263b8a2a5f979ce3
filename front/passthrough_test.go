package front

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/netguard"
)

// TestPassThroughKeepsPeersApart: through a pass-through front, a peer
// reaches the upstream's task only by the id it was given; another peer's
// every call on that id is "not found" without reaching the upstream.
// The answers are ours (ids) and without the front's credentials, and the
// upstream's refusal to cancel a finished task is the peer's answer.
func TestPassThroughKeepsPeersApart(t *testing.T) {
	u := newOneBinding(t, a2a.TransportProtocolHTTPJSON, true, false)
	opts := ClientOptions{Guard: netguard.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}},
		RootCAs: u.srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	const secret = "owner-secret-0123456789"
	store := &oneFront{f: switchboard.Front{AgentID: "a", Upstream: u.srv.URL + "/invoke", Record: switchboard.FrontRecordNone,
		Credentials: switchboard.FrontCredentials{Bearer: secret}, UpdatedAt: time.Now()}}
	s := NewService(store, nil, opts, 0, slog.New(slog.DiscardHandler))
	defer s.Close()
	ctx := context.Background()
	bob := switchboard.Peer{AgentID: "a", ID: "bob", Label: "bob"}
	carol := switchboard.Peer{AgentID: "a", ID: "carol", Label: "carol"}
	send := func(text string, task a2a.TaskID) *a2a.SendMessageRequest {
		m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
		m.TaskID = task
		return &a2a.SendMessageRequest{Message: m}
	}
	if ok, err := s.PassThrough(ctx, "a"); !ok || err != nil {
		t.Fatalf("PassThrough = %v, %v", ok, err)
	}

	q, err := s.PassSend(ctx, "a", bob, send("ask", ""))
	if err != nil || q.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("PassSend: %+v, %v", q, err)
	}
	if b, _ := json.Marshal(q); strings.Contains(string(b), secret) {
		t.Fatalf("the answer holds the front's credential: %s", b)
	}
	n := len(u.requests())
	notFound := func(what string, err error) {
		t.Helper()
		if switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
			t.Errorf("%s: got %v, want not found", what, err)
		}
	}
	_, err = s.PassGet(ctx, "a", carol, q.ID, nil)
	notFound("carol's GetTask", err)
	_, err = s.PassCancel(ctx, "a", carol, q.ID)
	notFound("carol's CancelTask", err)
	_, err = s.PassSend(ctx, "a", carol, send("blue", q.ID))
	notFound("carol's follow-up", err)
	notFound("carol's SubscribeToTask", s.PassSubscribe(ctx, "a", carol, q.ID, func(a2a.Event) (bool, error) { return true, nil }))
	_, err = s.PassGet(ctx, "other", bob, q.ID, nil)
	notFound("bob's GetTask on another agent", err)
	if got := len(u.requests()); got != n {
		t.Fatalf("%d calls reached the upstream for ids the caller was not given", got-n)
	}

	done, err := s.PassSend(ctx, "a", bob, send("blue", q.ID))
	if err != nil || done.ID != q.ID || done.ContextID != q.ContextID || done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("bob's follow-up: %+v, %v; want task %s completed", done, err, q.ID)
	}
	if !u.followUp {
		t.Fatal("the follow-up did not reach the upstream's task")
	}
	got, err := s.PassGet(ctx, "a", bob, q.ID, nil)
	if err != nil || got.ID != q.ID || got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("bob's GetTask: %+v, %v", got, err)
	}
	for _, m := range got.History {
		if m.TaskID != q.ID {
			t.Fatalf("a message of the history names task %s, want %s", m.TaskID, q.ID)
		}
	}
	if _, err := s.PassCancel(ctx, "a", bob, q.ID); switchboard.ErrorCode(err) != switchboard.ENOTCANCELABLE {
		t.Fatalf("cancel of a finished task: got %v, want not cancelable", err)
	}
}
