package relay_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/relay"
)

// TestSendsOfOtherAgentsAreNotHeld: only an agent whose dispatcher writes
// on answer has a message's sends taken one at a time on an instance. For
// any other, a copy sent while the first is being written goes on to the
// store, whose record of message ids makes the two one task.
func TestSendsOfOtherAgentsAreNotHeld(t *testing.T) {
	bus := membus.New()
	f := newFixture(t, bus)
	ps := newCreatePausingStore()
	ps.DB = f.db
	f.svc = relay.New(ps, bus, slog.New(slog.NewTextHandler(io.Discard, nil)))
	send := func(ctx context.Context) (*switchboard.Task, bool, error) {
		return f.svc.SendMessage(ctx, f.agent, f.peer, &a2a.SendMessageRequest{
			Message: &a2a.Message{ID: "m-1", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("x")}},
		}, switchboard.ProtocolV1)
	}
	type result struct {
		task     *switchboard.Task
		replayed bool
		err      error
	}
	first := make(chan result, 1)
	ps.arm("m-1")
	go func() {
		task, replayed, err := send(context.Background())
		first <- result{task, replayed, err}
	}()
	<-ps.paused

	// A held copy would wait for the first until its context ends.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	second, replayed, err := send(ctx)
	if err != nil || replayed {
		t.Fatalf("the copy sent while the first is being written: replayed %v, %v", replayed, err)
	}
	if n := f.svc.MessageWaiters(f.agent.ID, f.peer.ID, "m-1"); n != 0 {
		t.Fatalf("%d sends waited for the message", n)
	}
	close(ps.resume)
	r := <-first
	if r.err != nil || !r.replayed || r.task.ID() != second.ID() {
		t.Fatalf("the first send after the copy was written: %v (replayed %v), want task %s replayed", r.err, r.replayed, second.ID())
	}
	page, err := f.svc.ListTasks(context.Background(), f.peer, relay.TaskQuery{})
	if err != nil || page.TotalSize != 1 {
		t.Fatalf("tasks stored: %v %v", page, err)
	}
}
