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
	_, task := newCachedTask(t, db)
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

// TestTaskCacheKeepsWhatItReads checks that a live task read from the
// database (a process that did not write it, as after a restart) is kept,
// that the next read takes it from the cache, and that a changed task
// is read as stored again, never as kept.
func TestTaskCacheKeepsWhatItReads(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cache.db")
	db, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	g, task := newCachedTask(t, db)
	msg := task.A2A.History[0]
	must(t, db.Close())

	db, err = OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	inbox := switchboard.TaskFilter{AgentID: &g.ID, States: []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking},
		OldestFirst: true, Limit: 20, NoTotal: true}
	first, _, err := db.FindTasks(ctx, inbox)
	must(t, err)
	if len(first) != 1 || len(db.tasks.entries) != 1 {
		t.Fatalf("read %d tasks, kept %d", len(first), len(db.tasks.entries))
	}
	// What the reader does with its copy stays its own.
	first[0].A2A.History = append(first[0].A2A.History, a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("mine")))
	again, _, err := db.FindTasks(ctx, inbox)
	must(t, err)
	if len(again) != 1 || len(again[0].A2A.History) != 1 || again[0].A2A.History[0].ID != msg.ID {
		t.Fatalf("read again: %+v", again)
	}

	work := func(tk *switchboard.Task) (*switchboard.TaskChange, error) {
		at := time.Now().UTC()
		tk.A2A.Status = a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: &at}
		tk.UpdatedAt = at
		return &switchboard.TaskChange{Events: []a2a.Event{&a2a.TaskStatusUpdateEvent{TaskID: tk.ID(), ContextID: "c", Status: tk.A2A.Status}}}, nil
	}
	_, _, err = db.ModifyTask(ctx, task.ID(), work)
	must(t, err)
	db.tasks.entries = map[a2a.TaskID]*cachedTask{} // only the read below may fill it
	got, err := db.FindTaskByID(ctx, task.ID())
	must(t, err)
	if got.State() != a2a.TaskStateWorking {
		t.Fatalf("state %s, want working", got.State())
	}
	stale := *db.tasks.entries[task.ID()]
	stale.task.Status.State = a2a.TaskStateSubmitted
	stale.seq--
	db.tasks.entries[task.ID()] = &stale // as kept before the change
	got, err = db.FindTaskByID(ctx, task.ID())
	must(t, err)
	if got.State() != a2a.TaskStateWorking {
		t.Fatalf("read the kept task of an older sequence number: %s", got.State())
	}
}

// newCachedTask creates an inbox agent and a submitted task of it with
// one message, "hi", in context "c".
func newCachedTask(t *testing.T, db *DB) (*switchboard.Agent, *switchboard.Task) {
	t.Helper()
	ctx := context.Background()
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "a", Role: switchboard.RoleOwner}
	must(t, db.CreateAccount(ctx, acct))
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "g", Mode: switchboard.ModeInbox, AcceptsTasks: true}
	must(t, db.CreateAgent(ctx, g))
	now := time.Now().UTC()
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))
	task := &switchboard.Task{A2A: a2a.Task{ID: a2a.TaskID(switchboard.NewID()), ContextID: "c", History: []*a2a.Message{msg},
		Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &now}}, AgentID: g.ID, PeerID: "p", PeerLabel: "p",
		Protocol: switchboard.ProtocolV1, CreatedAt: now, UpdatedAt: now}
	_, err := db.CreateTask(ctx, task, &switchboard.TaskChange{MessageID: msg.ID})
	must(t, err)
	return g, task
}
