package relay_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/membus"
)

// TestWaitEndsWhenAgentDeleted: a blocking call waiting for the agent's
// answer ends, with ENOTFOUND, within a poll of the agent's deletion (its
// tasks go with it), not when its wait runs out.
func TestWaitEndsWhenAgentDeleted(t *testing.T) {
	f := newFixture(t, membus.New())
	f.svc.StreamPoll = 20 * time.Millisecond
	ctx := context.Background()
	wait, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := f.svc.SendMessageAndWait(ctx, f.agent, f.peer, &a2a.SendMessageRequest{
			Message: &a2a.Message{ID: "m-1", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("hi")}},
		}, switchboard.ProtocolV1, wait)
		done <- err
	}()
	testwait.ForErr(t, "the call to wait for its turn", func() error {
		task, err := f.db.FindTaskByMessageID(ctx, f.agent.ID, f.peer.ID, "m-1")
		if err == nil && f.svc.TurnWaiters(task.ID()) != 1 {
			err = errors.New("not waiting yet")
		}
		return err
	})
	must(t, f.db.DeleteAgent(ctx, f.agent.ID))
	select {
	case err := <-done:
		if switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
			t.Fatalf("the call ended with %v, want ENOTFOUND", err)
		}
	case <-time.After(testwait.Timeout):
		t.Fatal("the call still waits for the answer of a deleted agent")
	}
}
