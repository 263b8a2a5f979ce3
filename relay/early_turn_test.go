package relay_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// takeTurns, once the first write is paused in ps, lets the second
// write's task be answered (open), sees that write wait for its turn,
// then lets the first go on: both must succeed.
func (f *earlyFixture) takeTurns(t *testing.T, ps *createPausingStore, open func(), first, second chan error) {
	t.Helper()
	<-ps.paused
	open()
	f.waitSecondWrite(t, second)
	close(ps.resume)
	must(t, <-first)
	must(t, <-second)
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
	f.takeTurns(t, ps, openB, a, b) // A's write holds B toward the quota
}

// TestWriteOnAnswerMessageTakesTurn: a message written first (a call
// that does not wait) takes its turn with the peer's tasks in flight
// unwritten, so neither is counted twice: a message within the quota
// with them is accepted, and they are written after it.
func TestWriteOnAnswerMessageTakesTurn(t *testing.T) {
	ps := newCreatePausingStore()
	f := newEarlyFixtureOver(t, func(db *sqlstore.DB) relay.Store { ps.DB = db; return ps })
	f.svc.MaxOpenTasksPerPeer = 2
	openE := f.holdAnswer(t, "m-e", f.askFor)
	e := f.sendEarly(t, "m-e")
	ps.arm("m-w")
	w := make(chan error, 1)
	go func() {
		w <- f.sendNoWait(context.Background(), "m-w", "hi", "")
	}()
	f.takeTurns(t, ps, openE, w, e) // W's write holds E toward the quota
}

// TestWriteOnAnswerBytesHeld: a task in flight unwritten counts toward
// its peer's byte quota as a whole task's worth, for every message of
// the peer, and is sent early only with room for one message more: a
// message is never refused for what is held alone, and the task, sent
// already, is never refused for the messages written meanwhile.
func TestWriteOnAnswerBytesHeld(t *testing.T) {
	f := newEarlyFixture(t)
	f.svc.MaxPeerBytes = 2*switchboard.MaxTaskBytes + 64<<10
	openE := f.holdAnswer(t, "m-e", f.askFor)
	e := f.sendEarly(t, "m-e")
	big := strings.Repeat("a", 4_000_000)
	must(t, f.sendNoWait(context.Background(), "m-w1", big, "")) // fits beside E's reservation
	if err := f.sendNoWait(context.Background(), "m-w2", big, ""); switchboard.ErrorCode(err) != switchboard.EQUOTA {
		t.Fatalf("a message that would leave E no room: %v, want EQUOTA", err)
	}
	openE()
	must(t, <-e)
}

// TestWriteOnAnswerAgentGrowth: a task sent early was admitted for its
// bytes when it was sent: the agent's answers to the peer's other tasks,
// which may take them past the byte quota, do not refuse it after.
func TestWriteOnAnswerAgentGrowth(t *testing.T) {
	f := newEarlyFixture(t)
	f.svc.MaxPeerBytes = 2*switchboard.MaxTaskBytes + 64<<10
	openE := f.holdAnswer(t, "m-e", f.askFor)
	var open []*switchboard.Task
	for i := range 3 {
		task, err := f.send(t, fmt.Sprint("m-", i))
		must(t, err)
		open = append(open, task)
	}
	e := make(chan error, 1)
	go func() { _, err := f.send(t, "m-e"); e <- err }()
	testwait.For(t, "E to reach the agent", func() bool { return f.calls.Load() == 4 })
	for _, task := range open { // 9 MiB in all, past the quota
		big := &a2a.TaskArtifactUpdateEvent{Artifact: &a2a.Artifact{Parts: a2a.ContentParts{a2a.NewTextPart(strings.Repeat("a", 3<<20))}}}
		if _, err := f.svc.ApplyAgentEvent(context.Background(), f.agent, task.ID(), big); err != nil {
			t.Fatal(err)
		}
	}
	if _, bytes, _ := f.db.PeerUsage(context.Background(), f.agent.ID, f.peer.ID); bytes <= f.svc.MaxPeerBytes {
		t.Fatalf("the peer's tasks hold %d bytes, want more than the quota", bytes)
	}
	openE()
	must(t, <-e)
}

// panicStore panics in the ModifyTask of the task armed, as a write's
// panic raised again in its caller would.
type panicStore struct {
	*sqlstore.DB
	armed atomic.Value // a2a.TaskID
}

func (s *panicStore) ModifyTask(ctx context.Context, id a2a.TaskID, fn func(*switchboard.Task) (*switchboard.TaskChange, error)) (*switchboard.Task, []*switchboard.TaskEvent, error) {
	if armed, _ := s.armed.Load().(a2a.TaskID); armed == id {
		s.armed.Store(a2a.TaskID(""))
		panic("a write panicked")
	}
	return s.DB.ModifyTask(ctx, id, fn)
}

// TestWriteOnAnswerTurnAfterPanic: a write that panics in its turn (a
// server recovers a handler's panic) gives the turn back: the peer's next
// message is written, and its task in flight too.
func TestWriteOnAnswerTurnAfterPanic(t *testing.T) {
	ps := &panicStore{}
	f := newEarlyFixtureOver(t, func(db *sqlstore.DB) relay.Store { ps.DB = db; return ps })
	openE := f.holdAnswer(t, "m-e", f.askFor)
	asked, err := f.send(t, "m-ask")
	must(t, err)
	e := make(chan error, 1)
	go func() { _, err := f.send(t, "m-e"); e <- err }()
	testwait.For(t, "E to reach the agent", func() bool { return f.calls.Load() == 2 })
	reply := func(id string) error { return f.sendNoWait(context.Background(), id, "blue", asked.ID()) }
	ps.armed.Store(asked.ID())
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the write did not panic")
			}
		}()
		_ = reply("m-panic")
	}()
	done := make(chan error, 1)
	go func() { done <- reply("m-after") }()
	select {
	case err := <-done:
		must(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the peer's next message waits for a turn that the panic kept")
	}
	openE()
	must(t, <-e)
}

// TestWriteOnAnswerTurnWaitEnds: a message waiting for its turn gives up
// when its caller's context ends.
func TestWriteOnAnswerTurnWaitEnds(t *testing.T) {
	ps := newCreatePausingStore()
	f := newEarlyFixtureOver(t, func(db *sqlstore.DB) relay.Store { ps.DB = db; return ps })
	openE := f.holdAnswer(t, "m-e", f.complete)
	e := f.sendEarly(t, "m-e")
	send := func(ctx context.Context, id string) error { return f.sendNoWait(ctx, id, "hi", "") }
	ps.arm("m-1")
	first := make(chan error, 1)
	go func() { first <- send(context.Background(), "m-1") }()
	<-ps.paused // m-1 holds the turn
	ctx, cancel := context.WithCancel(context.Background())
	second := make(chan error, 1)
	go func() { second <- send(ctx, "m-2") }()
	testwait.For(t, "m-2 to wait for its turn", func() bool { return f.svc.PeerWrites(f.agent.ID, f.peer.ID) == 2 })
	cancel()
	if err := <-second; !errors.Is(err, context.Canceled) {
		t.Fatalf("m-2 gave up with %v, want context.Canceled", err)
	}
	close(ps.resume)
	must(t, <-first)
	openE()
	must(t, <-e)
}
