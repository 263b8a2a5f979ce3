package agenthttp_test

import (
	"context"
	"database/sql"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/facetest"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/wake"
)

func TestOutboxPushReceiver(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	other := h.Agent("carol")
	// alice sleeps: each accepted push queues an outbound_update wake with
	// the push's change.
	now := time.Now().UTC()
	if err := h.DB.SaveWakeConfig(context.Background(), &switchboard.WakeConfig{AgentID: g.ID, URL: "https://wake.example/",
		Preset: wake.PresetGeneric, Debounce: time.Minute, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}

	rec := h.RecordOutbound(g, h.OperatorToken, map[string]any{
		"target": "bob", "endpoint": "https://bob.example/a2a", "protocol": "1.0", "context_id": "ctx-1",
		"message_id": "m-1", "text": "hello bob", "push_token": facetest.PushToken,
	})
	id := rec["id"].(string)
	if rec["push_url"] != h.Addr(g)+"/push" || rec["push"] != true || rec["state"] != "sent" {
		t.Fatalf("record: %v", rec)
	}
	if strings.Contains(string(h.Owner("GET", "/outbox/"+id, h.OperatorToken, nil).Body), facetest.PushToken) ||
		strings.Contains(string(h.Owner("GET", "/outbox/"+id, h.OperatorToken, nil).Body), switchboard.HashToken(facetest.PushToken)) {
		t.Fatal("the push token or its hash is shown")
	}

	// A push that comes before the answer to the send: the token finds the
	// record still waiting for its task id, which it takes.
	working := `{"statusUpdate":{"taskId":"remote-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"s1","role":"ROLE_AGENT","parts":[{"text":"on it"}]}}}}`
	if r := h.Push(g, map[string]string{"A2A-Notification-Token": facetest.PushToken}, working); r.Status != 200 || r.JSON["ok"] != true {
		t.Fatalf("first push: HTTP %d %s", r.Status, r.Body)
	}
	got := h.Owner("GET", "/outbox/"+id, h.OperatorToken, nil).JSON
	if got["task_id"] != "remote-1" || got["state"] != "working" {
		t.Fatalf("after the first push: %v", got)
	}

	// Authentication failures.
	for name, c := range map[string]struct {
		agent  *switchboard.Agent
		header map[string]string
		body   string
		status int
	}{
		"wrong token":            {g, map[string]string{"A2A-Notification-Token": "wrong-token-0123456789"}, working, 401},
		"no token":               {g, nil, working, 401},
		"unknown task":           {g, map[string]string{"A2A-Notification-Token": "wrong-token-0123456789"}, strings.Replace(working, "remote-1", "remote-9", 1), 404},
		"unknown task, no token": {g, nil, strings.Replace(working, "remote-1", "remote-9", 1), 404},
		"another agent's task":   {other, map[string]string{"A2A-Notification-Token": facetest.PushToken}, working, 404},
		"no such agent":          {&switchboard.Agent{Handle: "nobody"}, map[string]string{"A2A-Notification-Token": facetest.PushToken}, working, 404},
		"not a push":             {g, map[string]string{"A2A-Notification-Token": facetest.PushToken}, `{"hello":"world"}`, 400},
	} {
		if r := h.Push(c.agent, c.header, c.body); r.Status != c.status {
			t.Fatalf("%s: HTTP %d %s, want %d", name, r.Status, r.Body, c.status)
		}
	}
	// An oversized push is refused before it is read whole: the client
	// gets 413, or, when the server closed the connection while the body
	// was still being written, a reset.
	big := `{"statusUpdate":{"taskId":"remote-1","x":"` + strings.Repeat("a", 2<<20) + `"}}`
	req, _ := http.NewRequest("POST", h.Addr(g)+"/push", strings.NewReader(big))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Notification-Token", facetest.PushToken)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("oversized: HTTP %d, want 413", resp.StatusCode)
		}
	} else if !strings.Contains(err.Error(), "connection reset") && !strings.Contains(err.Error(), "broken pipe") {
		t.Fatalf("oversized: %v", err)
	}
	if r := h.Push(g, map[string]string{"A2A-Notification-Token": "wrong-token-0123456789"}, working); strings.Contains(string(r.Body), "remote-1") {
		t.Fatalf("a refusal tells more than it should: %s", r.Body)
	}

	// The 0.3 shape, with the other header names.
	v03 := `{"kind":"task","id":"remote-1","contextId":"ctx-1","status":{"state":"completed"},"artifacts":[{"artifactId":"a1","parts":[{"kind":"text","text":"the answer"}]}]}`
	if r := h.Push(g, map[string]string{"X-A2A-Notification-Token": facetest.PushToken}, v03); r.Status != 200 {
		t.Fatalf("0.3 push: HTTP %d %s", r.Status, r.Body)
	}
	if r := h.Push(g, map[string]string{"Authorization": "Bearer " + facetest.PushToken}, `{"message":{"messageId":"x","taskId":"remote-1","role":"ROLE_AGENT","parts":[{"text":"ps"}]}}`); r.Status != 200 {
		t.Fatalf("bearer push: HTTP %d %s", r.Status, r.Body)
	}
	got = h.Owner("GET", "/outbox/"+id, h.OperatorToken, nil).JSON
	updates := got["updates"].([]any)
	if got["state"] != "completed" || len(updates) != 3 || updates[1].(map[string]any)["text"] != "the answer" ||
		facetest.Path(got, "task", "id") != "remote-1" {
		t.Fatalf("after the pushes: %v", got)
	}
	wakes, err := h.DB.FindWakes(context.Background(), g.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(wakes) != 1 || wakes[0].Kind != switchboard.WakeOutboundUpdate || wakes[0].ContextID != "ctx-1" ||
		wakes[0].TaskID != "remote-1" || wakes[0].Count != 3 || wakes[0].Preview != "[update on outbound task: completed] ps" {
		t.Fatalf("outbound_update wakes: %+v", wakes)
	}

	// Only the last MaxOutboundUpdates updates are kept.
	for range switchboard.MaxOutboundUpdates + 3 {
		if r := h.Push(g, map[string]string{"A2A-Notification-Token": facetest.PushToken}, working); r.Status != 200 {
			t.Fatalf("push: HTTP %d", r.Status)
		}
	}
	got = h.Owner("GET", "/outbox/"+id, h.OperatorToken, nil).JSON
	if n := len(got["updates"].([]any)); n != switchboard.MaxOutboundUpdates {
		t.Fatalf("%d updates kept", n)
	}
}

// TestPushReceiverRateLimit: pushes at an agent's address are counted per
// agent and sending address; past the limit the receiver answers 429 with
// Retry-After, whether or not the token is right, and stores nothing.
func TestPushReceiverRateLimit(t *testing.T) {
	h := facetest.New(t, facetest.WithRate(3))
	fixed := time.Date(2026, 3, 1, 10, 20, 30, 0, time.UTC) // mid-window: the window does not turn during the test
	h.Limiter.Now = func() time.Time { return fixed }
	g := h.Agent("alice")
	other := h.Agent("carol")
	h.RecordOutbound(g, h.OperatorToken, map[string]any{
		"target": "bob", "endpoint": "https://bob.example/a2a", "protocol": "1.0", "context_id": "ctx-1",
		"message_id": "m-1", "text": "hello bob", "push_token": facetest.PushToken,
	})
	working := `{"statusUpdate":{"taskId":"remote-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING"}}}`
	auth := map[string]string{"A2A-Notification-Token": facetest.PushToken}
	for i := range 2 {
		if r := h.Push(g, auth, working); r.Status != 200 {
			t.Fatalf("push %d: HTTP %d %s", i, r.Status, r.Body)
		}
	}
	if r := h.Push(g, map[string]string{"A2A-Notification-Token": "wrong-token-0123456789"}, working); r.Status != 401 {
		t.Fatalf("wrong token: HTTP %d %s", r.Status, r.Body)
	}
	for _, hdr := range []map[string]string{auth, {"A2A-Notification-Token": "wrong-token-0123456789"}} {
		r := h.Push(g, hdr, working)
		if r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" || r.Header.Get("Retry-After") == "0" {
			t.Fatalf("past the limit: HTTP %d Retry-After %q %s", r.Status, r.Header.Get("Retry-After"), r.Body)
		}
	}
	list := h.Owner("GET", "/agents/"+g.Handle+"/outbox", h.OperatorToken, nil).JSON
	recs := list["outbox"].([]any)
	if n := len(recs[0].(map[string]any)["updates"].([]any)); n != 2 {
		t.Fatalf("%d updates stored, want the 2 pushes within the limit", n)
	}
	// Another agent's address has its own count.
	if r := h.Push(other, auth, working); r.Status != 404 {
		t.Fatalf("another agent: HTTP %d %s", r.Status, r.Body)
	}
}

// TestPushReceiverStoreFailure: a push that cannot be stored (here the
// wake it queues cannot be written) is answered 503 with Retry-After, and
// neither the record nor a wake is changed: the pusher retries.
func TestPushReceiverStoreFailure(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	now := time.Now().UTC()
	if err := h.DB.SaveWakeConfig(context.Background(), &switchboard.WakeConfig{AgentID: g.ID, URL: "https://wake.example/",
		Preset: wake.PresetGeneric, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	rec := h.RecordOutbound(g, h.OperatorToken, map[string]any{
		"target": "bob", "endpoint": "https://bob.example/a2a", "protocol": "1.0", "context_id": "ctx-1",
		"message_id": "m-1", "text": "hello bob", "push_token": facetest.PushToken,
	})
	raw, err := sql.Open("sqlite", sqlitetest.DSN(h.SQLitePath))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`CREATE TRIGGER no_wakes BEFORE INSERT ON wakes BEGIN SELECT RAISE(FAIL, 'disk on fire'); END`); err != nil {
		t.Fatal(err)
	}
	working := `{"statusUpdate":{"taskId":"remote-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING"}}}`
	r := h.Push(g, map[string]string{"A2A-Notification-Token": facetest.PushToken}, working)
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" || strings.Contains(string(r.Body), "fire") {
		t.Fatalf("push that cannot be stored: HTTP %d Retry-After %q %s", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	got := h.Owner("GET", "/outbox/"+rec["id"].(string), h.OperatorToken, nil).JSON
	if got["state"] != "sent" || got["task_id"] != nil && got["task_id"] != "" {
		t.Fatalf("a refused push changed the record: %v", got)
	}
	// Once the store works again, the retried push is stored with its wake.
	if _, err := raw.Exec(`DROP TRIGGER no_wakes`); err != nil {
		t.Fatal(err)
	}
	if r := h.Push(g, map[string]string{"A2A-Notification-Token": facetest.PushToken}, working); r.Status != 200 {
		t.Fatalf("retried push: HTTP %d %s", r.Status, r.Body)
	}
	if ws, err := h.DB.FindWakes(context.Background(), g.ID, 10); err != nil || len(ws) != 1 {
		t.Fatalf("wakes after the retry: %v %v", ws, err)
	}
}
