package httpapi_test

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
)

func TestV1SendStreamingMessage(t *testing.T) {
	h := newHarness(t)
	g := h.agent("alice")
	bob := h.peerToken(g, "bob")

	events, resp := h.stream(h.addr(g), bob, "SendStreamingMessage", userMessage("m1", "stream"))
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	first := next(t, events)
	task, ok := path(first.data, "result", "task").(map[string]any)
	if !ok || first.id != "1" || path(task, "status", "state") != "TASK_STATE_SUBMITTED" {
		t.Fatalf("first event: %+v", first)
	}
	id := task["id"].(string)

	h.reply(id, a2a.TaskStateWorking, "on it")
	ev := next(t, events)
	if ev.id != "2" || path(ev.data, "result", "statusUpdate", "status", "state") != "TASK_STATE_WORKING" || ev.data["id"] != "s-1" {
		t.Fatalf("working event: %+v", ev)
	}
	h.reply(id, a2a.TaskStateCompleted, "done")
	art := next(t, events)
	if art.id != "3" || path(art.data, "result", "artifactUpdate", "artifact", "parts") == nil {
		t.Fatalf("artifact event: %+v", art)
	}
	final := next(t, events)
	if final.id != "4" || path(final.data, "result", "statusUpdate", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Fatalf("final event: %+v", final)
	}
	ended(t, events)
}

func TestV1StreamEndsAtInputRequired(t *testing.T) {
	h := newHarness(t)
	g := h.agent("alice")
	bob := h.peerToken(g, "bob")
	events, _ := h.stream(h.addr(g), bob, "SendStreamingMessage", userMessage("m1", "stream"))
	id := path(next(t, events).data, "result", "task", "id").(string)
	h.reply(id, a2a.TaskStateInputRequired, "which?")
	if ev := next(t, events); path(ev.data, "result", "statusUpdate", "status", "state") != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("event %+v", ev)
	}
	ended(t, events)

	// Subscribing to the waiting task works and lasts until the next turn ends.
	sub, _ := h.stream(h.addr(g), bob, "SubscribeToTask", map[string]any{"id": id})
	snap := next(t, sub)
	if path(snap.data, "result", "task", "status", "state") != "TASK_STATE_INPUT_REQUIRED" || snap.id != "2" {
		t.Fatalf("snapshot %+v", snap)
	}
	follow := userMessage("m2", "that one")
	follow["message"].(map[string]any)["taskId"] = id
	h.call(h.addr(g), bob, "SendMessage", follow).result(t)
	if ev := next(t, sub); path(ev.data, "result", "statusUpdate", "status", "state") != "TASK_STATE_SUBMITTED" {
		t.Fatalf("follow-up event %+v", ev)
	}
	h.reply(id, a2a.TaskStateCompleted, "done")
	next(t, sub) // artifact
	if ev := next(t, sub); path(ev.data, "result", "statusUpdate", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Fatalf("completion %+v", ev)
	}
	ended(t, sub)
}

func TestSubscribeErrors(t *testing.T) {
	h := newHarness(t)
	g := h.agent("alice")
	bob, carol := h.peerToken(g, "bob"), h.peerToken(g, "carol")
	id := h.send(g, bob, "m1", "x")

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
			events, resp := h.stream(h.addr(g), tc.token, tc.method, tc.params)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("status %d, %s", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			ev := next(t, events)
			if c, _ := path(ev.data, "error", "code").(float64); int(c) != tc.code {
				t.Fatalf("error event %+v, want code %d", ev, tc.code)
			}
			ended(t, events)
		})
	}
	t.Run("Terminal", func(t *testing.T) {
		h.reply(id, a2a.TaskStateCompleted, "done")
		events, _ := h.stream(h.addr(g), bob, "SubscribeToTask", map[string]any{"id": id})
		if c, _ := path(next(t, events).data, "error", "code").(float64); c != -32004 {
			t.Fatalf("code %v, want -32004", c)
		}
		ended(t, events)
	})
}

// TestLastEventIDReplay checks the resume extension: a client that
// reconnects with Last-Event-ID gets exactly the events it missed, even
// after the task finished.
func TestLastEventIDReplay(t *testing.T) {
	h := newHarness(t)
	g := h.agent("alice")
	bob := h.peerToken(g, "bob")
	id := h.send(g, bob, "m1", "x")          // event 1: the task
	h.reply(id, a2a.TaskStateWorking, "a")   // event 2
	h.reply(id, a2a.TaskStateWorking, "b")   // event 3
	h.reply(id, a2a.TaskStateCompleted, "c") // events 4 (artifact) and 5 (status)

	events, _ := h.stream(h.addr(g), bob, "SubscribeToTask", map[string]any{"id": id}, "Last-Event-ID", "2")
	var ids []string
	for _, want := range []string{"statusUpdate", "artifactUpdate", "statusUpdate"} {
		ev := next(t, events)
		if path(ev.data, "result", want) == nil {
			t.Fatalf("event %s is not a %s: %v", ev.id, want, ev.data)
		}
		ids = append(ids, ev.id)
	}
	ended(t, events)
	if fmt.Sprint(ids) != "[3 4 5]" {
		t.Fatalf("replayed %v, want [3 4 5]", ids)
	}

	// Nothing missed: one final snapshot, then the end.
	events, _ = h.stream(h.addr(g), bob, "SubscribeToTask", map[string]any{"id": id}, "Last-Event-ID", "5")
	if ev := next(t, events); path(ev.data, "result", "task", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Fatalf("caught-up resume: %+v", ev)
	}
	ended(t, events)

	// From the start, in 0.3 shapes, with final on the last status update.
	events, _ = h.stream(h.addr(g), bob, "tasks/resubscribe", map[string]any{"id": id}, "Last-Event-ID", "0")
	kinds := []string{}
	var last sseEvent
	for range 5 {
		last = next(t, events)
		kinds = append(kinds, fmt.Sprint(path(last.data, "result", "kind")))
	}
	ended(t, events)
	if fmt.Sprint(kinds) != "[task status-update status-update artifact-update status-update]" || path(last.data, "result", "final") != true {
		t.Fatalf("0.3 replay kinds %v, last %v", kinds, last.data)
	}

	for _, bad := range []string{"6", "-1", "abc"} {
		events, _ = h.stream(h.addr(g), bob, "SubscribeToTask", map[string]any{"id": id}, "Last-Event-ID", bad)
		if c, _ := path(next(t, events).data, "error", "code").(float64); c != -32602 {
			t.Fatalf("Last-Event-ID %s: code %v", bad, c)
		}
	}
}

func TestV03MessageStream(t *testing.T) {
	h := newHarness(t)
	g := h.agent("alice")
	bob := h.peerToken(g, "bob")
	events, _ := h.stream(h.addr(g), bob, "message/stream", legacyMessage("m1", "x"))
	first := next(t, events)
	if path(first.data, "result", "kind") != "task" || path(first.data, "result", "status", "state") != "submitted" {
		t.Fatalf("first %+v", first)
	}
	id := path(first.data, "result", "id").(string)
	h.reply(id, a2a.TaskStateFailed, "cannot")
	ev := next(t, events)
	if path(ev.data, "result", "kind") != "status-update" || path(ev.data, "result", "final") != true ||
		path(ev.data, "result", "status", "state") != "failed" {
		t.Fatalf("final event %+v", ev)
	}
	ended(t, events)
}

// TestConcurrentSubscribers checks that every stream of a task gets the
// same events in the same order.
func TestConcurrentSubscribers(t *testing.T) {
	h := newHarness(t)
	g := h.agent("alice")
	bob := h.peerToken(g, "bob")
	id := h.send(g, bob, "m1", "x")
	const n = 5
	streams := make([]<-chan sseEvent, n)
	for i := range streams {
		streams[i], _ = h.stream(h.addr(g), bob, "SubscribeToTask", map[string]any{"id": id})
		next(t, streams[i]) // snapshot
	}
	for range 3 {
		h.reply(id, a2a.TaskStateWorking, "progress")
	}
	h.reply(id, a2a.TaskStateCompleted, "done")
	var wg sync.WaitGroup
	got := make([]string, n)
	for i, s := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ids []string
			for ev := range s {
				ids = append(ids, ev.id)
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
	h := newHarness(t)
	g := h.agent("alice")
	bob := h.peerToken(g, "bob")
	msg := userMessage("m1", "stream")
	events, _ := h.stream(h.addr(g), bob, "SendStreamingMessage", msg)
	id := path(next(t, events).data, "result", "task", "id").(string)
	h.reply(id, a2a.TaskStateWorking, "a") // event 2
	next(t, events)

	// Dropped after event 2; the answer comes meanwhile (events 3, 4).
	h.reply(id, a2a.TaskStateCompleted, "done")
	resumed, _ := h.stream(h.addr(g), bob, "SendStreamingMessage", msg, "Last-Event-ID", "2")
	var ids []string
	for ev := range resumed {
		ids = append(ids, ev.id)
	}
	if fmt.Sprint(ids) != "[3 4]" {
		t.Fatalf("resumed send stream: %v", ids)
	}

	// Caught up with a finished task: the end, not a hang.
	caught, _ := h.stream(h.addr(g), bob, "SendStreamingMessage", msg, "Last-Event-ID", "4")
	if ev := next(t, caught); path(ev.data, "result", "task", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Fatalf("caught-up resume: %+v", ev)
	}
	ended(t, caught)

	// Beyond the log: an error, not a hang.
	ahead, _ := h.stream(h.addr(g), bob, "SendStreamingMessage", msg, "Last-Event-ID", "99")
	if c, _ := path(next(t, ahead).data, "error", "code").(float64); c != -32602 {
		t.Fatalf("Last-Event-ID ahead: code %v", c)
	}
	ended(t, ahead)

	// With a new message the header means nothing: a normal stream.
	fresh, _ := h.stream(h.addr(g), bob, "SendStreamingMessage", userMessage("m2", "new"), "Last-Event-ID", "7")
	if ev := next(t, fresh); ev.id != "1" || path(ev.data, "result", "task", "status", "state") != "TASK_STATE_SUBMITTED" {
		t.Fatalf("new message with Last-Event-ID: %+v", ev)
	}
}

// TestCloseStreamsEndsStreams checks that a shutdown does not wait for open
// streams.
func TestCloseStreamsEndsStreams(t *testing.T) {
	h := newHarness(t)
	g := h.agent("alice")
	bob := h.peerToken(g, "bob")
	events, _ := h.stream(h.addr(g), bob, "SendStreamingMessage", userMessage("m1", "x"))
	next(t, events)
	h.api.CloseStreams()
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
	h := newHarness(t, withConfig(func(c *httpapi.Config) { c.MaxStreamsPerPeer = 2 }))
	g := h.agent("alice")
	bob, carol := h.peerToken(g, "bob"), h.peerToken(g, "carol")
	id := h.send(g, bob, "m1", "x")
	for range 2 {
		s, _ := h.stream(h.addr(g), bob, "SubscribeToTask", map[string]any{"id": id})
		next(t, s)
	}
	r := h.call(h.addr(g), bob, "SubscribeToTask", map[string]any{"id": id})
	wantRPCError(t, r, http.StatusTooManyRequests, -32000)
	if r.header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
	// Other peers are not limited by bob's streams; unary calls neither.
	cid := h.send(g, carol, "m2", "y")
	s, _ := h.stream(h.addr(g), carol, "SubscribeToTask", map[string]any{"id": cid})
	next(t, s)
	h.call(h.addr(g), bob, "GetTask", map[string]any{"id": id}).result(t)
}

func TestStreamEndsWhenTokenRevoked(t *testing.T) {
	h := newHarness(t) // keep-alive every 50 ms
	g := h.agent("alice")
	bob := h.peerToken(g, "bob")
	id := h.send(g, bob, "m1", "x")
	s, _ := h.stream(h.addr(g), bob, "SubscribeToTask", map[string]any{"id": id})
	next(t, s)
	kind, label := switchboard.TokenPeer, "bob"
	_, err := h.db.RevokeTokens(context.Background(), switchboard.TokenFilter{Kind: &kind, AgentID: &g.ID, Label: &label})
	must(t, err)
	if c, _ := path(next(t, s).data, "error", "code").(float64); c != -31401 {
		t.Fatalf("revoked stream got code %v", c)
	}
	ended(t, s)
}

func TestStreamMaxDuration(t *testing.T) {
	h := newHarness(t, withConfig(func(c *httpapi.Config) { c.StreamMaxDuration = 200 * time.Millisecond }))
	g := h.agent("alice")
	bob := h.peerToken(g, "bob")
	s, _ := h.stream(h.addr(g), bob, "SendStreamingMessage", userMessage("m1", "x"))
	next(t, s)
	ended(t, s)
}
