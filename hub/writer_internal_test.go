package hub

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connproto"
)

// TestPongHandledBeforeTheNextPing checks the order the writer handles a
// batch in: a pong that arrives as the next ping falls due is an answered
// ping, not a missed one.
func TestPongHandledBeforeTheNextPing(t *testing.T) {
	c := &conn{hub: &Hub{cfg: Config{HeartbeatInterval: time.Hour}}, heard: new(connproto.LastHeard), log: slog.New(slog.DiscardHandler)}
	c.ctx = context.Background()
	c.w.ping = time.AfterFunc(time.Hour, func() {})
	defer c.w.ping.Stop()
	c.w.nextPing = time.Now()
	c.w.pinging = true // a ping waits for its pong
	c.heard.Now()      // the pong came: the agent was heard
	if err := c.handle(1<<evPing | 1<<evPong); err != nil {
		t.Fatalf("a pong and the next ping in one batch: %v", err)
	}
	if c.w.pinging {
		t.Fatal("still waiting for a pong")
	}
}

// TestUpdateWaitsForTheHeldAnswerBeingWritten checks that an update of a
// task whose held answer the timer is writing waits until it is written,
// so that the two are written in the order they came. In a synctest
// bubble, synctest.Wait returns once takeHeld has either returned or
// blocked for good, so the check that it waits is exact.
func TestUpdateWaitsForTheHeldAnswerBeingWritten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &conn{}
		h := &heldAnswer{d: &switchboard.Delivery{TaskID: "t1"}, taken: true, written: make(chan struct{})}
		c.held = map[a2a.TaskID]*heldAnswer{"t1": h}
		got := make(chan *heldAnswer, 1)
		go func() { got <- c.takeHeld("t1") }()
		synctest.Wait()
		select {
		case <-got:
			t.Fatal("takeHeld returned while the held answer was being written")
		default:
		}
		close(h.written)
		if taken := <-got; taken != nil {
			t.Fatal("takeHeld took an answer the timer wrote")
		}
	})
}
