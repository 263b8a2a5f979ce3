package relay_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/membus"
)

// liveConn is the DirectOffers of an instance that holds the agent's
// connection: it has room, and hands each offer it sends to the test,
// saying whether the offer's task was in the store as it was sent. With
// gone set, the connection closed after the reservation.
type liveConn struct {
	f      *fixture
	offers chan sentOffer
	gone   bool

	mu        sync.Mutex
	cancelled int
}

// sentOffer is an offer as a connection sent it.
type sentOffer struct {
	o       *switchboard.Offer
	written bool
}

func (c *liveConn) ReserveOffer(string) (string, bool) { return "conn/1", true }

func (c *liveConn) SendOffer(o *switchboard.Offer) bool {
	if c.gone {
		return false
	}
	_, err := c.f.db.FindTaskByID(context.Background(), o.Task.ID())
	c.offers <- sentOffer{o: o, written: err == nil}
	return true
}

func (c *liveConn) CancelOffer(string, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cancelled++
}

// connFixture is a connector agent whose connection is on this instance,
// of a service that writes new tasks with their first answer.
type connFixture struct {
	*fixture
	conn *liveConn
}

func newConnFixture(t *testing.T) *connFixture {
	t.Helper()
	f := &connFixture{fixture: newFixture(t, membus.New())}
	f.agent.Mode = switchboard.ModeConnector
	_, err := f.db.UpdateAgent(context.Background(), f.agent.ID, switchboard.AgentUpdate{Mode: &f.agent.Mode})
	must(t, err)
	f.conn = &liveConn{f: f.fixture, offers: make(chan sentOffer, 4)}
	f.svc.OfferDirectly(f.conn)
	f.svc.WriteOnAnswer = true
	f.svc.EarlyWriteAfter = time.Minute // unwritten until the test acts, however slow it runs
	t.Cleanup(func() {
		// Once written or refused, a task is forgotten: none is left.
		if d, k := f.svc.EarlyTasks(); d != 0 || k != 0 {
			t.Errorf("%d tasks sent before they were written kept by delivery, %d by task id, want none", d, k)
		}
	})
	return f
}

// sendBlocking sends a blocking message with id in the background and
// returns the offer the connection sent, which must have gone out before
// its task was written, and where the call's answer comes.
func (f *connFixture) sendBlocking(t *testing.T, id string) (*switchboard.Offer, chan blockingResult) {
	t.Helper()
	done := make(chan blockingResult, 1)
	go func() {
		wait, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		task, err := f.svc.SendMessageAndWait(context.Background(), f.agent, f.peer, &a2a.SendMessageRequest{
			Message: &a2a.Message{ID: id, Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("hi")}},
		}, switchboard.ProtocolV1, wait)
		done <- blockingResult{task, err}
	}()
	select {
	case s := <-f.conn.offers:
		if s.written {
			t.Fatal("the task was written before it was offered")
		}
		return s.o, done
	case r := <-done:
		t.Fatalf("the call ended (%v) with no offer sent", r.err)
	}
	return nil, nil
}

type blockingResult struct {
	task *switchboard.Task
	err  error
}

// deliveries returns the deliveries of task id.
func (f *connFixture) deliveries(t *testing.T, id a2a.TaskID) []*switchboard.Delivery {
	t.Helper()
	ds, err := f.db.FindDeliveries(context.Background(), switchboard.DeliveryFilter{TaskID: &id})
	must(t, err)
	return ds
}

// TestConnectorWriteOnAnswer: a connector agent's new task of a blocking
// call is offered before it is written, and written once, with the
// agent's answer, with no delivery left; the call gets the answer.
func TestConnectorWriteOnAnswer(t *testing.T) {
	f := newConnFixture(t)
	ctx := context.Background()
	o, done := f.sendBlocking(t, "m-1")
	answer := &a2a.Message{ID: "a-1", Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart("done")}}
	must(t, f.svc.AckOffer(ctx, f.agent, o.Delivery, answer))
	r := <-done
	must(t, r.err)
	if r.task.State() != a2a.TaskStateCompleted || len(r.task.A2A.History) != 2 {
		t.Fatalf("the call returned %s with %d messages", r.task.State(), len(r.task.A2A.History))
	}
	events, err := f.db.FindTaskEvents(ctx, r.task.ID(), 0, 10)
	must(t, err)
	if len(events) != 3 {
		t.Fatalf("%d events, want the task as created, its artifact and its status", len(events))
	}
	if ds := f.deliveries(t, r.task.ID()); len(ds) != 0 {
		t.Fatalf("deliveries %+v of a finished task written with its answer, want none", ds)
	}
	// A late copy of the answer changes nothing.
	must(t, f.svc.AckOffer(ctx, f.agent, o.Delivery, answer))
}

// TestConnectorEarlyOpenTaskKeepsAck: a task written still open with the
// agent's first answer is written with its delivery acknowledged, so that
// an agent that connects again without it (it restarted) is offered it
// again.
func TestConnectorEarlyOpenTaskKeepsAck(t *testing.T) {
	f := newConnFixture(t)
	ctx := context.Background()
	o, done := f.sendBlocking(t, "m-1")
	working := a2a.NewStatusUpdateEvent(&o.Task.A2A, a2a.TaskStateInputRequired,
		&a2a.Message{ID: "a-1", Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart("which?")}})
	must(t, f.svc.AckOffer(ctx, f.agent, o.Delivery, working))
	r := <-done
	must(t, r.err)
	if r.task.State() != a2a.TaskStateInputRequired {
		t.Fatalf("the call returned %s", r.task.State())
	}
	ds := f.deliveries(t, r.task.ID())
	if len(ds) != 1 || ds[0].State != switchboard.DeliveryAcked {
		t.Fatalf("deliveries %+v, want the offer acknowledged", ds)
	}
}

// TestConnectorEarlyWorkingRequeued: an agent that answered working and
// then connects again without the task is offered it again.
func TestConnectorEarlyWorkingRequeued(t *testing.T) {
	f := newConnFixture(t)
	ctx := context.Background()
	o, _ := f.sendBlocking(t, "m-1")
	working := a2a.NewStatusUpdateEvent(&o.Task.A2A, a2a.TaskStateWorking, nil)
	must(t, f.svc.AckOffer(ctx, f.agent, o.Delivery, working))
	must(t, f.svc.ConnectAgent(ctx, f.agent, &switchboard.AgentSession{AgentID: f.agent.ID, Holder: "conn/2",
		ConnectedAt: time.Now(), ExpiresAt: time.Now().Add(time.Minute)}, nil))
	offers, err := f.svc.ClaimOffers(ctx, f.agent, "conn/2", 10)
	must(t, err)
	if len(offers) != 1 || offers[0].Task.ID() != o.Task.ID() {
		t.Fatalf("claimed %d offers, want the task the agent no longer holds", len(offers))
	}
}

// TestConnectorEarlyUpdateFindsTask: what the agent does with a task sent
// before it was written, other than answer its offer, finds it written.
func TestConnectorEarlyUpdateFindsTask(t *testing.T) {
	f := newConnFixture(t)
	ctx := context.Background()
	o, done := f.sendBlocking(t, "m-1")
	got, err := f.svc.AgentTask(ctx, f.agent, o.Task.ID())
	must(t, err)
	if got.State() != a2a.TaskStateSubmitted {
		t.Fatalf("the agent read %s", got.State())
	}
	o2, done2 := f.sendBlocking(t, "m-2")
	art := &a2a.TaskArtifactUpdateEvent{Artifact: &a2a.Artifact{ID: "part-1", Parts: a2a.ContentParts{a2a.NewTextPart("half")}}}
	if _, err := f.svc.ApplyAgentEvent(ctx, f.agent, o2.Task.ID(), art); err != nil {
		t.Fatalf("an update of a task sent before it was written: %v", err)
	}
	for _, x := range []struct {
		o    *switchboard.Offer
		done chan blockingResult
	}{{o, done}, {o2, done2}} {
		must(t, f.svc.AckOffer(ctx, f.agent, x.o.Delivery, &a2a.Message{ID: switchboard.NewID(), Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart("done")}}))
		r := <-x.done
		must(t, r.err)
		if r.task.State() != a2a.TaskStateCompleted {
			t.Fatalf("the call returned %s", r.task.State())
		}
	}
	t2, err := f.db.FindTaskByID(ctx, o2.Task.ID())
	must(t, err)
	if len(t2.A2A.Artifacts) != 2 {
		t.Fatalf("%d artifacts, want the update's and the answer's", len(t2.A2A.Artifacts))
	}
}

// TestConnectorEarlyConnectionCloses: the offers of a connection that
// closes before its agent answers go back to the queue with the others,
// their tasks written as created, for the agent's next connection.
func TestConnectorEarlyConnectionCloses(t *testing.T) {
	f := newConnFixture(t)
	ctx := context.Background()
	o, _ := f.sendBlocking(t, "m-1")
	must(t, f.svc.DisconnectAgents(ctx, []string{"conn/1"}))
	offers, err := f.svc.ClaimOffers(ctx, f.agent, "conn/2", 10)
	must(t, err)
	if len(offers) != 1 || offers[0].Task.ID() != o.Task.ID() {
		t.Fatalf("claimed %d offers, want the task the closed connection was offered", len(offers))
	}
}

// TestConnectorEarlyConnectionGone: a connection gone between the
// reservation and the send leaves the task written, and its delivery
// queued at once.
func TestConnectorEarlyConnectionGone(t *testing.T) {
	f := newConnFixture(t)
	ctx := context.Background()
	f.conn.gone = true
	done := make(chan blockingResult, 1)
	wait, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		task, err := f.svc.SendMessageAndWait(ctx, f.agent, f.peer, &a2a.SendMessageRequest{
			Message: &a2a.Message{ID: "m-1", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("hi")}},
		}, switchboard.ProtocolV1, wait)
		done <- blockingResult{task, err}
	}()
	var offers []*switchboard.Offer
	testwait.ForErr(t, "the task whose offer could not be sent queued", func() error {
		var err error
		if offers, err = f.svc.ClaimOffers(ctx, f.agent, "conn/2", 10); err == nil && len(offers) != 1 {
			err = fmt.Errorf("claimed %d offers", len(offers))
		}
		return err
	})
	must(t, f.svc.AckOffer(ctx, f.agent, offers[0].Delivery, &a2a.Message{ID: "a-1", Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart("done")}}))
	r := <-done
	must(t, r.err)
	if r.task.State() != a2a.TaskStateCompleted {
		t.Fatalf("the call returned %s", r.task.State())
	}
}

// TestConnectorEarlyRejected: an agent that refuses a task sent before it
// was written fails it, written once.
func TestConnectorEarlyRejected(t *testing.T) {
	f := newConnFixture(t)
	ctx := context.Background()
	o, done := f.sendBlocking(t, "m-1")
	must(t, f.svc.RejectOffer(ctx, f.agent, o.Delivery, "the agent refused the task: busy", false))
	r := <-done
	must(t, r.err)
	if r.task.State() != a2a.TaskStateFailed {
		t.Fatalf("the call returned %s", r.task.State())
	}
	if ds := f.deliveries(t, r.task.ID()); len(ds) != 0 {
		t.Fatalf("deliveries %+v, want none", ds)
	}
}

// TestConnectorEarlyHeldAnswer: an update that follows an answer held
// back (working) is written with it; one that cannot be applied is not,
// and the held answer is written as it came.
func TestConnectorEarlyHeldAnswer(t *testing.T) {
	f := newConnFixture(t)
	ctx := context.Background()
	o, done := f.sendBlocking(t, "m-1")
	bad := &a2a.TaskArtifactUpdateEvent{Artifact: &a2a.Artifact{ID: "x"}} // no parts
	if _, err := f.svc.ApplyAgentEventAcking(ctx, f.agent, o.Task.ID(), bad, o.Delivery, time.Now()); switchboard.ErrorCode(err) != switchboard.EINVALIDAGENTRESPONSE {
		t.Fatalf("an update that cannot be applied: %v, want EINVALIDAGENTRESPONSE", err)
	}
	if _, err := f.db.FindTaskByID(ctx, o.Task.ID()); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("the task was written (%v) by an update that was not applied", err)
	}
	must(t, f.svc.AckOfferAt(ctx, f.agent, o.Delivery, a2a.NewStatusUpdateEvent(&o.Task.A2A, a2a.TaskStateWorking, nil), time.Now()))
	if _, err := f.svc.ApplyAgentEventAcking(ctx, f.agent, o.Task.ID(), a2a.NewStatusUpdateEvent(&o.Task.A2A, a2a.TaskStateCompleted, nil), o.Delivery, time.Now()); err != nil {
		t.Fatal(err)
	}
	r := <-done
	must(t, r.err)
	if r.task.State() != a2a.TaskStateCompleted {
		t.Fatalf("the task is %s", r.task.State())
	}
}

// TestConnectorEarlyOnlyAcknowledged: an answer that only acknowledges
// (the agent queued the work) writes the task as created, its offer
// acknowledged.
func TestConnectorEarlyOnlyAcknowledged(t *testing.T) {
	f := newConnFixture(t)
	ctx := context.Background()
	o, _ := f.sendBlocking(t, "m-1")
	queued := &a2a.Task{ID: o.Task.ID(), ContextID: o.Task.A2A.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}
	must(t, f.svc.AckOffer(ctx, f.agent, o.Delivery, queued))
	ds := f.deliveries(t, o.Task.ID())
	if len(ds) != 1 || ds[0].State != switchboard.DeliveryAcked {
		t.Fatalf("deliveries %+v, want the offer acknowledged", ds)
	}
}
