package hub_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/hub"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/relay"
)

// TestHubPingsOnlyQuietAgents checks the heartbeat rule: the hub pings an
// agent it has not heard from for an interval, and leaves alone one that
// pings on its own, which is how a connector's pings and the hub's are
// not both sent.
func TestHubPingsOnlyQuietAgents(t *testing.T) {
	interval := 200 * time.Millisecond
	s := newServer(t, func(_ *relay.Service, h *hub.Config, _ *httpapi.Config) { h.HeartbeatInterval = interval })
	_, quietTok := s.agent("quiet")
	_, chattyTok := s.agent("chatty")
	quiet := s.connect(quietTok)
	chatty := s.connect(chattyTok)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pinging := make(chan struct{})
	go func() {
		defer close(pinging)
		for ctx.Err() == nil {
			_ = chatty.ws.Ping(ctx)
			time.Sleep(interval / 4) // the agent's own heartbeat
		}
	}()
	defer func() { cancel(); <-pinging }()
	// The hub's pings of the quiet agent show its heartbeat running; each
	// of them is a moment it could have pinged the chatty agent too, which
	// connected just after.
	start := time.Now()
	testwait.For(t, "5 pings of the quiet agent", func() bool { return quiet.pings.Load() >= 5 })
	if took := time.Since(start); took > 10*interval {
		t.Fatalf("a quiet agent was pinged 5 times in %v, want every interval (%v)", took, interval)
	}
	testwait.For(t, "10 pings of the quiet agent", func() bool { return quiet.pings.Load() >= 10 })
	if n := chatty.pings.Load(); n > 2 { // a stalled test goroutine may let one or two through
		t.Fatalf("an agent that pings every quarter of an interval was pinged %d times in 10 intervals", n)
	}
}

// TestHeartbeatShorterThanAPong checks a heartbeat too short for any pong
// to come in time: the timers fire while the connection is still being set
// up (run with -race: the writer must find them armed), and the agent is
// dropped as not answering.
func TestHeartbeatShorterThanAPong(t *testing.T) {
	s := newServer(t, func(_ *relay.Service, h *hub.Config, _ *httpapi.Config) {
		h.HeartbeatInterval = time.Nanosecond
	})
	_, tok := s.agent("alice")
	a, _, err := s.dial(tok)
	must(t, err)
	// An agent that does not answer pings does not read either: it is
	// dropped without a close handshake.
	if code := a.closed(); code != -1 {
		t.Fatalf("closed with %d, want dropped (no answer to a ping)", code)
	}
}
