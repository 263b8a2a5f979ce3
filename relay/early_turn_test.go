package relay_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// createPausingStore holds the CreateTask of the task whose first message
// is armed (once), before it reaches the database: it says so on paused,
// and goes on when resume is closed.
type createPausingStore struct {
	*sqlstore.DB
	mu     sync.Mutex
	armed  string
	paused chan struct{}
	resume chan struct{}
}

func newCreatePausingStore() *createPausingStore {
	return &createPausingStore{paused: make(chan struct{}), resume: make(chan struct{})}
}

func (s *createPausingStore) CreateTask(ctx context.Context, t *switchboard.Task, change *switchboard.TaskChange) (*switchboard.TaskEvent, error) {
	s.mu.Lock()
	hit := s.armed != "" && t.A2A.History[0].ID == s.armed
	if hit {
		s.armed = ""
	}
	s.mu.Unlock()
	if hit {
		close(s.paused)
		<-s.resume
	}
	return s.DB.CreateTask(ctx, t, change)
}

func (s *createPausingStore) arm(messageID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed = messageID
}

// askFor answers o with a question: the task stays open.
func (f *earlyFixture) askFor(ctx context.Context, o *switchboard.Offer) error {
	ask := &a2a.TaskStatusUpdateEvent{TaskID: o.Task.ID(), ContextID: o.Task.A2A.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired}}
	return f.svc.AckOfferFront(ctx, f.agent, o.Delivery, ask, frontMap(o))
}

// waitSecondWrite waits until a second write of the peer waits for its
// turn, or until done says a write went ahead without waiting.
func (f *earlyFixture) waitSecondWrite(t *testing.T, done chan error) {
	t.Helper()
	testwait.For(t, "a second write of the peer to wait for its turn", func() bool {
		select {
		case err := <-done:
			done <- err
			return true // it went ahead: the checks below fail
		default:
			return f.svc.PeerWrites(f.agent.ID, f.peer.ID) == 2
		}
	})
}

// TestWriteOnAnswerWritesTakeTurns: the writes of one peer's tasks on an
// instance take turns, so that a task in flight unwritten, counted toward
// the quota of a write, is not written meanwhile and counted twice: two
// tasks in flight that fill the quota together are both written, whatever
// the order of their answers and writes.
func TestWriteOnAnswerWritesTakeTurns(t *testing.T) {
	ps := newCreatePausingStore()
	f := newEarlyFixtureOver(t, func(db *sqlstore.DB) relay.Store { ps.DB = db; return ps })
	f.svc.MaxOpenTasksPerPeer = 2
	releaseA, openA := gate(t)
	releaseB, openB := gate(t)
	f.answer = func(ctx context.Context, o *switchboard.Offer) error {
		if o.Task.A2A.History[0].ID == "m-a" {
			<-releaseA
		} else {
			<-releaseB
		}
		return f.askFor(ctx, o)
	}
	a, b := make(chan error, 1), make(chan error, 1)
	go func() { _, err := f.send(t, "m-a"); a <- err }()
	if !<-f.unwritten {
		t.Fatal("A was written before it was sent")
	}
	go func() { _, err := f.send(t, "m-b"); b <- err }()
	if !<-f.unwritten {
		t.Fatal("B was written before it was sent")
	}
	ps.arm("m-a")
	openA()
	<-ps.paused // A's write holds B toward the quota
	openB()
	f.waitSecondWrite(t, b)
	close(ps.resume)
	must(t, <-a)
	must(t, <-b)
}

// TestWriteOnAnswerMessageTakesTurn: a message written first (a call
// that does not wait) takes its turn with the peer's tasks in flight
// unwritten, so neither is counted twice: a message within the quota
// with them is accepted, and they are written after it.
func TestWriteOnAnswerMessageTakesTurn(t *testing.T) {
	ps := newCreatePausingStore()
	f := newEarlyFixtureOver(t, func(db *sqlstore.DB) relay.Store { ps.DB = db; return ps })
	f.svc.MaxOpenTasksPerPeer = 2
	releaseE, openE := gate(t)
	f.answer = func(ctx context.Context, o *switchboard.Offer) error {
		if o.Task.A2A.History[0].ID == "m-e" {
			<-releaseE
		}
		return f.askFor(ctx, o)
	}
	e := make(chan error, 1)
	go func() { _, err := f.send(t, "m-e"); e <- err }()
	if !<-f.unwritten {
		t.Fatal("E was written before it was sent")
	}
	ps.arm("m-w")
	w := make(chan error, 1)
	go func() {
		_, _, err := f.svc.SendMessage(context.Background(), f.agent, f.peer, &a2a.SendMessageRequest{
			Message: &a2a.Message{ID: "m-w", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("hi")}},
		}, switchboard.ProtocolV1)
		w <- err
	}()
	<-ps.paused // W's write holds E toward the quota
	openE()
	f.waitSecondWrite(t, e)
	close(ps.resume)
	must(t, <-w)
	must(t, <-e)
}

// TestWriteOnAnswerBytesHeld: a task in flight unwritten counts toward
// its peer's byte quota as a whole task's worth, for every message of
// the peer: a message that would leave it no room is refused, rather than
// the task, sent already, when it is written.
func TestWriteOnAnswerBytesHeld(t *testing.T) {
	f := newEarlyFixture(t)
	f.svc.MaxPeerBytes = switchboard.MaxTaskBytes + 64<<10 // room for one task in flight, and a little
	releaseE, openE := gate(t)
	f.answer = func(ctx context.Context, o *switchboard.Offer) error {
		<-releaseE
		return f.askFor(ctx, o)
	}
	e := make(chan error, 1)
	go func() { _, err := f.send(t, "m-e"); e <- err }()
	if !<-f.unwritten {
		t.Fatal("E was written before it was sent")
	}
	_, _, err := f.svc.SendMessage(context.Background(), f.agent, f.peer, &a2a.SendMessageRequest{
		Message: &a2a.Message{ID: "m-w", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart(strings.Repeat("a", 128<<10))}},
	}, switchboard.ProtocolV1)
	if switchboard.ErrorCode(err) != switchboard.EQUOTA {
		t.Fatalf("a message that leaves a task in flight no room: %v, want EQUOTA", err)
	}
	openE()
	must(t, <-e)
}
