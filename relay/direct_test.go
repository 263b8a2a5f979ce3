package relay_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/membus"
)

// closingConn is the DirectOffers of an instance whose agent connection
// has room when asked, and has gone by the time the offer is sent.
type closingConn struct {
	mu                  sync.Mutex
	reserved, cancelled int
}

func (c *closingConn) ReserveOffer(string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reserved++
	return "conn/gone", true
}

func (c *closingConn) SendOffer(*switchboard.Offer) bool { return false }

func (c *closingConn) CancelOffer(string, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cancelled++
}

// TestDirectOfferToAClosedConnectionIsQueued checks that a task offered as
// it was created, whose connection closed before the offer could be sent,
// goes back to the queue at once and is announced, not left to its lease.
func TestDirectOfferToAClosedConnectionIsQueued(t *testing.T) {
	ctx := context.Background()
	bus := membus.New()
	f := newFixture(t, bus)
	f.agent.Mode = switchboard.ModeConnector
	_, err := f.db.UpdateAgent(ctx, f.agent.ID, switchboard.AgentUpdate{Mode: &f.agent.Mode})
	must(t, err)
	// The connection holds an offer of an earlier task: its own to
	// release, after the answers it holds are written.
	earlier := f.send(t, "m0", "before")
	held, err := f.svc.ClaimOffers(ctx, f.agent, "conn/gone", 10)
	must(t, err)
	if len(held) != 1 {
		t.Fatalf("claimed %d offers, want the earlier task's", len(held))
	}
	conn := &closingConn{}
	f.svc.OfferDirectly(conn)
	w, err := bus.Watch(ctx, switchboard.AgentSubject(f.agent.ID))
	must(t, err)
	defer w.Close()

	task := f.send(t, "m1", "hello")
	ds, err := f.db.FindDeliveries(ctx, switchboard.DeliveryFilter{TaskID: &task.A2A.ID})
	must(t, err)
	if conn.reserved != 1 || len(ds) != 1 || ds[0].State != switchboard.DeliveryQueued || ds[0].Holder != "" {
		t.Fatalf("reserved %d; deliveries %+v: want the one delivery back in the queue", conn.reserved, ds)
	}
	ds, err = f.db.FindDeliveries(ctx, switchboard.DeliveryFilter{TaskID: &earlier.A2A.ID})
	must(t, err)
	if len(ds) != 1 || ds[0].State != switchboard.DeliveryOffered || ds[0].Holder != "conn/gone" {
		t.Fatalf("the earlier task's delivery %+v: want it still offered to the connection", ds)
	}
	select {
	case <-w.C():
	case <-time.After(5 * time.Second):
		t.Fatal("the agent's subject was not notified of the queued work")
	}
	// The next connection is offered it.
	offers, err := f.svc.ClaimOffers(ctx, f.agent, "conn/next", 10)
	must(t, err)
	if len(offers) != 1 || offers[0].Task.ID() != task.ID() {
		t.Fatalf("claimed %d offers", len(offers))
	}
}
