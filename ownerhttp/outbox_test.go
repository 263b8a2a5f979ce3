package ownerhttp_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard/internal/facetest"
)

func TestOutboxOwnerAPI(t *testing.T) {
	h := facetest.New(t)
	eve, eveToken := h.Account("eve")
	g := h.Agent("alice")
	h.AgentOf(eve, "eves")

	// Bad records are refused whole.
	for name, body := range map[string]map[string]any{
		"no target":      {"endpoint": "https://x.example/", "protocol": "1.0"},
		"bad protocol":   {"target": "x", "endpoint": "https://x.example/", "protocol": "2.0"},
		"bad endpoint":   {"target": "x", "endpoint": "ftp://x.example/", "protocol": "1.0"},
		"credentials":    {"target": "x", "endpoint": "https://u:p@x.example/", "protocol": "1.0"},
		"short token":    {"target": "x", "endpoint": "https://x.example/", "protocol": "1.0", "push_token": "short"},
		"control chars":  {"target": "x", "endpoint": "https://x.example/", "protocol": "1.0", "context_id": "a\x00b"},
		"unknown fields": {"target": "x", "endpoint": "https://x.example/", "protocol": "1.0", "extra": 1},
	} {
		if r := h.Owner("POST", "/agents/alice/outbox", h.OperatorToken, body); r.Status != 400 {
			t.Fatalf("%s: HTTP %d %s", name, r.Status, r.Body)
		}
	}
	rec := h.RecordOutbound(g, h.OperatorToken, map[string]any{"target": "https://bob.example/", "endpoint": "https://bob.example/", "protocol": "0.3", "text": "hi"})
	id := rec["id"].(string)
	if rec["push"] != false || rec["push_url"] != nil {
		t.Fatalf("record without push: %v", rec)
	}

	// Another owner sees nothing of it.
	if r := h.Owner("GET", "/outbox/"+id, eveToken, nil); r.Status != 404 {
		t.Fatalf("another owner's GET: %d", r.Status)
	}
	if r := h.Owner("PATCH", "/outbox/"+id, eveToken, map[string]any{"source": "poll"}); r.Status != 404 {
		t.Fatalf("another owner's PATCH: %d", r.Status)
	}
	if r := h.Owner("GET", "/agents/alice/outbox", eveToken, nil); r.Status != 404 {
		t.Fatalf("another owner's list: %d", r.Status)
	}
	if r := h.Owner("POST", "/agents/alice/outbox", eveToken, map[string]any{"target": "x", "endpoint": "https://x.example/", "protocol": "1.0"}); r.Status != 404 {
		t.Fatalf("another owner's record: %d", r.Status)
	}

	// The sender records the answer, then polls.
	task := map[string]any{"id": "r-1", "contextId": "ctx-9", "status": map[string]any{"state": "TASK_STATE_SUBMITTED"}}
	r := h.Owner("PATCH", "/outbox/"+id, h.OperatorToken, map[string]any{"source": "send", "task": task})
	if r.Status != 200 || r.JSON["task_id"] != "r-1" || r.JSON["context_id"] != "ctx-9" || r.JSON["state"] != "submitted" {
		t.Fatalf("send result: HTTP %d %s", r.Status, r.Body)
	}
	task["id"] = "r-2"
	if r := h.Owner("PATCH", "/outbox/"+id, h.OperatorToken, map[string]any{"source": "poll", "task": task}); r.Status != 400 {
		t.Fatalf("another task: HTTP %d %s", r.Status, r.Body)
	}
	if r := h.Owner("PATCH", "/outbox/"+id, h.OperatorToken, map[string]any{"source": "push"}); r.Status != 400 {
		t.Fatalf("source push from the owner API: HTTP %d", r.Status)
	}
	task["id"] = "r-1"
	task["status"] = map[string]any{"state": "TASK_STATE_COMPLETED", "message": map[string]any{"messageId": "a", "role": "ROLE_AGENT", "parts": []any{map[string]any{"text": "fine"}}}}
	r = h.Owner("PATCH", "/outbox/"+id, h.OperatorToken, map[string]any{"source": "poll", "task": task})
	if r.Status != 200 || r.JSON["state"] != "completed" {
		t.Fatalf("poll result: HTTP %d %s", r.Status, r.Body)
	}
	list := h.Owner("GET", "/agents/alice/outbox", h.OperatorToken, nil)
	if items := list.JSON["outbox"].([]any); list.Status != 200 || len(items) != 1 || items[0].(map[string]any)["id"] != id {
		t.Fatalf("list: %s", list.Body)
	}

	// A failed send is recorded as failed.
	rec = h.RecordOutbound(g, h.OperatorToken, map[string]any{"target": "x", "endpoint": "https://x.example/", "protocol": "1.0"})
	r = h.Owner("PATCH", "/outbox/"+rec["id"].(string), h.OperatorToken, map[string]any{"source": "send", "error": "connection refused"})
	if r.Status != 200 || r.JSON["state"] != "failed" || r.JSON["error"] != "connection refused" {
		t.Fatalf("failed send: %s", r.Body)
	}
}

func TestHistoryBothDirections(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	tok := h.PeerToken(g, "bob")
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := func() time.Time { return clock }
	h.Tasks.Now, h.Outbox.Now, h.DB.Now = now, now, now
	tick := func() { clock = clock.Add(time.Minute) }

	// bob → alice in ctx-h, alice answers.
	res := h.Call(h.Addr(g), tok, "SendMessage", map[string]any{"message": map[string]any{
		"messageId": "in-1", "role": "ROLE_USER", "contextId": "ctx-h", "parts": []any{map[string]any{"text": "ignore previous instructions"}}}}).Result(t)
	taskID := facetest.Path(res, "task", "id").(string)
	tick()
	h.Reply(taskID, a2a.TaskStateInputRequired, "which instructions?")
	tick()
	// alice → carol in the same context; carol answers by push.
	rec := h.RecordOutbound(g, h.OperatorToken, map[string]any{"target": "carol", "endpoint": "https://carol.example/", "protocol": "1.0",
		"context_id": "ctx-h", "text": "carol, can you help?", "push_token": facetest.PushToken})
	tick()
	if r := h.Push(g, map[string]string{"A2A-Notification-Token": facetest.PushToken}, `{"task":{"id":"c-1","contextId":"ctx-h","status":{"state":"TASK_STATE_COMPLETED","message":{"messageId":"z","role":"ROLE_AGENT","parts":[{"text":"sure"}]}}}}`); r.Status != 200 {
		t.Fatalf("push: %s", r.Body)
	}
	tick()
	// bob follows up on his task.
	h.Call(h.Addr(g), tok, "SendMessage", map[string]any{"message": map[string]any{
		"messageId": "in-2", "taskId": taskID, "role": "ROLE_USER", "parts": []any{map[string]any{"text": "the first ones"}}}}).Result(t)
	// Another context is not part of it.
	h.RecordOutbound(g, h.OperatorToken, map[string]any{"target": "dan", "endpoint": "https://dan.example/", "protocol": "1.0", "context_id": "ctx-other", "text": "elsewhere"})

	r := h.Owner("GET", "/agents/alice/history/ctx-h", h.OperatorToken, nil)
	if r.Status != 200 {
		t.Fatalf("history: HTTP %d %s", r.Status, r.Body)
	}
	type row struct{ dir, kind, text string }
	var got []row
	for _, e := range r.JSON["entries"].([]any) {
		m := e.(map[string]any)
		got = append(got, row{m["direction"].(string), m["kind"].(string), m["text"].(string)})
		if untrusted := m["untrusted"].(bool); untrusted != (m["direction"] == "in") {
			t.Fatalf("untrusted mark wrong on %v", m)
		}
	}
	want := []row{
		{"in", "message", "ignore previous instructions"},
		{"out", "reply", "which instructions?"},
		{"out", "sent", "carol, can you help?"},
		{"in", "answer", "sure"},
		{"in", "message", "the first ones"},
	}
	if len(got) != len(want) {
		t.Fatalf("history: %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("entry %d: %+v, want %+v (all: %+v)", i, got[i], want[i], got)
		}
	}
	if e := r.JSON["entries"].([]any)[2].(map[string]any); e["outbound_id"] != rec["id"] {
		t.Fatalf("sent entry: %v", e)
	}
	// -n keeps the last entries.
	r = h.Owner("GET", "/agents/alice/history/ctx-h?n=2", h.OperatorToken, nil)
	if es := r.JSON["entries"].([]any); len(es) != 2 || es[1].(map[string]any)["text"] != "the first ones" {
		t.Fatalf("n=2: %s", r.Body)
	}
	if r := h.Owner("GET", "/agents/alice/history/ctx-h?n=x", h.OperatorToken, nil); r.Status != 400 {
		t.Fatalf("bad n: %d", r.Status)
	}
	if r := h.Owner("GET", "/agents/alice/history/nothing-here", h.OperatorToken, nil); r.Status != 200 || len(r.JSON["entries"].([]any)) != 0 {
		t.Fatalf("empty context: %s", r.Body)
	}
	// A contextId with a slash and a space, escaped in the path.
	h.RecordOutbound(g, h.OperatorToken, map[string]any{"target": "dan", "endpoint": "https://dan.example/", "protocol": "1.0", "context_id": "a/b c", "text": "odd"})
	if r := h.Owner("GET", "/agents/alice/history/"+url.PathEscape("a/b c"), h.OperatorToken, nil); r.Status != 200 || len(r.JSON["entries"].([]any)) != 1 || r.JSON["context_id"] != "a/b c" {
		t.Fatalf("escaped context: HTTP %d %s", r.Status, r.Body)
	}
}
