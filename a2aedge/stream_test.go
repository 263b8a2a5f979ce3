package a2aedge_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/internal/facetest"
)

func TestV1SendStreamingMessage(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	bob := h.PeerToken(g, "bob")

	events, resp := h.Stream(h.Addr(g), bob, "SendStreamingMessage", facetest.UserMessage("m1", "stream"))
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	first := facetest.Next(t, events)
	task, ok := facetest.Path(first.Data, "result", "task").(map[string]any)
	if !ok || first.ID != "1" || facetest.Path(task, "status", "state") != "TASK_STATE_SUBMITTED" {
		t.Fatalf("first event: %+v", first)
	}
	id := task["id"].(string)

	h.Reply(id, a2a.TaskStateWorking, "on it")
	ev := facetest.Next(t, events)
	if ev.ID != "2" || facetest.Path(ev.Data, "result", "statusUpdate", "status", "state") != "TASK_STATE_WORKING" || ev.Data["id"] != "s-1" {
		t.Fatalf("working event: %+v", ev)
	}
	h.Reply(id, a2a.TaskStateCompleted, "done")
	art := facetest.Next(t, events)
	if art.ID != "3" || facetest.Path(art.Data, "result", "artifactUpdate", "artifact", "parts") == nil {
		t.Fatalf("artifact event: %+v", art)
	}
	final := facetest.Next(t, events)
	if final.ID != "4" || facetest.Path(final.Data, "result", "statusUpdate", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Fatalf("final event: %+v", final)
	}
	facetest.Ended(t, events)
}

func TestV1StreamEndsAtInputRequired(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	bob := h.PeerToken(g, "bob")
	events, _ := h.Stream(h.Addr(g), bob, "SendStreamingMessage", facetest.UserMessage("m1", "stream"))
	id := facetest.Path(facetest.Next(t, events).Data, "result", "task", "id").(string)
	h.Reply(id, a2a.TaskStateInputRequired, "which?")
	if ev := facetest.Next(t, events); facetest.Path(ev.Data, "result", "statusUpdate", "status", "state") != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("event %+v", ev)
	}
	facetest.Ended(t, events)

	// Subscribing to the waiting task works and lasts until the next turn ends.
	sub, _ := h.Stream(h.Addr(g), bob, "SubscribeToTask", map[string]any{"id": id})
	snap := facetest.Next(t, sub)
	if facetest.Path(snap.Data, "result", "task", "status", "state") != "TASK_STATE_INPUT_REQUIRED" || snap.ID != "2" {
		t.Fatalf("snapshot %+v", snap)
	}
	follow := facetest.UserMessage("m2", "that one")
	follow["message"].(map[string]any)["taskId"] = id
	h.Call(h.Addr(g), bob, "SendMessage", follow).Result(t)
	if ev := facetest.Next(t, sub); facetest.Path(ev.Data, "result", "statusUpdate", "status", "state") != "TASK_STATE_SUBMITTED" {
		t.Fatalf("follow-up event %+v", ev)
	}
	h.Reply(id, a2a.TaskStateCompleted, "done")
	facetest.Next(t, sub) // artifact
	if ev := facetest.Next(t, sub); facetest.Path(ev.Data, "result", "statusUpdate", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Fatalf("completion %+v", ev)
	}
	facetest.Ended(t, sub)
}

func TestSubscribeErrors(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	bob, carol := h.PeerToken(g, "bob"), h.PeerToken(g, "carol")
	id := h.Send(g, bob, "m1", "x")

	for name, tc := range map[string]struct {
		token, method string
		params        any
		code          int
	}{
		"NotFound":     {bob, "SubscribeToTask", map[string]any{"id": "nope"}, -32001},
		"NotYours":     {carol, "SubscribeToTask", map[string]any{"id": id}, -32001},
		"NoID":         {bob, "SubscribeToTask", map[string]any{}, -32602},
		"V03NotFound":  {bob, "tasks/resubscribe", map[string]any{"id": "nope"}, -32001},
		"StreamNoMsg":  {bob, "SendStreamingMessage", map[string]any{}, -32602},
		"V03StreamBad": {bob, "message/stream", map[string]any{"message": map[string]any{"role": "user"}}, -32602},
	} {
		t.Run(name, func(t *testing.T) {
			events, resp := h.Stream(h.Addr(g), tc.token, tc.method, tc.params)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("status %d, %s", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			ev := facetest.Next(t, events)
			if c, _ := facetest.Path(ev.Data, "error", "code").(float64); int(c) != tc.code {
				t.Fatalf("error event %+v, want code %d", ev, tc.code)
			}
			facetest.Ended(t, events)
		})
	}
	t.Run("Terminal", func(t *testing.T) {
		h.Reply(id, a2a.TaskStateCompleted, "done")
		events, _ := h.Stream(h.Addr(g), bob, "SubscribeToTask", map[string]any{"id": id})
		if c, _ := facetest.Path(facetest.Next(t, events).Data, "error", "code").(float64); c != -32004 {
			t.Fatalf("code %v, want -32004", c)
		}
		facetest.Ended(t, events)
	})
}

// TestLastEventIDReplay checks the resume extension: a client that
// reconnects with Last-Event-ID gets exactly the events it missed, even
// after the task finished.
func TestLastEventIDReplay(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	bob := h.PeerToken(g, "bob")
	id := h.Send(g, bob, "m1", "x")          // event 1: the task
	h.Reply(id, a2a.TaskStateWorking, "a")   // event 2
	h.Reply(id, a2a.TaskStateWorking, "b")   // event 3
	h.Reply(id, a2a.TaskStateCompleted, "c") // events 4 (artifact) and 5 (status)

	events, _ := h.Stream(h.Addr(g), bob, "SubscribeToTask", map[string]any{"id": id}, "Last-Event-ID", "2")
	var ids []string
	for _, want := range []string{"statusUpdate", "artifactUpdate", "statusUpdate"} {
		ev := facetest.Next(t, events)
		if facetest.Path(ev.Data, "result", want) == nil {
			t.Fatalf("event %s is not a %s: %v", ev.ID, want, ev.Data)
		}
		ids = append(ids, ev.ID)
	}
	facetest.Ended(t, events)
	if fmt.Sprint(ids) != "[3 4 5]" {
		t.Fatalf("replayed %v, want [3 4 5]", ids)
	}

	// Nothing missed: one final snapshot, then the end.
	events, _ = h.Stream(h.Addr(g), bob, "SubscribeToTask", map[string]any{"id": id}, "Last-Event-ID", "5")
	if ev := facetest.Next(t, events); facetest.Path(ev.Data, "result", "task", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Fatalf("caught-up resume: %+v", ev)
	}
	facetest.Ended(t, events)

	// From the start, in 0.3 shapes, with final on the last status update.
	events, _ = h.Stream(h.Addr(g), bob, "tasks/resubscribe", map[string]any{"id": id}, "Last-Event-ID", "0")
	kinds := []string{}
	var last facetest.Event
	for range 5 {
		last = facetest.Next(t, events)
		kinds = append(kinds, fmt.Sprint(facetest.Path(last.Data, "result", "kind")))
	}
	facetest.Ended(t, events)
	if fmt.Sprint(kinds) != "[task status-update status-update artifact-update status-update]" || facetest.Path(last.Data, "result", "final") != true {
		t.Fatalf("0.3 replay kinds %v, last %v", kinds, last.Data)
	}

	for _, bad := range []string{"6", "-1", "abc"} {
		events, _ = h.Stream(h.Addr(g), bob, "SubscribeToTask", map[string]any{"id": id}, "Last-Event-ID", bad)
		if c, _ := facetest.Path(facetest.Next(t, events).Data, "error", "code").(float64); c != -32602 {
			t.Fatalf("Last-Event-ID %s: code %v", bad, c)
		}
	}
}

func TestV03MessageStream(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	bob := h.PeerToken(g, "bob")
	events, _ := h.Stream(h.Addr(g), bob, "message/stream", facetest.LegacyMessage("m1", "x"))
	first := facetest.Next(t, events)
	if facetest.Path(first.Data, "result", "kind") != "task" || facetest.Path(first.Data, "result", "status", "state") != "submitted" {
		t.Fatalf("first %+v", first)
	}
	id := facetest.Path(first.Data, "result", "id").(string)
	h.Reply(id, a2a.TaskStateFailed, "cannot")
	ev := facetest.Next(t, events)
	if facetest.Path(ev.Data, "result", "kind") != "status-update" || facetest.Path(ev.Data, "result", "final") != true ||
		facetest.Path(ev.Data, "result", "status", "state") != "failed" {
		t.Fatalf("final event %+v", ev)
	}
	facetest.Ended(t, events)
}

// TestConcurrentSubscribers checks that every stream of a task gets the
// same events in the same order.
func TestConcurrentSubscribers(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	bob := h.PeerToken(g, "bob")
	id := h.Send(g, bob, "m1", "x")
	const n = 5
	streams := make([]<-chan facetest.Event, n)
	for i := range streams {
		streams[i], _ = h.Stream(h.Addr(g), bob, "SubscribeToTask", map[string]any{"id": id})
		facetest.Next(t, streams[i]) // snapshot
	}
	for range 3 {
		h.Reply(id, a2a.TaskStateWorking, "progress")
	}
	h.Reply(id, a2a.TaskStateCompleted, "done")
	var wg sync.WaitGroup
	got := make([]string, n)
	for i, s := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ids []string
			for ev := range s {
				ids = append(ids, ev.ID)
			}
			got[i] = fmt.Sprint(ids)
		}()
	}
	wg.Wait()
	for i, g := range got {
		if g != "[2 3 4 5 6]" {
			t.Fatalf("stream %d got %s", i, g)
		}
	}
}

// TestSendStreamResume checks a client that lost its send stream and sends
// the same message again with Last-Event-ID.
func TestSendStreamResume(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	bob := h.PeerToken(g, "bob")
	msg := facetest.UserMessage("m1", "stream")
	events, _ := h.Stream(h.Addr(g), bob, "SendStreamingMessage", msg)
	id := facetest.Path(facetest.Next(t, events).Data, "result", "task", "id").(string)
	h.Reply(id, a2a.TaskStateWorking, "a") // event 2
	facetest.Next(t, events)

	// Dropped after event 2; the answer comes meanwhile (events 3, 4).
	h.Reply(id, a2a.TaskStateCompleted, "done")
	resumed, _ := h.Stream(h.Addr(g), bob, "SendStreamingMessage", msg, "Last-Event-ID", "2")
	var ids []string
	for ev := range resumed {
		ids = append(ids, ev.ID)
	}
	if fmt.Sprint(ids) != "[3 4]" {
		t.Fatalf("resumed send stream: %v", ids)
	}

	// Caught up with a finished task: the end, not a hang.
	caught, _ := h.Stream(h.Addr(g), bob, "SendStreamingMessage", msg, "Last-Event-ID", "4")
	if ev := facetest.Next(t, caught); facetest.Path(ev.Data, "result", "task", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Fatalf("caught-up resume: %+v", ev)
	}
	facetest.Ended(t, caught)

	// Beyond the log: an error, not a hang.
	ahead, _ := h.Stream(h.Addr(g), bob, "SendStreamingMessage", msg, "Last-Event-ID", "99")
	if c, _ := facetest.Path(facetest.Next(t, ahead).Data, "error", "code").(float64); c != -32602 {
		t.Fatalf("Last-Event-ID ahead: code %v", c)
	}
	facetest.Ended(t, ahead)

	// With a new message the header means nothing: a normal stream.
	fresh, _ := h.Stream(h.Addr(g), bob, "SendStreamingMessage", facetest.UserMessage("m2", "new"), "Last-Event-ID", "7")
	if ev := facetest.Next(t, fresh); ev.ID != "1" || facetest.Path(ev.Data, "result", "task", "status", "state") != "TASK_STATE_SUBMITTED" {
		t.Fatalf("new message with Last-Event-ID: %+v", ev)
	}
}

// TestCloseStreamsEndsStreams checks that a shutdown does not wait for open
// streams.
func TestCloseStreamsEndsStreams(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	bob := h.PeerToken(g, "bob")
	events, _ := h.Stream(h.Addr(g), bob, "SendStreamingMessage", facetest.UserMessage("m1", "x"))
	facetest.Next(t, events)
	h.API.CloseStreams()
	for {
		select {
		case _, ok := <-events:
			if !ok {
				return
			}
		case <-time.After(5 * time.Second):
			t.Fatal("stream still open after CloseStreams")
		}
	}
}

func TestStreamLimits(t *testing.T) {
	h := facetest.New(t, facetest.WithConfig(func(c *httpapi.Config) { c.MaxStreamsPerPeer = 2 }))
	g := h.Agent("alice")
	bob, carol := h.PeerToken(g, "bob"), h.PeerToken(g, "carol")
	id := h.Send(g, bob, "m1", "x")
	for range 2 {
		s, _ := h.Stream(h.Addr(g), bob, "SubscribeToTask", map[string]any{"id": id})
		facetest.Next(t, s)
	}
	r := h.Call(h.Addr(g), bob, "SubscribeToTask", map[string]any{"id": id})
	facetest.WantRPCError(t, r, http.StatusTooManyRequests, -32000)
	if r.Header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
	// Other peers are not limited by bob's streams; unary calls neither.
	cid := h.Send(g, carol, "m2", "y")
	s, _ := h.Stream(h.Addr(g), carol, "SubscribeToTask", map[string]any{"id": cid})
	facetest.Next(t, s)
	h.Call(h.Addr(g), bob, "GetTask", map[string]any{"id": id}).Result(t)
}

func TestStreamEndsWhenTokenRevoked(t *testing.T) {
	h := facetest.New(t) // keep-alive every 50 ms
	g := h.Agent("alice")
	bob := h.PeerToken(g, "bob")
	id := h.Send(g, bob, "m1", "x")
	s, _ := h.Stream(h.Addr(g), bob, "SubscribeToTask", map[string]any{"id": id})
	facetest.Next(t, s)
	kind, label := switchboard.TokenPeer, "bob"
	_, err := h.DB.RevokeTokens(context.Background(), switchboard.TokenFilter{Kind: &kind, AgentID: &g.ID, Label: &label})
	facetest.Must(t, err)
	if c, _ := facetest.Path(facetest.Next(t, s).Data, "error", "code").(float64); c != -31401 {
		t.Fatalf("revoked stream got code %v", c)
	}
	facetest.Ended(t, s)
}

func TestStreamMaxDuration(t *testing.T) {
	h := facetest.New(t, facetest.WithConfig(func(c *httpapi.Config) { c.StreamMaxDuration = 200 * time.Millisecond }))
	g := h.Agent("alice")
	bob := h.PeerToken(g, "bob")
	s, _ := h.Stream(h.Addr(g), bob, "SendStreamingMessage", facetest.UserMessage("m1", "x"))
	facetest.Next(t, s)
	facetest.Ended(t, s)
}
