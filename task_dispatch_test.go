package switchboard_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/membus"
)

// fakeDeliverer answers every agent's deliveries at once, except those of
// the agent named hang, whose calls hang until their context ends.
type fakeDeliverer struct {
	hang string

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
func (f *fixture) runDispatcher(t *testing.T, d switchboard.Deliverer, cfg switchboard.DispatchConfig) (stop func()) {
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
	f.runDispatcher(t, d, switchboard.DispatchConfig{Concurrency: 16, Timeout: time.Minute, Poll: 10 * time.Millisecond})
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
	if peak > switchboard.DefaultDispatchPerAgent {
		t.Fatalf("the slow agent had %d calls in flight, want at most %d", peak, switchboard.DefaultDispatchPerAgent)
	}
}
