package connector_test

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/hub"
	"github.com/switchboard-dev/switchboard/internal/testwait"
)

// deliveryStates counts the agent's deliveries by state.
func (s *testServer) deliveryStates(g *testAgent) map[switchboard.DeliveryState]int {
	s.t.Helper()
	ds, err := s.db.FindDeliveries(context.Background(), switchboard.DeliveryFilter{AgentID: &g.ID})
	must(s.t, err)
	out := map[switchboard.DeliveryState]int{}
	for _, d := range ds {
		out[d.State]++
	}
	return out
}

// storedState returns a task's state as the server stores it.
func (s *testServer) storedState(id string) a2a.TaskState {
	s.t.Helper()
	task, err := s.db.FindTaskByID(context.Background(), a2a.TaskID(id))
	must(s.t, err)
	return task.State()
}

// TestQueuedWorkIsNotWorking sends many tasks to a client that works on
// one at a time: the tasks waiting for their turn are acknowledged as
// submitted, not working, and the client holds them without a goroutine
// each. Every one then runs once.
func TestQueuedWorkIsNotWorking(t *testing.T) {
	s := newTestServer(t)
	g := s.agent("busy")
	release := make(chan struct{})
	var started atomic.Int32
	c := newClient(s, g, func(ctx context.Context, w *connector.Work) {
		started.Add(1)
		select {
		case <-release:
		case <-ctx.Done():
		}
		_ = w.Reply("ok")
	})
	c.MaxConcurrent = 1
	runClient(t, c)
	s.connected(g)
	before := runtime.NumGoroutine()

	const n = 100
	ids := make([]string, n)
	for i := range ids {
		ids[i] = s.send(g, fmt.Sprintf("m%d", i), "job", false, "").ID
	}
	// The client took every offer: none waits at the server unoffered.
	testwait.For(t, "every offer taken", func() bool { return s.deliveryStates(g)[switchboard.DeliveryQueued] == 0 })
	s.waitState(g, ids[0], "TASK_STATE_WORKING")
	if got, want := started.Load(), int32(1); got != want {
		t.Fatalf("handlers started: got %d, want %d", got, want)
	}
	for _, id := range ids[1:] {
		if got, want := s.storedState(id), a2a.TaskStateSubmitted; got != want {
			t.Fatalf("task %s waiting for its turn: got %s, want %s", id, got, want)
		}
	}
	if grown := runtime.NumGoroutine() - before; grown > n/4 {
		t.Fatalf("%d tasks waiting for one handler: %d more goroutines", n, grown)
	}

	close(release)
	for _, id := range ids {
		s.waitState(g, id, "TASK_STATE_COMPLETED")
	}
	if got, want := started.Load(), int32(n); got != want {
		t.Fatalf("handlers started: got %d, want %d", got, want)
	}
}

// TestFullQueueWithholdsOffers runs a client whose queue holds one work
// behind one handler, at a server that leaves at most three offers
// unanswered per connection: offers beyond the queue wait unanswered (the
// work stays at the server), are answered as the queue drains, and a
// canceled one is answered at once, which frees its place at the server.
func TestFullQueueWithholdsOffers(t *testing.T) {
	s := newTestServer(t, func(c *hub.Config) { c.MaxInflight = 3 })
	g := s.agent("narrow")
	release := make(chan struct{})
	var mu sync.Mutex
	var ran []string
	c := newClient(s, g, func(ctx context.Context, w *connector.Work) {
		mu.Lock()
		ran = append(ran, w.Text())
		mu.Unlock()
		select {
		case <-release:
		case <-ctx.Done():
		}
		_ = w.Reply("ok")
	})
	c.MaxConcurrent, c.QueueSize = 1, 1
	runClient(t, c)
	s.connected(g)

	var ids []string
	send := func(text string) {
		ids = append(ids, s.send(g, "m-"+text, text, false, "").ID)
	}
	for _, text := range []string{"t1", "t2", "t3", "t4"} {
		send(text)
	}
	// t1 runs, t2 is acknowledged and waits, t3 and t4 are withheld.
	want := map[switchboard.DeliveryState]int{switchboard.DeliveryAcked: 2, switchboard.DeliveryOffered: 2}
	testwait.For(t, fmt.Sprintf("deliveries %v", want), func() bool { return maps.Equal(s.deliveryStates(g), want) })
	s.waitState(g, ids[0], "TASK_STATE_WORKING")
	if got, want := s.storedState(ids[1]), a2a.TaskStateSubmitted; got != want {
		t.Fatalf("the queued task: got %s, want %s", got, want)
	}

	// The peer cancels t3, whose offer was withheld: the client answers
	// it, so t5 and t6 both fit in the server's three unanswered offers.
	if a := s.peerCall(g, "CancelTask", map[string]any{"id": ids[2]}); a.Error != nil {
		t.Fatalf("CancelTask: %s", a.Error.Message)
	}
	send("t5")
	send("t6")
	testwait.For(t, "every offer made", func() bool { return s.deliveryStates(g)[switchboard.DeliveryQueued] == 0 })

	close(release)
	for i, id := range ids {
		if i != 2 {
			s.waitState(g, id, "TASK_STATE_COMPLETED")
		}
	}
	if got, want := s.storedState(ids[2]), a2a.TaskStateCanceled; got != want {
		t.Fatalf("the canceled task: got %s, want %s", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if got, want := strings.Join(ran, " "), "t1 t2 t4 t5 t6"; got != want {
		t.Fatalf("handlers ran for %q, want %q", got, want)
	}
}
