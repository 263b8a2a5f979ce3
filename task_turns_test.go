package switchboard_test

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// countingStore counts the reads of whole tasks.
type countingStore struct {
	*sqlstore.DB
	taskReads atomic.Int64
}

func (c *countingStore) FindTaskByID(ctx context.Context, id a2a.TaskID) (*switchboard.Task, error) {
	c.taskReads.Add(1)
	return c.DB.FindTaskByID(ctx, id)
}

// TestTurnEndHandedOverInMemory checks that a blocking wait on the
// instance that records the end of the turn gets the task as written
// without reading it back, that one on another instance gets the same from
// the store, and that an invalid answer is reported either way.
func TestTurnEndHandedOverInMemory(t *testing.T) {
	ctx := context.Background()
	bus := membus.New()
	f := newFixture(t, bus)
	mode := switchboard.ModeConnector
	g, err := f.db.UpdateAgent(ctx, f.agent.ID, switchboard.AgentUpdate{Mode: &mode})
	must(t, err)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	here := &countingStore{DB: f.db}
	local := switchboard.NewTaskService(here, bus, log)     // records the answer and waits
	elsewhere := switchboard.NewTaskService(f.db, bus, log) // waits only
	answer := func(svc *switchboard.TaskService, id a2a.TaskID, invalid bool) {
		if invalid {
			must(t, svc.FailAgentTask(ctx, g, id, "garbled", true))
			return
		}
		_, err := svc.ApplyAgentEvent(ctx, g, id, a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("4")))
		must(t, err)
	}
	for _, tc := range []struct {
		name    string
		waiter  *switchboard.TaskService
		invalid bool
	}{
		{"same instance", local, false},
		{"same instance, invalid answer", local, true},
		{"other instance", elsewhere, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			task, _, err := local.SendMessage(ctx, g, f.peer, &a2a.SendMessageRequest{
				Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("2+2?")),
			}, switchboard.ProtocolV1)
			must(t, err)
			type result struct {
				task *switchboard.Task
				err  error
			}
			done := make(chan result, 1)
			before := here.taskReads.Load()
			go func() {
				got, err := tc.waiter.WaitForTurn(ctx, task.ID(), task.Seq, 10*time.Second)
				done <- result{got, err}
			}()
			time.Sleep(50 * time.Millisecond) // let the wait begin
			answer(local, task.ID(), tc.invalid)
			r := <-done
			want := a2a.TaskStateCompleted
			if tc.invalid {
				want = a2a.TaskStateFailed
				if switchboard.ErrorCode(r.err) != switchboard.EINVALIDAGENTRESPONSE {
					t.Fatalf("err %v, want an invalid agent response", r.err)
				}
			} else {
				must(t, r.err)
			}
			if r.task == nil || r.task.State() != want || r.task.ID() != task.ID() {
				t.Fatalf("wait returned %+v, want the task %s", r.task, want)
			}
			if n := here.taskReads.Load() - before; tc.waiter == local && n != 0 {
				t.Fatalf("the task was read %d times while waiting on the instance that wrote it", n)
			}
		})
	}
}
