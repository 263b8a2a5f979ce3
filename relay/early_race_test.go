package relay_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// pausingStore holds the next read of a peer's usage (with the message's
// id), once armed, after the read and before it returns: it says so on paused, and returns when
// resume is closed.
type pausingStore struct {
	*sqlstore.DB
	armed  atomic.Bool
	paused chan struct{}
	resume chan struct{}
}

func (s *pausingStore) MessageUsage(ctx context.Context, agentID, peerID, messageID string) (bool, int, int64, error) {
	sent, open, bytes, err := s.DB.MessageUsage(ctx, agentID, peerID, messageID)
	if s.armed.CompareAndSwap(true, false) {
		close(s.paused)
		<-s.resume
	}
	return sent, open, bytes, err
}

// TestWriteOnAnswerUsageChangesDuringTheRead: a task whose peer's usage
// changed on this instance while it read it (here another of its tasks
// was written) is written first, not sent on a count that may not hold
// the change: a message over the quota never reaches the agent.
func TestWriteOnAnswerUsageChangesDuringTheRead(t *testing.T) {
	ps := &pausingStore{paused: make(chan struct{}), resume: make(chan struct{})}
	f := newEarlyFixtureOver(t, func(db *sqlstore.DB) relay.Store { ps.DB = db; return ps })
	f.svc.MaxOpenTasksPerPeer = 2
	f.holdOpen(t, 1)
	release, open := gate(t)
	f.answer = func(ctx context.Context, o *switchboard.Offer) error {
		if o.Task.A2A.History[0].ID == "m-b" {
			<-release
		}
		ask := &a2a.TaskStatusUpdateEvent{TaskID: o.Task.ID(), ContextID: o.Task.A2A.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired}}
		return f.svc.AckOfferFront(ctx, f.agent, o.Delivery, ask, frontMap(o))
	}
	b := make(chan error, 1)
	go func() { // one open, B in flight: the quota is full
		_, err := f.send(t, "m-b")
		b <- err
	}()
	if !<-f.unwritten {
		t.Fatal("B was written before it was sent")
	}
	ps.armed.Store(true)
	a := make(chan error, 1)
	go func() {
		_, err := f.send(t, "m-a")
		a <- err
	}()
	<-ps.paused // A has read one open task, B unwritten and counted in memory
	open()
	must(t, <-b) // B written: two open, and no longer counted in memory
	close(ps.resume)
	if err := <-a; switchboard.ErrorCode(err) != switchboard.EQUOTA || f.calls.Load() != 1 {
		t.Fatalf("A, over the quota: %v after %d calls to the agent, want EQUOTA after B's alone", err, f.calls.Load())
	}
}

// TestWriteOnAnswerRefusalStopsTheAttempt: a task refused while in flight
// ends the attempt that sent it, with a cause that says so, so that the
// deliverer stops the agent's work at once.
func TestWriteOnAnswerRefusalStopsTheAttempt(t *testing.T) {
	f := newEarlyFixture(t)
	f.svc.MaxOpenTasksPerPeer = 1
	wait, stopWaiting := context.WithCancel(context.Background())
	cause := make(chan error, 1)
	f.answer = func(ctx context.Context, o *switchboard.Offer) error {
		f.holdOpen(t, 1)
		stopWaiting() // the task is written as created, and refused
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return context.Cause(ctx)
	}
	if _, err := f.sendUntil("m-stopped", wait); switchboard.ErrorCode(err) != switchboard.EQUOTA {
		t.Fatalf("got %v, want the quota's refusal", err)
	}
	if err := <-cause; !errors.Is(err, switchboard.ErrTaskUnwritten) {
		t.Fatalf("the attempt ended with %v, want ErrTaskUnwritten", err)
	}
}

// TestWriteOnAnswerAtShutdownWritten: a first answer that comes as the
// dispatcher stops, to a task written as created already (its answer was
// slow), is recorded all the same.
func TestWriteOnAnswerAtShutdownWritten(t *testing.T) {
	f := newEarlyFixture(t)
	started := make(chan *switchboard.Offer, 1)
	f.answer = func(ctx context.Context, o *switchboard.Offer) error {
		started <- o
		<-ctx.Done()
		return f.complete(ctx, o) // the front's answer, read as the attempt is cut short
	}
	wait, stopWaiting := context.WithCancel(context.Background())
	go func() { _, _ = f.sendUntil("m-late-written", wait) }()
	o := <-started
	stopWaiting() // the task is written as created
	testwait.ForErr(t, "the task written as created", func() error {
		_, err := f.db.FindTaskByID(context.Background(), o.Task.ID())
		return err
	})
	f.stop()
	stored, err := f.db.FindTaskByID(context.Background(), o.Task.ID())
	must(t, err)
	if stored.State() != a2a.TaskStateCompleted {
		t.Fatalf("stored %s, want the answer that came at shutdown", stored.State())
	}
}
