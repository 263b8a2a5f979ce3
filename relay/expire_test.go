package relay_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/relay"
)

// TestExpireFinishedTasks: with the service's clock moved past the
// retention period, the tasks that finished before it are deleted (more
// than one batch of them), and the recent and unfinished ones stay.
func TestExpireFinishedTasks(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, membus.New())
	day := 24 * time.Hour
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.svc.Now = func() time.Time { return now }
	f.db.Now = func() time.Time { return now }

	old := relay.ExpiryBatch + 3
	var expired []*switchboard.Task
	for i := range old {
		task := f.send(t, fmt.Sprint("old-", i), "hello")
		_, err := f.svc.CancelTask(ctx, f.agent, f.peer, task.ID())
		must(t, err)
		expired = append(expired, task)
	}
	unfinished := f.send(t, "unfinished", "still waiting")
	now = now.Add(20 * day)
	recent := f.send(t, "recent", "hello")
	_, err := f.svc.CancelTask(ctx, f.agent, f.peer, recent.ID())
	must(t, err)

	now = now.Add(11 * day) // the old ones finished 31 days ago, the recent one 11
	n, err := f.svc.ExpireFinishedTasks(ctx, 30*day)
	must(t, err)
	if n != old {
		t.Fatalf("expired %d tasks, want %d", n, old)
	}
	for _, task := range expired[:3] {
		if _, err := f.db.FindTaskByID(ctx, task.ID()); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
			t.Fatalf("expired task %s: %v", task.ID(), err)
		}
	}
	for _, task := range []*switchboard.Task{unfinished, recent} {
		got, err := f.db.FindTaskByID(ctx, task.ID())
		must(t, err)
		if task == unfinished && got.State() != a2a.TaskStateSubmitted {
			t.Fatalf("unfinished task is %s", got.State())
		}
	}
	if n, err := f.svc.ExpireFinishedTasks(ctx, 30*day); err != nil || n != 0 {
		t.Fatalf("second pass expired %d (%v)", n, err)
	}
	if err := f.svc.RunTaskExpiry(ctx, 0, 0); err != nil {
		t.Fatalf("retention 0: %v", err) // returns at once: keeps tasks forever
	}
}
