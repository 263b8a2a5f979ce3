package relay_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// earlyFixture is an agent whose dispatcher writes new tasks with their
// first answer, as a front's does, and a deliverer that answers as a
// front: it records the answer (AckOfferFront, FailUpstream) itself.
type earlyFixture struct {
	*fixture
	agent *switchboard.Agent
	calls atomic.Int64
	// answer is what the deliverer does with an offer; it records the
	// answer and returns ErrAnswerRecorded, or returns an error.
	answer func(ctx context.Context, o *switchboard.Offer) error
	// unwritten is told, for each offer, whether its task was in the
	// store when it was offered.
	unwritten chan bool
	// stop stops the dispatcher, and waits for its attempts.
	stop func()
}

func newEarlyFixture(t *testing.T) *earlyFixture {
	t.Helper()
	return newEarlyFixtureOver(t, nil)
}

// newEarlyFixtureOver is newEarlyFixture with the service over the store
// that wrap makes of the fixture's, if wrap is set.
func newEarlyFixtureOver(t *testing.T, wrap func(*sqlstore.DB) relay.Store) *earlyFixture {
	t.Helper()
	f := &earlyFixture{fixture: newFixture(t, membus.New()), unwritten: make(chan bool, 16)}
	if wrap != nil {
		bus := membus.New()
		t.Cleanup(func() { _ = bus.Close() })
		f.svc = relay.New(wrap(f.db), bus, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}
	// A task in flight stays unwritten until its answer, however slow the
	// test runs; TestWriteOnAnswerSlowAnswer sets it short.
	f.svc.EarlyWriteAfter = time.Minute
	f.agent = f.webhookAgent(t, "front")
	f.peer.AgentID = f.agent.ID
	f.answer = f.complete
	f.stop = f.runDispatcher(t, deliverFunc(func(ctx context.Context, agent *switchboard.Agent, o *switchboard.Offer) (a2a.Event, error) {
		f.calls.Add(1)
		_, err := f.db.FindTaskByID(context.Background(), o.Task.ID())
		select {
		case f.unwritten <- switchboard.ErrorCode(err) == switchboard.ENOTFOUND:
		default:
		}
		if err := f.answer(ctx, o); err != nil {
			return nil, err
		}
		return nil, switchboard.ErrAnswerRecorded
	}), relay.DispatchConfig{Direct: true, WriteOnAnswer: true})
	// Until the dispatcher has registered, tasks are queued, and written
	// first: send until one goes out unwritten.
	testwait.ForErr(t, "a task sent before it is written", func() error {
		f.calls.Store(0)
		if _, err := f.send(t, switchboard.NewID()); err != nil {
			return err
		}
		if !<-f.unwritten {
			return errors.New("the task was written before it was sent")
		}
		return nil
	})
	f.calls.Store(0)
	return f
}

// gate returns a channel that answers wait on and the function that
// opens it, which also runs when the test ends, before the dispatcher
// stops (it waits for the answers).
func gate(t *testing.T) (<-chan struct{}, func()) {
	c := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(c) }) }
	t.Cleanup(open)
	return c, open
}

// holdAnswer makes the deliverer answer with answer, the task of message
// id only once the returned function opens its gate.
func (f *earlyFixture) holdAnswer(t *testing.T, id string, answer func(ctx context.Context, o *switchboard.Offer) error) (open func()) {
	release, open := gate(t)
	f.answer = func(ctx context.Context, o *switchboard.Offer) error {
		if o.Task.A2A.History[0].ID == id {
			<-release
		}
		return answer(ctx, o)
	}
	return open
}

// sendEarly sends a blocking message with id in the background, checks
// that its task goes out unwritten, and returns where the call's error
// comes.
func (f *earlyFixture) sendEarly(t *testing.T, id string) chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() { _, err := f.send(t, id); done <- err }()
	if !<-f.unwritten {
		t.Fatalf("the task of %s was written before it was sent", id)
	}
	return done
}

// sendNoWait sends a message with id and text that does not wait for
// the task's turn, to the peer's task taskID if set.
func (f *earlyFixture) sendNoWait(ctx context.Context, id, text string, taskID a2a.TaskID) error {
	_, _, err := f.svc.SendMessage(ctx, f.agent, f.peer, &a2a.SendMessageRequest{
		Message: &a2a.Message{ID: id, TaskID: taskID, Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart(text)}},
	}, switchboard.ProtocolV1)
	return err
}

// frontMap is the upstream's ids of the task of o, as a front names them.
func frontMap(o *switchboard.Offer) *switchboard.FrontTaskMap {
	return &switchboard.FrontTaskMap{TaskID: o.Task.ID(), AgentID: o.Task.AgentID, PeerID: o.Task.PeerID, ContextID: o.Task.A2A.ContextID,
		UpstreamTaskID: "up-" + string(o.Task.ID()), UpstreamContextID: "up-context"}
}

// complete answers with a message, which completes the task.
func (f *earlyFixture) complete(ctx context.Context, o *switchboard.Offer) error {
	answer := &a2a.Message{ID: switchboard.NewID(), Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart("done")}}
	return f.svc.AckOfferFront(ctx, f.agent, o.Delivery, answer, frontMap(o))
}

// send sends a blocking message with id to the agent and waits for the
// end of its first turn, for up to 10 s.
func (f *earlyFixture) send(t *testing.T, id string) (*switchboard.Task, error) {
	t.Helper()
	wait, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return f.sendUntil(id, wait)
}

func (f *earlyFixture) sendUntil(id string, wait context.Context) (*switchboard.Task, error) {
	return f.svc.SendMessageAndWait(context.Background(), f.agent, f.peer, &a2a.SendMessageRequest{
		Message: &a2a.Message{ID: id, Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("hi")}},
	}, switchboard.ProtocolV1, wait)
}

// TestWriteOnAnswer: a blocking call's new task is sent before it is
// written, then written once with its answer and the upstream's ids, and
// with no delivery; its log starts with the task as created all the same.
func TestWriteOnAnswer(t *testing.T) {
	f := newEarlyFixture(t)
	ctx := context.Background()
	task, err := f.send(t, "m-1")
	must(t, err)
	if task.State() != a2a.TaskStateCompleted || len(task.A2A.History) != 2 || len(task.A2A.Artifacts) != 1 {
		t.Fatalf("the call returned %s with %d messages and %d artifacts", task.State(), len(task.A2A.History), len(task.A2A.Artifacts))
	}
	if !<-f.unwritten {
		t.Fatal("the task was in the store before it was sent")
	}
	stored, err := f.db.FindTaskByID(ctx, task.ID())
	must(t, err)
	if stored.State() != a2a.TaskStateCompleted || stored.PeerID != f.peer.ID {
		t.Fatalf("stored %s for peer %q", stored.State(), stored.PeerID)
	}
	events, err := f.db.FindTaskEvents(ctx, task.ID(), 0, 10)
	must(t, err)
	if len(events) != 3 {
		t.Fatalf("%d events, want the task as created, its artifact and its status", len(events))
	}
	first, ok := events[0].Event.(*a2a.Task)
	if !ok || events[0].Seq != 1 || first.Status.State != a2a.TaskStateSubmitted || len(first.History) != 1 {
		t.Fatalf("first event %d %T, want the task as created", events[0].Seq, events[0].Event)
	}
	if st, ok := events[2].Event.(*a2a.TaskStatusUpdateEvent); !ok || events[2].Seq != 3 || st.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("last event %d %T, want the completed status", events[2].Seq, events[2].Event)
	}
	m, err := f.db.FindFrontTask(ctx, task.ID())
	must(t, err)
	if m.UpstreamTaskID != "up-"+string(task.ID()) {
		t.Fatalf("upstream task %q", m.UpstreamTaskID)
	}
	id := task.ID()
	ds, err := f.db.FindDeliveries(ctx, switchboard.DeliveryFilter{TaskID: &id})
	must(t, err)
	if len(ds) != 0 {
		t.Fatalf("%d deliveries written for a task written with its answer: %+v", len(ds), *ds[0])
	}
	// The same message again gets the same task and is not sent again.
	again, err := f.send(t, "m-1")
	must(t, err)
	if again.ID() != task.ID() || f.calls.Load() != 1 {
		t.Fatalf("sent again: task %s (first %s), %d calls to the upstream", again.ID(), task.ID(), f.calls.Load())
	}
}

// TestWriteOnAnswerSameMessageAtOnce: the same message sent twice at
// once is sent to the upstream once, and both calls get its task.
func TestWriteOnAnswerSameMessageAtOnce(t *testing.T) {
	f := newEarlyFixture(t)
	release, open := gate(t)
	f.answer = func(ctx context.Context, o *switchboard.Offer) error {
		<-release
		return f.complete(ctx, o)
	}
	type result struct {
		task *switchboard.Task
		err  error
	}
	results := make(chan result, 2)
	for range 2 {
		go func() {
			task, err := f.send(t, "m-twice")
			results <- result{task, err}
		}()
	}
	testwait.For(t, "the first call to reach the upstream", func() bool { return f.calls.Load() == 1 })
	open()
	a, b := <-results, <-results
	must(t, a.err)
	must(t, b.err)
	if a.task.ID() != b.task.ID() || f.calls.Load() != 1 {
		t.Fatalf("tasks %s and %s, %d calls to the upstream", a.task.ID(), b.task.ID(), f.calls.Load())
	}
}

// TestWriteOnAnswerSlowAnswer: a task whose answer does not come at once
// is written as created while its call is in flight, and the answer is
// recorded on it as on any task (its delivery acknowledged).
func TestWriteOnAnswerSlowAnswer(t *testing.T) {
	f := newEarlyFixture(t)
	f.svc.EarlyWriteAfter = 50 * time.Millisecond
	f.answer = func(ctx context.Context, o *switchboard.Offer) error {
		testwait.ForErr(t, "the task written while its call is in flight", func() error {
			_, err := f.db.FindTaskByID(ctx, o.Task.ID())
			return err
		})
		return f.complete(ctx, o)
	}
	task, err := f.send(t, "m-slow")
	must(t, err)
	if task.State() != a2a.TaskStateCompleted {
		t.Fatalf("the call returned %s", task.State())
	}
	id := task.ID()
	ds, err := f.db.FindDeliveries(context.Background(), switchboard.DeliveryFilter{TaskID: &id})
	must(t, err)
	if len(ds) != 1 || ds[0].State != switchboard.DeliveryAcked {
		t.Fatalf("deliveries %+v, want one acknowledged", ds)
	}
	if _, err := f.db.FindFrontTask(context.Background(), id); err != nil {
		t.Fatalf("the upstream's ids: %v", err)
	}
}

// TestWriteOnAnswerWaitEnds: a call whose wait ends before the answer
// gets the task as created, written then; the answer is recorded on it
// when it comes.
func TestWriteOnAnswerWaitEnds(t *testing.T) {
	f := newEarlyFixture(t)
	release, open := gate(t)
	f.answer = func(ctx context.Context, o *switchboard.Offer) error {
		<-release
		return f.complete(ctx, o)
	}
	wait, cancel := context.WithCancel(context.Background())
	cancel()
	task, err := f.sendUntil("m-wait", wait)
	must(t, err)
	if task.State() != a2a.TaskStateSubmitted {
		t.Fatalf("the call returned %s, want the task as created", task.State())
	}
	if _, err := f.db.FindTaskByID(context.Background(), task.ID()); err != nil {
		t.Fatalf("the task returned is not written: %v", err)
	}
	open()
	testwait.For(t, "the answer recorded", func() bool {
		stored, err := f.db.FindTaskByID(context.Background(), task.ID())
		return err == nil && stored.State() == a2a.TaskStateCompleted
	})
}

// TestWriteOnAnswerFailures: an upstream's failure, or an answer that
// cannot be applied, is written with the task as its end, and the call
// answers as it would for a task written first.
func TestWriteOnAnswerFailures(t *testing.T) {
	f := newEarlyFixture(t)
	tests := map[string]struct {
		answer func(ctx context.Context, o *switchboard.Offer) error
		code   switchboard.Code
	}{
		"Upstream": {func(ctx context.Context, o *switchboard.Offer) error {
			return f.svc.FailUpstream(ctx, f.agent, o.Delivery, false, "the agent behind this address failed", frontMap(o))
		}, switchboard.EUPSTREAM},
		"InvalidAnswer": {func(ctx context.Context, o *switchboard.Offer) error {
			empty := &a2a.TaskArtifactUpdateEvent{TaskID: o.Task.ID(), ContextID: o.Task.A2A.ContextID, Artifact: &a2a.Artifact{ID: "a"}}
			return f.svc.AckOfferFront(ctx, f.agent, o.Delivery, empty, nil)
		}, switchboard.EINVALIDAGENTRESPONSE},
	}
	n := 0
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			f.answer = tt.answer
			n++
			task, err := f.send(t, fmt.Sprintf("m-fail-%d", n))
			if switchboard.ErrorCode(err) != tt.code || task == nil || task.State() != a2a.TaskStateFailed {
				t.Fatalf("got %v with %v, want %s with the failed task", err, task, tt.code)
			}
			events, err := f.db.FindTaskEvents(context.Background(), task.ID(), 0, 10)
			must(t, err)
			if len(events) != 2 || events[0].Seq != 1 {
				t.Fatalf("%d events, want the task as created and its failure", len(events))
			}
			if !relay.InvalidAnswer(events[1].Event) && tt.code == switchboard.EINVALIDAGENTRESPONSE {
				t.Fatal("the failure is not marked as an invalid answer")
			}
		})
	}
	if _, err := f.db.FindFrontTask(context.Background(), a2a.TaskID("none")); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("a task that never was has upstream ids: %v", err)
	}
}

// TestWriteOnAnswerFollowUp: a task written with an answer that asks for
// input takes its peer's next message, which is delivered as to any task
// that was offered.
func TestWriteOnAnswerFollowUp(t *testing.T) {
	f := newEarlyFixture(t)
	kinds := make(chan switchboard.DeliveryKind, 2)
	f.answer = func(ctx context.Context, o *switchboard.Offer) error {
		kinds <- o.Delivery.Kind
		if o.Delivery.Kind == switchboard.DeliverTask {
			ask := &a2a.TaskStatusUpdateEvent{TaskID: o.Task.ID(), ContextID: o.Task.A2A.ContextID,
				Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired, Message: &a2a.Message{ID: switchboard.NewID(), Role: a2a.MessageRoleAgent,
					Parts: a2a.ContentParts{a2a.NewTextPart("which colour?")}}}}
			return f.svc.AckOfferFront(ctx, f.agent, o.Delivery, ask, frontMap(o))
		}
		return f.complete(ctx, o)
	}
	task, err := f.send(t, "m-ask")
	must(t, err)
	if task.State() != a2a.TaskStateInputRequired || !task.Offered {
		t.Fatalf("the first turn ended %s, offered %v", task.State(), task.Offered)
	}
	wait, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	task, err = f.svc.SendMessageAndWait(context.Background(), f.agent, f.peer, &a2a.SendMessageRequest{
		Message: &a2a.Message{ID: "m-blue", TaskID: task.ID(), Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("blue")}},
	}, switchboard.ProtocolV1, wait)
	must(t, err)
	if task.State() != a2a.TaskStateCompleted {
		t.Fatalf("the follow-up ended %s", task.State())
	}
	if a, b := <-kinds, <-kinds; a != switchboard.DeliverTask || b != switchboard.DeliverMessage {
		t.Fatalf("delivered %s then %s", a, b)
	}
}

// TestWriteOnAnswerDispatcherStops: a task in flight, unwritten, when its
// dispatcher stops is written as created, its delivery queued again for
// another dispatcher; its caller gets it as it stands.
func TestWriteOnAnswerDispatcherStops(t *testing.T) {
	f := newEarlyFixture(t)
	started := make(chan struct{})
	f.answer = func(ctx context.Context, o *switchboard.Offer) error {
		close(started)
		<-ctx.Done()
		return ctx.Err()
	}
	type result struct {
		task *switchboard.Task
		err  error
	}
	done := make(chan result, 1)
	wait, cancel := context.WithCancel(context.Background())
	go func() {
		task, err := f.sendUntil("m-stop", wait)
		done <- result{task, err}
	}()
	<-started
	f.stop()
	cancel() // as a server's shutdown ends the blocking calls' waits
	r := <-done
	must(t, r.err)
	if r.task.State() != a2a.TaskStateSubmitted {
		t.Fatalf("the call returned %s, want the task as created", r.task.State())
	}
	id := r.task.ID()
	ds, err := f.db.FindDeliveries(context.Background(), switchboard.DeliveryFilter{TaskID: &id})
	must(t, err)
	if len(ds) != 1 || ds[0].State != switchboard.DeliveryQueued {
		t.Fatalf("deliveries %+v, want one queued again", ds)
	}
}
