package hub_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/hub"
	"github.com/switchboard-dev/switchboard/relay"
)

// delivery returns the one delivery of a task.
func (s *server) delivery(taskID string) *switchboard.Delivery {
	s.t.Helper()
	id := a2a.TaskID(taskID)
	ds, err := s.db.FindDeliveries(context.Background(), switchboard.DeliveryFilter{TaskID: &id})
	must(s.t, err)
	if len(ds) != 1 {
		s.t.Fatalf("task %s has %d deliveries, want 1", taskID, len(ds))
	}
	return ds[0]
}

// TestNewTaskOfferedAsItIsCreated checks that a task for an agent
// connected to this instance is offered in the transaction that creates
// it (the delivery's offer is as old as the delivery), and that without
// direct offers it is claimed afterwards, with the same result for the
// peer either way.
func TestNewTaskOfferedAsItIsCreated(t *testing.T) {
	for name, opts := range map[string][]serverOption{"direct": nil, "claimed": {withoutDirectOffers}} {
		t.Run(name, func(t *testing.T) {
			s := newServer(t, opts...)
			g, tok := s.agent("alice")
			peer := s.peerToken(g, "bob")
			a := s.connect(tok)
			// The claim after hello holds the window's room while it runs;
			// a task created meanwhile waits for the next claim.
			waitWritersIdle(t)
			res := async(func() map[string]any { return s.send(g, peer, "hi", false) })
			o := a.nextOffer()
			a.complete(o, "hello bob")
			if got := path(await(t, res), "result", "task", "status", "state"); got != "TASK_STATE_COMPLETED" {
				t.Fatalf("peer got state %v", got)
			}
			d := s.delivery(o.taskID)
			if d.State != switchboard.DeliveryAcked || d.Attempts != 1 || d.OfferedAt == nil {
				t.Fatalf("delivery %+v, want acknowledged after one offer", d)
			}
			if direct := d.OfferedAt.Equal(d.CreatedAt); direct != (name == "direct") {
				t.Fatalf("offered at %v, created at %v: direct offer %v, want %v", d.OfferedAt, d.CreatedAt, direct, name == "direct")
			}
			if !s.task(o.taskID).Offered {
				t.Fatal("the task is not marked offered")
			}
		})
	}
}

// TestDirectOffersKeepTheWindow checks that offers made as tasks are
// created count against the agent's in-flight window like claimed ones:
// a task beyond it waits in the queue, and is offered when an answer opens
// the window.
func TestDirectOffersKeepTheWindow(t *testing.T) {
	s := newServer(t, func(_ *relay.Service, h *hub.Config, _ *httpapi.Config) { h.MaxInflight = 1 })
	g, tok := s.agent("alice")
	peer := s.peerToken(g, "bob")
	a := s.connect(tok)
	first := path(s.send(g, peer, "one", true), "result", "task", "id").(string)
	o1 := a.nextOffer()
	if o1.taskID != first {
		t.Fatalf("offered %s, want %s", o1.taskID, first)
	}
	second := path(s.send(g, peer, "two", true), "result", "task", "id").(string)
	a.quiet(300 * time.Millisecond) // the window holds one offer
	if d := s.delivery(second); d.State != switchboard.DeliveryQueued {
		t.Fatalf("second task's delivery %s while the window is full, want queued", d.State)
	}
	a.complete(o1, "done")
	o2 := a.nextOffer()
	if o2.taskID != second {
		t.Fatalf("offered %s, want %s", o2.taskID, second)
	}
	a.complete(o2, "done")
	s.waitState(second, a2a.TaskStateCompleted)
}

// TestWindowHoldsUnderRacingOffers sends many tasks at once to an agent that
// answers an offer only when its window is full: the claims those answers
// start race the direct offers of new tasks, and the offers made meanwhile
// must not take the room a claim counted on, so the agent never holds more
// unanswered offers than its window.
func TestWindowHoldsUnderRacingOffers(t *testing.T) {
	const window, tasks = 4, 64
	s := newServer(t, func(_ *relay.Service, h *hub.Config, _ *httpapi.Config) { h.MaxInflight = window })
	g, tok := s.agent("alice")
	peer := s.peerToken(g, "bob")
	a := s.connect(tok)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range tasks / 8 {
				// New tasks keep coming, a request's round trip apart,
				// while answers open the window.
				s.send(g, peer, fmt.Sprintf("task %d.%d", i, j), true)
			}
		})
	}
	var unanswered []offered
	for seen := 0; seen < tasks; {
		unanswered = append(unanswered, a.nextOffer())
		seen++
		if len(unanswered) > window {
			t.Fatalf("after %d offers the agent holds %d unanswered, more than its window of %d", seen, len(unanswered), window)
		}
		if len(unanswered) == window || seen == tasks {
			a.ackWorking(unanswered[0])
			unanswered = unanswered[1:]
		}
	}
	wg.Wait()
}
