package relay_test

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// countingStore counts the reads of whole tasks, and tells of each read of
// a task's events.
type countingStore struct {
	*sqlstore.DB
	taskReads  atomic.Int64
	eventReadN atomic.Int64
	eventReads chan struct{}
}

func (c *countingStore) FindTaskByID(ctx context.Context, id a2a.TaskID) (*switchboard.Task, error) {
	c.taskReads.Add(1)
	return c.DB.FindTaskByID(ctx, id)
}

func (c *countingStore) FindTaskEvents(ctx context.Context, id a2a.TaskID, afterSeq int64, limit int) ([]*switchboard.TaskEvent, error) {
	evs, err := c.DB.FindTaskEvents(ctx, id, afterSeq, limit)
	c.eventReadN.Add(1)
	select {
	case c.eventReads <- struct{}{}:
	default:
	}
	return evs, err
}

// newConnectorFixture is newFixture with its agent in connector mode, and a
// logger for more task services.
func newConnectorFixture(t *testing.T, bus switchboard.Bus) (*fixture, *switchboard.Agent, *slog.Logger) {
	t.Helper()
	f := newFixture(t, bus)
	mode := switchboard.ModeConnector
	g, err := f.db.UpdateAgent(context.Background(), f.agent.ID, switchboard.AgentUpdate{Mode: &mode})
	must(t, err)
	return f, g, slog.New(slog.NewTextHandler(io.Discard, nil))
}

// TestTurnEndHandedOverInMemory checks that a blocking wait on the
// instance that records the end of the turn gets the task as written
// without reading it back, that one on another instance gets the same from
// the store, and that an invalid answer is reported either way.
func TestTurnEndHandedOverInMemory(t *testing.T) {
	ctx := context.Background()
	bus := membus.New()
	f, g, log := newConnectorFixture(t, bus)
	here := &countingStore{DB: f.db, eventReads: make(chan struct{}, 1)}
	local := relay.New(here, bus, log)     // records the answer and waits
	elsewhere := relay.New(f.db, bus, log) // waits only
	answer := func(svc *relay.Service, id a2a.TaskID, invalid bool) {
		if invalid {
			must(t, svc.FailAgentTask(ctx, g, id, "garbled", true))
			return
		}
		_, err := svc.ApplyAgentEvent(ctx, g, id, a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("4")))
		must(t, err)
	}
	for _, tc := range []struct {
		name    string
		waiter  *relay.Service
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
			select {
			case <-here.eventReads: // left over from an earlier case
			default:
			}
			go func() {
				got, err := tc.waiter.WaitForTurn(ctx, task.ID(), task.Seq, 10*time.Second)
				done <- result{got, err}
			}()
			// Answer once the wait has begun: registered, and (on this
			// instance) past its first look at the log, so that the answer
			// comes while it waits, as a real one does.
			testwait.For(t, "the wait to begin", func() bool { return tc.waiter.TurnWaiters(task.ID()) > 0 })
			if tc.waiter == local {
				select {
				case <-here.eventReads:
				case <-time.After(5 * time.Second):
					t.Fatal("the wait did not read the log")
				}
			}
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

// TestSendAndWaitReadsOnlyTheAnswer checks that a blocking send of a new
// task watches it from before it is committed, so that its wait reads
// nothing until the answer: on the instance that records the answer, not
// even that (it is handed over), and on another, the log once and the task
// once. Each case runs in a synctest bubble, so that the answer comes to a
// wait already blocked, as a real agent's does, every time.
func TestSendAndWaitReadsOnlyTheAnswer(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name                  string
		sameInstance          bool
		eventReads, taskReads int64
	}{
		{"same instance", true, 0, 0},
		{"other instance", false, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				bus := membus.New()
				f, g, log := newConnectorFixture(t, bus)
				store := &countingStore{DB: f.db, eventReads: make(chan struct{}, 1)}
				waiter := relay.New(store, bus, log)
				recorder := relay.New(f.db, bus, log)
				if tc.sameInstance {
					recorder = waiter
				}
				text := "2+2? " + tc.name
				type result struct {
					task *switchboard.Task
					err  error
				}
				done := make(chan result, 1)
				go func() {
					wait, cancel := context.WithTimeout(ctx, 10*time.Second)
					defer cancel()
					got, err := waiter.SendMessageAndWait(ctx, g, f.peer, &a2a.SendMessageRequest{
						Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text)),
					}, switchboard.ProtocolV1, wait)
					done <- result{got, err}
				}()
				var id a2a.TaskID
				testwait.For(t, "the task to be created and waited for", func() bool {
					tasks, _, err := f.db.FindTasks(ctx, switchboard.TaskFilter{AgentID: &g.ID})
					must(t, err)
					for _, tk := range tasks {
						if switchboard.MessageText(tk.A2A.History[0]) == text && waiter.TurnWaiters(tk.ID()) > 0 {
							id = tk.ID()
						}
					}
					return id != ""
				})
				// The answer comes to a wait already blocked, as a real agent's
				// does. The reads checked below are the same whenever the answer
				// comes once the wait is registered (it watches the task's log
				// from before the task was committed); this makes the usual
				// order the one tested.
				synctest.Wait()
				_, err := recorder.ApplyAgentEvent(ctx, g, id, a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("4")))
				must(t, err)
				r := <-done
				must(t, r.err)
				if r.task == nil || r.task.ID() != id || r.task.State() != a2a.TaskStateCompleted {
					t.Fatalf("the wait returned %+v, want task %s completed", r.task, id)
				}
				if n, m := store.eventReadN.Load(), store.taskReads.Load(); n != tc.eventReads || m != tc.taskReads {
					t.Fatalf("the wait read the log %d times and the task %d, want %d and %d", n, m, tc.eventReads, tc.taskReads)
				}
			})
		})
	}
}
