package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

var expireTests = map[string]func(*testing.T, Store){
	"ExpireTasksOldFinishedOnly": testExpireTasks,
	"ExpireTasksConcurrent":      testExpireTasksConcurrent,
}

// storedTask creates a task with a push configuration and a queued
// delivery at created, then, unless state is submitted, moves it to state
// at statusAt with one status event and a follow-up message id.
func storedTask(t *testing.T, s Store, g *switchboard.Agent, messageID string, created time.Time, state a2a.TaskState, statusAt time.Time) *switchboard.Task {
	t.Helper()
	ctx := context.Background()
	task, _ := queueTask(t, s, g, messageID, created)
	must(t, s.SavePushConfig(ctx, &switchboard.PushConfig{
		Config:   a2a.PushConfig{TaskID: task.ID(), ID: "p", URL: "https://example.com/push", Token: "tok"},
		Protocol: switchboard.ProtocolV1, CreatedAt: created,
	}))
	if state == a2a.TaskStateSubmitted {
		return task
	}
	_, _, err := s.ModifyTask(ctx, task.ID(), func(tk *switchboard.Task) (*switchboard.TaskChange, error) {
		at := statusAt.UTC()
		tk.A2A.Status = a2a.TaskStatus{State: state, Timestamp: &at}
		tk.UpdatedAt = at
		return &switchboard.TaskChange{MessageID: messageID + "-2", Events: []a2a.Event{
			&a2a.TaskStatusUpdateEvent{TaskID: tk.ID(), ContextID: tk.A2A.ContextID, Status: tk.A2A.Status},
		}}, nil
	})
	must(t, err)
	return task
}

// taskRowsLeft counts what the store still holds of a task: the task,
// its events, its message ids, its push configurations, its deliveries.
func taskRowsLeft(t *testing.T, s Store, task *switchboard.Task) int {
	t.Helper()
	ctx := context.Background()
	n := 0
	if _, err := s.FindTaskByID(ctx, task.ID()); err == nil {
		n++
	} else {
		wantCode(t, err, switchboard.ENOTFOUND)
	}
	evs, err := s.FindTaskEvents(ctx, task.ID(), 0, 0)
	must(t, err)
	n += len(evs)
	for _, m := range []string{task.A2A.History[0].ID, task.A2A.History[0].ID + "-2"} {
		if _, err := s.FindTaskByMessageID(ctx, task.AgentID, task.PeerID, m); err == nil {
			n++
		}
	}
	pcs, err := s.FindPushConfigs(ctx, task.ID())
	must(t, err)
	n += len(pcs)
	id := task.ID()
	ds, err := s.FindDeliveries(ctx, switchboard.DeliveryFilter{TaskID: &id})
	must(t, err)
	return n + len(ds)
}

func testExpireTasks(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	old := now.Add(-40 * day)
	expired := []*switchboard.Task{ // oldest finished first
		storedTask(t, s, g, "completed", old, a2a.TaskStateCompleted, now.Add(-35*day)),
		storedTask(t, s, g, "failed", old, a2a.TaskStateFailed, now.Add(-34*day)),
		storedTask(t, s, g, "canceled", old, a2a.TaskStateCanceled, now.Add(-33*day)),
		storedTask(t, s, g, "rejected", old, a2a.TaskStateRejected, now.Add(-32*day)),
	}
	kept := []*switchboard.Task{
		storedTask(t, s, g, "recent", old, a2a.TaskStateCompleted, now.Add(-29*day)),
		storedTask(t, s, g, "working", old, a2a.TaskStateWorking, now.Add(-39*day)),
		storedTask(t, s, g, "input", old, a2a.TaskStateInputRequired, now.Add(-39*day)),
		storedTask(t, s, g, "submitted", old, a2a.TaskStateSubmitted, old),
	}
	keptRows := make([]int, len(kept))
	for i, task := range kept {
		keptRows[i] = taskRowsLeft(t, s, task)
	}
	if n := taskRowsLeft(t, s, expired[0]); n != 7 { // task, 2 events, 2 message ids, push config, delivery
		t.Fatalf("a finished task holds %d rows, want 7", n)
	}
	cutoff := now.Add(-30 * day)

	n, err := s.ExpireTasks(ctx, cutoff, 1)
	must(t, err)
	if n != 1 || taskRowsLeft(t, s, expired[0]) != 0 || taskRowsLeft(t, s, expired[1]) == 0 {
		t.Fatalf("first batch of 1 deleted %d; the oldest finished task should be gone alone", n)
	}
	n, err = s.ExpireTasks(ctx, cutoff, 10)
	must(t, err)
	if n != 3 {
		t.Fatalf("second batch deleted %d tasks, want 3", n)
	}
	for _, task := range expired {
		if left := taskRowsLeft(t, s, task); left != 0 {
			t.Errorf("expired task %s (%s) left %d rows", task.ID(), task.A2A.History[0].ID, left)
		}
	}
	for i, task := range kept {
		if left := taskRowsLeft(t, s, task); left != keptRows[i] {
			t.Errorf("kept task %s lost rows: %d of %d left", task.A2A.History[0].ID, left, keptRows[i])
		}
	}
	n, err = s.ExpireTasks(ctx, cutoff, 10)
	must(t, err)
	if n != 0 {
		t.Fatalf("a third pass deleted %d tasks", n)
	}
	if n, err := s.ExpireTasks(ctx, now, 0); err != nil || n != 0 {
		t.Fatalf("max 0 deleted %d (%v)", n, err)
	}
}

// testExpireTasksConcurrent runs expiry on several goroutines (as
// instances would): together they delete each task once.
func testExpireTasksConcurrent(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	now := time.Now().UTC()
	const tasks = 12
	for i := range tasks {
		storedTask(t, s, g, "m"+string(rune('a'+i)), now.Add(-time.Hour), a2a.TaskStateCompleted, now.Add(-time.Hour+time.Duration(i)*time.Second))
	}
	var mu sync.Mutex
	total := 0
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				n, err := s.ExpireTasks(ctx, now, 2)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				total += n
				mu.Unlock()
				if n == 0 {
					return
				}
			}
		})
	}
	wg.Wait()
	if total != tasks {
		t.Fatalf("deleted %d tasks in all, want %d", total, tasks)
	}
}
