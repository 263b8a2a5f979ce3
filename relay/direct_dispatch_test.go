package relay_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// createPanicStore panics in CreateTask once armed, as a write's panic
// raised again in its caller would.
type createPanicStore struct {
	*sqlstore.DB
	armed atomic.Bool
}

func (s *createPanicStore) CreateTask(ctx context.Context, t *switchboard.Task, change *switchboard.TaskChange) (*switchboard.TaskEvent, error) {
	if s.armed.CompareAndSwap(true, false) {
		panic("a write panicked")
	}
	return s.DB.CreateTask(ctx, t, change)
}

// TestDirectDispatchRoomAfterPanic: a creation that panics (a server
// recovers a handler's panic) gives back the room it reserved in the
// dispatcher, whose stop waits for every reservation to end.
func TestDirectDispatchRoomAfterPanic(t *testing.T) {
	bus := membus.New()
	f := newFixture(t, bus)
	ps := &createPanicStore{DB: f.db}
	f.svc = relay.New(ps, bus, slog.New(slog.NewTextHandler(io.Discard, nil)))
	g := f.webhookAgent(t, "hook")
	got := make(chan *switchboard.Task, 1)
	// Not f.runDispatcher: its cleanup would wait for the stop that fails.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		_ = f.svc.RunDispatcher(ctx, switchboard.ModeWebhook, deliverFunc(func(_ context.Context, _ *switchboard.Agent, o *switchboard.Offer) (a2a.Event, error) {
			got <- o.Task
			return &a2a.Message{Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart("done")}}, nil
		}), relay.DispatchConfig{Direct: true})
	}()
	send := func(id string) error {
		_, _, err := f.svc.SendMessage(context.Background(), g, switchboard.Peer{AgentID: g.ID, ID: "peer-bob", Label: "bob"},
			&a2a.SendMessageRequest{Message: &a2a.Message{ID: id, Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("x")}}},
			switchboard.ProtocolV1)
		return err
	}
	// A task taken directly comes marked as minted (TestDirectDispatchTellsMintedContexts):
	// the dispatcher has registered.
	testwait.ForErr(t, "a task the dispatcher takes directly", func() error {
		if err := send(switchboard.NewID()); err != nil {
			return err
		}
		if task := <-got; !task.ContextMinted {
			return errors.New("the task was queued")
		}
		return nil
	})
	ps.armed.Store(true)
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the creation did not panic")
			}
		}()
		_ = send("m-panic")
	}()
	cancel()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the dispatcher's stop waits for the room the panicked creation reserved")
	}
}
