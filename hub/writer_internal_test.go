package hub

import (
	"context"
	"log/slog"
	"testing"
	"time"

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
