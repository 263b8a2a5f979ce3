package sqlstore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// TestTaskCacheKeepsLiveTasksOnly checks that the tasks a SQLite store
// writes are kept while they are live, used only while they are what is
// stored, and forgotten once finished.
func TestTaskCacheKeepsLiveTasksOnly(t *testing.T) {
	ctx := context.Background()
	db, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "a", Role: switchboard.RoleOwner}
	must(t, db.CreateAccount(ctx, acct))
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "g", Mode: switchboard.ModeInbox, AcceptsTasks: true}
	must(t, db.CreateAgent(ctx, g))
	now := time.Now().UTC()
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))
	task := &switchboard.Task{A2A: a2a.Task{ID: a2a.TaskID(switchboard.NewID()), ContextID: "c", History: []*a2a.Message{msg},
		Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &now}}, AgentID: g.ID, PeerID: "p", PeerLabel: "p",
		Protocol: switchboard.ProtocolV1, CreatedAt: now, UpdatedAt: now}
	_, err = db.CreateTask(ctx, task, &switchboard.TaskChange{MessageID: msg.ID})
	must(t, err)
	if _, ok := db.tasks.get(task.ID(), task.Seq, nanos(task.UpdatedAt)); !ok {
		t.Fatal("a new task is not kept")
	}
	if _, ok := db.tasks.get(task.ID(), task.Seq+1, nanos(task.UpdatedAt)); ok {
		t.Fatal("the kept task is handed out for another sequence number")
	}
	finish := func(tk *switchboard.Task) (*switchboard.TaskChange, error) {
		at := time.Now().UTC()
		tk.A2A.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: &at}
		tk.UpdatedAt = at
		return &switchboard.TaskChange{Events: []a2a.Event{&a2a.TaskStatusUpdateEvent{TaskID: tk.ID(), ContextID: "c", Status: tk.A2A.Status}}}, nil
	}
	done, _, err := db.ModifyTask(ctx, task.ID(), finish)
	must(t, err)
	if done.State() != a2a.TaskStateCompleted || len(db.tasks.entries) != 0 {
		t.Fatalf("finished task: %s, %d kept", done.State(), len(db.tasks.entries))
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
