package outbox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/outbox"
	"github.com/switchboard-dev/switchboard/sqlstore"
	"github.com/switchboard-dev/switchboard/wake"
)

func status(state a2a.TaskState, at time.Time, text string) a2a.TaskStatus {
	st := a2a.TaskStatus{State: state, Timestamp: &at}
	if text != "" {
		st.Message = a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(text))
	}
	return st
}

func TestOutboundApplyKeepsNewest(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var o switchboard.Outbound
	// A push of the final state arrives during the send call...
	outbox.ApplyEvent(&o, &a2a.TaskStatusUpdateEvent{TaskID: "r1", ContextID: "c1", Status: status(a2a.TaskStateWorking, t0.Add(time.Second), "")}, switchboard.OutboundFromPush, t0)
	outbox.ApplyEvent(&o, &a2a.Task{ID: "r1", ContextID: "c1", Status: status(a2a.TaskStateCompleted, t0.Add(3*time.Second), "done")}, switchboard.OutboundFromPush, t0)
	// ...then the answer to the send, older, is recorded: it takes nothing back.
	outbox.ApplyTask(&o, &a2a.Task{ID: "r1", ContextID: "c1", Status: status(a2a.TaskStateSubmitted, t0, "")}, switchboard.OutboundFromSend, t0.Add(time.Second))
	if o.State != a2a.TaskStateCompleted || o.Task.Status.State != a2a.TaskStateCompleted || len(o.Updates) != 3 {
		t.Fatalf("state %s, task %s, %d updates", o.State, o.Task.Status.State, len(o.Updates))
	}
	// Without timestamps, a final state still stays.
	outbox.ApplyEvent(&o, &a2a.TaskStatusUpdateEvent{TaskID: "r1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}, switchboard.OutboundFromPush, t0)
	if o.State != a2a.TaskStateCompleted {
		t.Fatalf("a final state was left: %s", o.State)
	}
	// A status stamped later moves an unfinished record on.
	var p switchboard.Outbound
	outbox.ApplyTask(&p, &a2a.Task{ID: "r2", Status: status(a2a.TaskStateWorking, t0, "")}, switchboard.OutboundFromSend, t0)
	outbox.ApplyEvent(&p, &a2a.TaskStatusUpdateEvent{TaskID: "r2", Status: status(a2a.TaskStateInputRequired, t0.Add(time.Second), "which?")}, switchboard.OutboundFromPush, t0)
	if p.State != a2a.TaskStateInputRequired || p.Task.Status.State != a2a.TaskStateInputRequired || len(p.Task.History) != 1 || p.Updates[1].Text != "which?" {
		t.Fatalf("input-required not applied: %+v", p)
	}
}

func TestOutboundApplyArtifactsAndMessages(t *testing.T) {
	var o switchboard.Outbound
	outbox.ApplyTask(&o, &a2a.Task{ID: "r1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}, switchboard.OutboundFromSend, time.Now())
	chunk := func(text string, appendIt bool) *a2a.TaskArtifactUpdateEvent {
		return &a2a.TaskArtifactUpdateEvent{TaskID: "r1", Append: appendIt, Artifact: &a2a.Artifact{ID: "a1", Parts: a2a.ContentParts{a2a.NewTextPart(text)}}}
	}
	outbox.ApplyEvent(&o, chunk("one", false), switchboard.OutboundFromPush, time.Now())
	outbox.ApplyEvent(&o, chunk("two", true), switchboard.OutboundFromPush, time.Now())
	if len(o.Task.Artifacts) != 1 || len(o.Task.Artifacts[0].Parts) != 2 || o.Updates[2].Text != "two" {
		t.Fatalf("artifacts: %+v", o.Task.Artifacts)
	}
	// An answer that is a message, not a task, ends the exchange.
	var m switchboard.Outbound
	outbox.ApplyEvent(&m, &a2a.Message{ID: "x", ContextID: "c9", Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart("hello")}}, switchboard.OutboundFromSend, time.Now())
	if m.State != a2a.TaskStateCompleted || m.Reply == nil || m.TaskID != "" || m.ContextID != "c9" {
		t.Fatalf("message answer: %+v", m)
	}
	// Ids a remote made up with control characters are not kept.
	var bad switchboard.Outbound
	outbox.ApplyTask(&bad, &a2a.Task{ID: "r\x00", ContextID: "c\n", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}, switchboard.OutboundFromSend, time.Now())
	if bad.TaskID != "" || bad.ContextID != "" {
		t.Fatalf("control characters kept: %q %q", bad.TaskID, bad.ContextID)
	}
	// Long texts are cut, and at most MaxOutboundUpdates are kept.
	var long switchboard.Outbound
	for range switchboard.MaxOutboundUpdates + 1 {
		outbox.ApplyEvent(&long, &a2a.Message{ID: "y", TaskID: "r", Parts: a2a.ContentParts{a2a.NewTextPart(strings.Repeat("é", switchboard.MaxOutboundText))}}, switchboard.OutboundFromPush, time.Now())
	}
	if n := len(long.Updates); n != switchboard.MaxOutboundUpdates || len(long.Updates[0].Text) > switchboard.MaxOutboundText+len("…") || !strings.HasSuffix(long.Updates[0].Text, "é…") {
		t.Fatalf("%d updates, text of %d bytes", n, len(long.Updates[0].Text))
	}
}

func TestReceivePush(t *testing.T) {
	ctx := context.Background()
	db, err := sqlstore.OpenSQLite(ctx, sqlitetest.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "a", Role: switchboard.RoleOwner}
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "alice", Name: "alice", Mode: switchboard.ModeInbox, Version: "1"}
	if err := db.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateAgent(ctx, g); err != nil {
		t.Fatal(err)
	}
	svc := outbox.New(db, db)
	// A sleeping agent: each accepted push queues an outbound_update wake
	// in the transaction that records it, with no hook to wire.
	now := time.Now().UTC()
	if err := db.SaveWakeConfig(ctx, &switchboard.WakeConfig{AgentID: g.ID, URL: "https://wake.example/", Preset: wake.PresetGeneric,
		Debounce: time.Second, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	const token = "0123456789abcdef0123456789abcdef"
	o := &switchboard.Outbound{AgentID: g.ID, Target: "bob", Endpoint: "https://bob.example/", Protocol: switchboard.ProtocolV1, Text: "hi"}
	if err := svc.Record(ctx, o, token); err != nil {
		t.Fatal(err)
	}
	if o.PushTokenHash != switchboard.HashToken(token) {
		t.Fatal("the token's hash is not what is kept")
	}
	working := &a2a.TaskStatusUpdateEvent{TaskID: "r1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking,
		Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("on it, key=sb_a_0123456789abcdef0123456789"))}}
	wantCode := func(err error, code switchboard.Code) {
		t.Helper()
		if switchboard.ErrorCode(err) != code {
			t.Fatalf("error %v, want %s", err, code)
		}
	}
	// Before the record knows its task: a wrong token finds nothing.
	_, err = svc.ReceivePush(ctx, g.ID, "wrong", "r1", working)
	wantCode(err, switchboard.ENOTFOUND)
	got, err := svc.ReceivePush(ctx, g.ID, token, "r1", working)
	if err != nil || got.TaskID != "r1" || got.State != a2a.TaskStateWorking {
		t.Fatalf("adopting push: %v %+v", err, got)
	}
	_, err = svc.ReceivePush(ctx, g.ID, "wrong", "r1", working)
	wantCode(err, switchboard.EUNAUTHORIZED)
	_, err = svc.ReceivePush(ctx, g.ID, "", "r1", working)
	wantCode(err, switchboard.EUNAUTHORIZED)
	_, err = svc.ReceivePush(ctx, g.ID, token, "r\x00", working)
	wantCode(err, switchboard.EINVALID)
	_, err = svc.ReceivePush(ctx, switchboard.NewID(), token, "r1", working)
	wantCode(err, switchboard.ENOTFOUND)
	// The same token cannot move the record to another task.
	_, err = svc.ReceivePush(ctx, g.ID, token, "r2", working)
	wantCode(err, switchboard.ENOTFOUND)
	wakes, err := db.FindWakes(ctx, g.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(wakes) != 1 || wakes[0].Kind != switchboard.WakeOutboundUpdate || wakes[0].ContextID != "c1" || wakes[0].Count != 1 ||
		wakes[0].From != "bob" || !strings.Contains(wakes[0].Preview, "on it") || strings.Contains(wakes[0].Preview, "0123456789abcdef") {
		t.Fatalf("outbound_update wakes: %+v", wakes)
	}
	// A record without a push token takes no pushes.
	plain := &switchboard.Outbound{AgentID: g.ID, Target: "bob", Endpoint: "https://bob.example/", Protocol: switchboard.ProtocolV1, TaskID: "r3"}
	if err := svc.Record(ctx, plain, ""); err != nil {
		t.Fatal(err)
	}
	_, err = svc.ReceivePush(ctx, g.ID, "", "r3", working)
	wantCode(err, switchboard.EUNAUTHORIZED)
}
