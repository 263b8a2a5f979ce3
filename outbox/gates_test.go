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
)

// newOutbox returns an outbox service over a fresh SQLite store, and the
// agent whose records it keeps.
func newOutbox(t *testing.T) (*outbox.Service, *sqlstore.DB, *switchboard.Agent) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.OpenSQLite(ctx, sqlitetest.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "a", Role: switchboard.RoleOwner}
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "alice", Name: "alice", Mode: switchboard.ModeInbox, Version: "1"}
	if err := db.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateAgent(ctx, g); err != nil {
		t.Fatal(err)
	}
	return outbox.New(db, db), db, g
}

const goodToken = "0123456789abcdef0123456789abcdef"

// TestRecordRefusesBadRecords: a record needs its agent and an http(s)
// endpoint without credentials, and a push token is 16 to 512
// characters.
func TestRecordRefusesBadRecords(t *testing.T) {
	svc, _, g := newOutbox(t)
	ctx := context.Background()
	rec := func(edit func(o *switchboard.Outbound)) *switchboard.Outbound {
		o := &switchboard.Outbound{AgentID: g.ID, Target: "bob", Endpoint: "https://bob.example/", Protocol: switchboard.ProtocolV1, Text: "hi"}
		if edit != nil {
			edit(o)
		}
		return o
	}
	for name, tc := range map[string]struct {
		o     *switchboard.Outbound
		token string
	}{
		"no agent":            {rec(func(o *switchboard.Outbound) { o.AgentID = "" }), goodToken},
		"credentials":         {rec(func(o *switchboard.Outbound) { o.Endpoint = "https://u:p@bob.example/" }), goodToken},
		"scheme":              {rec(func(o *switchboard.Outbound) { o.Endpoint = "ftp://bob.example/" }), goodToken},
		"short push token":    {rec(nil), "short"},
		"too long push token": {rec(nil), strings.Repeat("t", 513)},
	} {
		if err := svc.Record(ctx, tc.o, tc.token); switchboard.ErrorCode(err) != switchboard.EINVALID {
			t.Errorf("%s: %v, want EINVALID", name, err)
		}
	}
	if err := svc.Record(ctx, rec(nil), goodToken); err != nil {
		t.Fatalf("a good record: %v", err)
	}
}

// TestUpdateKeepsTheRecordsTask: once a record knows its remote task, a
// send or poll result about another task is refused and changes nothing.
func TestUpdateKeepsTheRecordsTask(t *testing.T) {
	svc, _, g := newOutbox(t)
	ctx := context.Background()
	o := &switchboard.Outbound{AgentID: g.ID, Target: "bob", Endpoint: "https://bob.example/", Protocol: switchboard.ProtocolV1, Text: "hi", TaskID: "r1"}
	if err := svc.Record(ctx, o, ""); err != nil {
		t.Fatal(err)
	}
	other := &a2a.Task{ID: "r2", ContextID: "c2", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}
	if _, err := svc.Update(ctx, o.ID, outbox.OutboundResult{Source: switchboard.OutboundFromPoll, Task: other}); switchboard.ErrorCode(err) != switchboard.EINVALID {
		t.Fatalf("a poll of another task: %v", err)
	}
	got, err := svc.Find(ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.TaskID != "r1" || got.State == a2a.TaskStateCompleted {
		t.Fatalf("the record after a refused update: task %s, state %s", got.TaskID, got.State)
	}
}

// TestApplyEventOfAnotherTask: a status or artifact update about another
// task than the record's leaves the record's copy of its task alone.
func TestApplyEventOfAnotherTask(t *testing.T) {
	now := time.Now().UTC()
	o := &switchboard.Outbound{TaskID: "r1", Task: &a2a.Task{ID: "r1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}}
	outbox.ApplyEvent(o, &a2a.TaskStatusUpdateEvent{TaskID: "r2", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted,
		Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("not yours"))}}, switchboard.OutboundFromPush, now)
	outbox.ApplyEvent(o, &a2a.TaskArtifactUpdateEvent{TaskID: "r2", Artifact: &a2a.Artifact{ID: "a", Parts: a2a.ContentParts{a2a.NewTextPart("not yours")}}},
		switchboard.OutboundFromPush, now)
	if o.Task.Status.State != a2a.TaskStateWorking || len(o.Task.History) != 0 || len(o.Task.Artifacts) != 0 {
		t.Fatalf("the record's task took another task's events: %+v", o.Task)
	}
}

// staleOutbox is an OutboundStore whose search for records waiting for
// their task answers as it would have a moment before: another push has
// since given the record its task.
type staleOutbox struct {
	switchboard.OutboundStore
	pending *switchboard.Outbound
}

func (s *staleOutbox) FindOutbounds(ctx context.Context, f switchboard.OutboundFilter) ([]*switchboard.Outbound, error) {
	if f.Pending {
		return []*switchboard.Outbound{s.pending}, nil
	}
	return s.OutboundStore.FindOutbounds(ctx, f)
}

// TestPushCannotMoveARecordToAnotherTask: a record adopted by one task (a
// push that won a race) is not moved to another task by a push that read
// it while it still waited: the write checks again.
func TestPushCannotMoveARecordToAnotherTask(t *testing.T) {
	_, db, g := newOutbox(t)
	ctx := context.Background()
	o := &switchboard.Outbound{AgentID: g.ID, Target: "bob", Endpoint: "https://bob.example/", Protocol: switchboard.ProtocolV1, Text: "hi"}
	if err := outbox.New(db, db).Record(ctx, o, goodToken); err != nil {
		t.Fatal(err)
	}
	waiting := *o
	svc := outbox.New(&staleOutbox{OutboundStore: db, pending: &waiting}, db)
	working := &a2a.TaskStatusUpdateEvent{TaskID: "r1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	if _, err := svc.ReceivePush(ctx, g.ID, goodToken, "r1", working); err != nil {
		t.Fatal(err)
	}
	other := &a2a.TaskStatusUpdateEvent{TaskID: "r2", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}
	if _, err := svc.ReceivePush(ctx, g.ID, goodToken, "r2", other); switchboard.ErrorCode(err) != switchboard.EUNAUTHORIZED {
		t.Fatalf("a push moving the record to another task: %v", err)
	}
	got, err := db.FindOutboundByID(ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.TaskID != "r1" || got.State != a2a.TaskStateWorking {
		t.Fatalf("the record: task %s, state %s", got.TaskID, got.State)
	}
}
