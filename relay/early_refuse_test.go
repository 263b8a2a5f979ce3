package relay_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/testwait"
)

// holdOpen writes n unfinished tasks of the fixture's peer on its agent,
// as another path would while a task is in flight unwritten.
func (f *earlyFixture) holdOpen(t *testing.T, n int) {
	t.Helper()
	for range n {
		now := time.Now().UTC()
		task := &switchboard.Task{
			A2A: a2a.Task{ID: a2a.TaskID(switchboard.NewID()), ContextID: switchboard.NewID(),
				Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: &now}},
			AgentID: f.agent.ID, PeerID: f.peer.ID, PeerLabel: f.peer.Label, PeerKind: f.peer.Kind, CreatedAt: now, UpdatedAt: now,
		}
		if _, err := f.db.CreateTask(context.Background(), task, &switchboard.TaskChange{MessageID: switchboard.NewID()}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWriteOnAnswerRefused: a task whose write with its first answer is
// refused (here the peer's open tasks filled its quota while it was in
// flight) is the caller's refusal: nothing is written, the deliverer is
// told to stop (ErrTaskUnwritten) rather than to fail the task, and the
// message may be sent again once the quota allows. That holds for an
// answer that completes the task too: the write checks the quota as if
// it were still open, as it was while in flight.
func TestWriteOnAnswerRefused(t *testing.T) {
	for _, state := range []a2a.TaskState{a2a.TaskStateWorking, a2a.TaskStateCompleted} {
		t.Run(string(state), func(t *testing.T) {
			f := newEarlyFixture(t)
			f.svc.MaxOpenTasksPerPeer = 2
			answered := make(chan error, 1)
			f.answer = func(ctx context.Context, o *switchboard.Offer) error {
				f.holdOpen(t, 2)
				ev := &a2a.TaskStatusUpdateEvent{TaskID: o.Task.ID(), ContextID: o.Task.A2A.ContextID, Status: a2a.TaskStatus{State: state}}
				err := f.svc.AckOfferFront(ctx, f.agent, o.Delivery, ev, frontMap(o))
				answered <- err
				return err
			}
			task, err := f.send(t, "m-refused")
			if switchboard.ErrorCode(err) != switchboard.EQUOTA || task != nil {
				t.Fatalf("got %v, %v; want the quota's refusal", task, err)
			}
			if err := <-answered; !errors.Is(err, switchboard.ErrTaskUnwritten) {
				t.Fatalf("the deliverer was told %v, want ErrTaskUnwritten", err)
			}
			if !<-f.unwritten {
				t.Fatal("the task was written before it was sent")
			}
			if _, err := f.db.FindTaskByMessageID(context.Background(), f.agent.ID, f.peer.ID, "m-refused"); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
				t.Fatalf("the refused message's task: %v, want none", err)
			}
			open, _, err := f.db.PeerUsage(context.Background(), f.agent.ID, f.peer.ID)
			must(t, err)
			if open != 2 {
				t.Fatalf("the peer holds %d open tasks, want the 2 that filled its quota", open)
			}
			f.svc.MaxOpenTasksPerPeer = 10
			f.answer = f.complete
			task, err = f.send(t, "m-refused")
			must(t, err)
			if task.State() != a2a.TaskStateCompleted {
				t.Fatalf("sent again, the message's task is %s", task.State())
			}
		})
	}
}

// TestWriteOnAnswerAtQuota: a task is sent before it is written only
// while its peer's quotas surely pass with it and every other task of the
// peer in flight unwritten; otherwise it is written first, as usual, and
// the quota counts the tasks in flight, so a message over the quota never
// reaches the agent.
func TestWriteOnAnswerAtQuota(t *testing.T) {
	f := newEarlyFixture(t)
	f.svc.MaxOpenTasksPerPeer = 3
	f.holdOpen(t, 1)
	release, open := gate(t)
	f.answer = func(ctx context.Context, o *switchboard.Offer) error {
		<-release
		return f.complete(ctx, o)
	}
	errs := make(chan error, 2)
	for i := range 2 { // one open task, two in flight: the quota is full
		go func() {
			_, err := f.send(t, fmt.Sprint("m-", i+1))
			errs <- err
		}()
		if !<-f.unwritten {
			t.Fatalf("task %d was written before it was sent", i+1)
		}
	}
	// Written first, and refused: the two in flight count.
	if _, err := f.send(t, "m-3"); switchboard.ErrorCode(err) != switchboard.EQUOTA || f.calls.Load() != 2 {
		t.Fatalf("over the quota with tasks in flight: got %v after %d calls to the agent, want EQUOTA and 2", err, f.calls.Load())
	}
	// Non-blocking, by the way that is always written first: the same.
	err := f.sendNoWait(context.Background(), "m-4", "hi", "")
	if switchboard.ErrorCode(err) != switchboard.EQUOTA {
		t.Fatalf("a call that does not wait, over the quota with tasks in flight: %v, want EQUOTA", err)
	}
	open()
	for range 2 {
		must(t, <-errs)
	}

	f.holdOpen(t, 2)
	calls := f.calls.Load()
	_, err = f.send(t, "m-over")
	if switchboard.ErrorCode(err) != switchboard.EQUOTA || f.calls.Load() != calls {
		t.Fatalf("over the quota: got %v after %d calls to the agent, want EQUOTA and none", err, f.calls.Load()-calls)
	}

	// Bytes: a peer whose tasks may not hold a task's worth more is
	// written first.
	g := newEarlyFixture(t)
	g.svc.MaxPeerBytes = switchboard.MaxTaskBytes / 2
	task, err := g.send(t, "m-bytes")
	must(t, err)
	if task.State() != a2a.TaskStateCompleted || <-g.unwritten {
		t.Fatalf("the call returned %s, and the task was sent unwritten", task.State())
	}
}

// TestWriteOnAnswerSameMessageOtherPath: a copy of a message in flight
// unwritten that comes by another path (a call that does not wait) waits
// for the first to be written and gets its task: the agent gets it once.
func TestWriteOnAnswerSameMessageOtherPath(t *testing.T) {
	f := newEarlyFixture(t)
	release, open := gate(t)
	f.answer = func(ctx context.Context, o *switchboard.Offer) error {
		<-release
		return f.complete(ctx, o)
	}
	first := make(chan *switchboard.Task, 1)
	go func() {
		task, err := f.send(t, "m-both")
		if err != nil {
			t.Error(err)
		}
		first <- task
	}()
	testwait.For(t, "the first copy to reach the agent", func() bool { return f.calls.Load() == 1 })
	type result struct {
		task     *switchboard.Task
		replayed bool
		err      error
	}
	second := make(chan result, 1)
	go func() {
		task, replayed, err := f.svc.SendMessage(context.Background(), f.agent, f.peer, &a2a.SendMessageRequest{
			Message: &a2a.Message{ID: "m-both", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("hi")}},
		}, switchboard.ProtocolV1)
		second <- result{task, replayed, err}
	}()
	testwait.For(t, "the copy to wait for the first", func() bool {
		select {
		case r := <-second:
			second <- r
			return true // sent without waiting: the check below fails
		default:
			return f.svc.MessageWaiters(f.agent.ID, f.peer.ID, "m-both") == 1
		}
	})
	open()
	a, b := <-first, <-second
	must(t, b.err)
	if a == nil || b.task.ID() != a.ID() || !b.replayed || f.calls.Load() != 1 {
		t.Fatalf("the copy got task %s (replayed %v), the first %v; %d calls to the agent", b.task.ID(), b.replayed, a != nil && a.ID() == b.task.ID(), f.calls.Load())
	}
}

// TestWriteOnAnswerRefusedCopy: a copy of a message that waited for the
// first, which was refused, is not told that the task does not exist: it
// is sent in turn, and refused as the first was.
func TestWriteOnAnswerRefusedCopy(t *testing.T) {
	f := newEarlyFixture(t)
	f.svc.MaxOpenTasksPerPeer = 1
	release, open := gate(t)
	f.answer = func(ctx context.Context, o *switchboard.Offer) error {
		<-release
		f.holdOpen(t, 1)
		return f.complete(ctx, o)
	}
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := f.send(t, "m-copy")
			errs <- err
		}()
	}
	testwait.For(t, "the first copy to reach the agent", func() bool { return f.calls.Load() == 1 })
	open()
	for range 2 {
		if err := <-errs; switchboard.ErrorCode(err) != switchboard.EQUOTA {
			t.Fatalf("a copy got %v, want the quota's refusal", err)
		}
	}
	if n := f.calls.Load(); n != 1 {
		t.Fatalf("%d calls to the agent, want 1: the copy, at the quota, is written first and refused", n)
	}
}

// TestWriteOnAnswerAtShutdown: a first answer that comes as the
// dispatcher stops is written all the same: the agent took the task.
func TestWriteOnAnswerAtShutdown(t *testing.T) {
	f := newEarlyFixture(t)
	started := make(chan struct{})
	f.answer = func(ctx context.Context, o *switchboard.Offer) error {
		close(started)
		<-ctx.Done()
		return f.complete(ctx, o) // the front's answer, read as the attempt is cut short
	}
	done := make(chan *switchboard.Task, 1)
	go func() {
		task, err := f.send(t, "m-late")
		if err != nil {
			t.Error(err)
		}
		done <- task
	}()
	<-started
	f.stop()
	task := <-done
	if task == nil || task.State() != a2a.TaskStateCompleted {
		t.Fatalf("the call returned %v, want the task completed", task)
	}
	stored, err := f.db.FindTaskByID(context.Background(), task.ID())
	must(t, err)
	if stored.State() != a2a.TaskStateCompleted {
		t.Fatalf("stored %s", stored.State())
	}
}

// TestWriteOnAnswerRefusedBeforeTheAnswer: a task written as created
// while in flight (its caller stopped waiting) and refused then (its
// peer's quota filled meanwhile) is the caller's refusal at once; the
// answer that comes later is told ErrTaskUnwritten, as for a task refused
// with its answer, so the deliverer stops the agent's work and records
// no failure of it.
func TestWriteOnAnswerRefusedBeforeTheAnswer(t *testing.T) {
	f := newEarlyFixture(t)
	f.svc.MaxOpenTasksPerPeer = 1
	wait, stopWaiting := context.WithCancel(context.Background())
	called := make(chan error, 1)
	answered := make(chan struct{})
	f.answer = func(ctx context.Context, o *switchboard.Offer) error {
		f.holdOpen(t, 1)
		stopWaiting()
		<-answered // the caller has its answer
		err := f.complete(ctx, o)
		called <- err
		return err
	}
	task, err := f.sendUntil("m-early-refused", wait)
	close(answered)
	if switchboard.ErrorCode(err) != switchboard.EQUOTA || task != nil {
		t.Fatalf("got %v, %v; want the quota's refusal", task, err)
	}
	if err := <-called; !errors.Is(err, switchboard.ErrTaskUnwritten) {
		t.Fatalf("the answer was told %v, want ErrTaskUnwritten", err)
	}
	if _, err := f.db.FindTaskByMessageID(context.Background(), f.agent.ID, f.peer.ID, "m-early-refused"); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("the refused message's task: %v, want none", err)
	}
}
