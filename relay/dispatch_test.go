package relay_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/relay"
)

// fakeDeliverer answers every agent's deliveries at once, except those of
// the agent named hang, whose calls hang until their context ends; then
// they fail, or with answerLate, answer all the same (the answer came as
// the call was cut).
type fakeDeliverer struct {
	hang       string
	answerLate bool

	mu       sync.Mutex // guards the fields below
	inflight int        // calls to hang in progress
	peak     int        // the most calls to hang in progress at once
	started  chan struct{}
}

func (d *fakeDeliverer) Deliver(ctx context.Context, agent *switchboard.Agent, o *switchboard.Offer) (a2a.Event, error) {
	if agent.ID != d.hang {
		return &a2a.Message{Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart("done")}}, nil
	}
	d.mu.Lock()
	d.inflight++
	d.peak = max(d.peak, d.inflight)
	d.mu.Unlock()
	select {
	case d.started <- struct{}{}:
	default:
	}
	<-ctx.Done()
	d.mu.Lock()
	d.inflight--
	d.mu.Unlock()
	if d.answerLate {
		return &a2a.Message{Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart("just in time")}}, nil
	}
	return nil, ctx.Err()
}

// webhookAgent adds an agent in webhook mode to the fixture's account.
func (f *fixture) webhookAgent(t *testing.T, handle string) *switchboard.Agent {
	t.Helper()
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: f.agent.AccountID, Handle: handle, Mode: switchboard.ModeWebhook,
		AcceptsTasks: true, Endpoint: "https://example.com/" + handle}
	must(t, f.db.CreateAgent(context.Background(), g))
	return g
}

// sendTo sends a new message to agent g.
func (f *fixture) sendTo(t *testing.T, g *switchboard.Agent, id string) *switchboard.Task {
	t.Helper()
	task, _, err := f.svc.SendMessage(context.Background(), g, switchboard.Peer{AgentID: g.ID, ID: "peer-bob", Label: "bob"},
		&a2a.SendMessageRequest{Message: &a2a.Message{ID: id, Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("x")}}},
		switchboard.ProtocolV1)
	must(t, err)
	return task
}

// runDispatcher runs the webhook dispatcher until the test ends, or until
// the returned function stops it (and waits for it).
func (f *fixture) runDispatcher(t *testing.T, d switchboard.Deliverer, cfg relay.DispatchConfig) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = f.svc.RunDispatcher(ctx, switchboard.ModeWebhook, d, cfg)
	}()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}

// TestDispatchSlowAgentDoesNotStallOthers gives one webhook agent a backlog
// of calls that hang: it holds at most its share of the dispatcher's slots,
// and another agent's task is delivered meanwhile.
func TestDispatchSlowAgentDoesNotStallOthers(t *testing.T) {
	f := newFixture(t, membus.New())
	slow, fast := f.webhookAgent(t, "slow"), f.webhookAgent(t, "fast")
	d := &fakeDeliverer{hang: slow.ID, started: make(chan struct{}, 1)}
	for i := range 64 {
		f.sendTo(t, slow, fmt.Sprint("s", i))
	}
	f.runDispatcher(t, d, relay.DispatchConfig{Concurrency: 16, Timeout: time.Minute, Poll: 10 * time.Millisecond})
	<-d.started

	task := f.sendTo(t, fast, "f1")
	got, err := f.svc.WaitForTurn(context.Background(), task.ID(), task.Seq, 5*time.Second)
	must(t, err)
	if got.State() != a2a.TaskStateCompleted {
		t.Fatalf("the fast agent's task is %s behind the slow agent's backlog", got.State())
	}
	d.mu.Lock()
	peak := d.peak
	d.mu.Unlock()
	if peak > relay.DefaultDispatchPerAgent {
		t.Fatalf("the slow agent had %d calls in flight, want at most %d", peak, relay.DefaultDispatchPerAgent)
	}
}

// TestDispatchShutdown stops the dispatcher while a webhook call is in
// flight: the cut attempt gives its delivery back at once (not after its
// lease, which outlasts the call timeout by 30 s), and an answer that came
// as the call was cut is recorded.
func TestDispatchShutdown(t *testing.T) {
	for name, answerLate := range map[string]bool{"GivesBackCutAttempt": false, "RecordsLateAnswer": true} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, membus.New())
			g := f.webhookAgent(t, "hook")
			d := &fakeDeliverer{hang: g.ID, answerLate: answerLate, started: make(chan struct{}, 1)}
			task := f.sendTo(t, g, "m1")
			stop := f.runDispatcher(t, d, relay.DispatchConfig{Timeout: time.Minute, Poll: 10 * time.Millisecond})
			<-d.started
			stop()

			ctx := context.Background()
			ds, err := f.db.FindDeliveries(ctx, switchboard.DeliveryFilter{AgentID: &g.ID})
			must(t, err)
			if len(ds) != 1 {
				t.Fatalf("%d deliveries", len(ds))
			}
			got, err := f.db.FindTaskByID(ctx, task.ID())
			must(t, err)
			if answerLate {
				if ds[0].State != switchboard.DeliveryAcked || got.State() != a2a.TaskStateCompleted {
					t.Fatalf("delivery %s, task %s; want the answer recorded", ds[0].State, got.State())
				}
				return
			}
			if ds[0].State != switchboard.DeliveryQueued || ds[0].NextAttemptAt.After(time.Now()) || ds[0].Attempts != 1 {
				t.Fatalf("delivery %s, next attempt in %v, %d attempts; want queued and due at once after one attempt",
					ds[0].State, time.Until(ds[0].NextAttemptAt).Round(time.Second), ds[0].Attempts)
			}
			if got.State() != a2a.TaskStateSubmitted {
				t.Fatalf("task %s", got.State())
			}
		})
	}
}

// TestOnAckReportsFirstAcknowledgement: the webhook dispatcher's answer is
// reported to OnAck once, with the delivery as offered, so that metrics
// can measure acceptance to acknowledgement and offer to acknowledgement.
func TestOnAckReportsFirstAcknowledgement(t *testing.T) {
	f := newFixture(t, membus.New())
	g := f.webhookAgent(t, "hook")
	type ack struct {
		mode switchboard.DeliveryMode
		d    *switchboard.Delivery
		at   time.Time
	}
	acks := make(chan ack, 4)
	f.svc.OnAck = func(mode switchboard.DeliveryMode, d *switchboard.Delivery, at time.Time) {
		acks <- ack{mode: mode, d: d, at: at}
	}
	task := f.sendTo(t, g, "m1")
	f.runDispatcher(t, &fakeDeliverer{}, relay.DispatchConfig{Poll: 10 * time.Millisecond})
	got := <-acks
	if got.mode != switchboard.ModeWebhook || got.d.TaskID != task.ID() || got.d.Kind != switchboard.DeliverTask {
		t.Fatalf("ack of %s %s %s", got.mode, got.d.TaskID, got.d.Kind)
	}
	if got.d.OfferedAt == nil || got.d.CreatedAt.After(*got.d.OfferedAt) || got.d.OfferedAt.After(got.at) {
		t.Fatalf("created %v, offered %v, acknowledged %v: want them in order", got.d.CreatedAt, got.d.OfferedAt, got.at)
	}
	// A second acknowledgement of the same offer is not a first one.
	must(t, f.svc.AckOffer(context.Background(), g, got.d, nil))
	select {
	case again := <-acks:
		t.Fatalf("reported twice: %+v", again)
	default:
	}
}

// TestDirectDispatchTellsMintedContexts: the task a dispatcher takes in
// its creating transaction says whether Switchboard made its context id
// (the message named none), which a front reads to skip looking up a
// mapping that cannot exist; a context the peer named is never minted.
// Until the dispatcher has registered, tasks are queued and read back from
// the store, where the mark is not kept: the test sends until one goes
// directly.
func TestDirectDispatchTellsMintedContexts(t *testing.T) {
	f := newFixture(t, membus.New())
	g := f.webhookAgent(t, "hook")
	got := make(chan *switchboard.Task, 1)
	f.runDispatcher(t, deliverFunc(func(_ context.Context, _ *switchboard.Agent, o *switchboard.Offer) (a2a.Event, error) {
		got <- o.Task
		return &a2a.Message{Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart("done")}}, nil
	}), relay.DispatchConfig{Direct: true})
	send := func(n int, contextID string) *switchboard.Task {
		t.Helper()
		_, _, err := f.svc.SendMessage(context.Background(), g, switchboard.Peer{AgentID: g.ID, ID: "peer-bob", Label: "bob"},
			&a2a.SendMessageRequest{Message: &a2a.Message{ID: fmt.Sprintf("m-%d", n), ContextID: contextID, Role: a2a.MessageRoleUser,
				Parts: a2a.ContentParts{a2a.NewTextPart("x")}}}, switchboard.ProtocolV1)
		must(t, err)
		select {
		case task := <-got:
			return task
		case <-time.After(10 * time.Second):
			t.Fatal("the dispatcher took no task")
			return nil
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for n := 0; !send(n, "").ContextMinted; n++ {
		if n == 500 || time.Now().After(deadline) {
			t.Fatal("no task without a context came marked as minted")
		}
	}
	if task := send(1000, "ctx-named"); task.ContextMinted || task.A2A.ContextID != "ctx-named" {
		t.Fatalf("a named context: minted %v, context %q", task.ContextMinted, task.A2A.ContextID)
	}
}

// deliverFunc is a Deliverer made of a function.
type deliverFunc func(ctx context.Context, agent *switchboard.Agent, o *switchboard.Offer) (a2a.Event, error)

func (f deliverFunc) Deliver(ctx context.Context, agent *switchboard.Agent, o *switchboard.Offer) (a2a.Event, error) {
	return f(ctx, agent, o)
}
