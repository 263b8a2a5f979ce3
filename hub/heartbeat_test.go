package hub_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/hub"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/relay"
)

// TestHubPingsOnlyQuietAgents checks the heartbeat rule: the hub pings an
// agent it has not heard from for an interval, and leaves alone one that
// pings on its own, which is how a connector's pings and the hub's are
// not both sent. It runs in a synctest bubble, on the in-process network:
// the ten intervals pass on the bubble's clock, and the counts are exact.
func TestHubPingsOnlyQuietAgents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = 200 * time.Millisecond
		s := newBubbleServer(t, func(_ *relay.Service, h *hub.Config, _ *httpapi.Config) { h.HeartbeatInterval = interval })
		_, quietTok := s.agent("quiet")
		_, chattyTok := s.agent("chatty")
		quiet := s.connect(quietTok)
		chatty := s.connect(chattyTok)
		ctx, cancel := context.WithCancel(context.Background())
		pinging := make(chan struct{})
		go func() {
			defer close(pinging)
			for ctx.Err() == nil {
				_ = chatty.ws.Ping(ctx)
				time.Sleep(interval / 4) // the agent's own heartbeat
			}
		}()
		defer func() { cancel(); <-pinging }()
		// Both connected at the bubble's start; the pings due at the tenth
		// interval are received.
		testwait.Advance(10 * interval)
		if n := quiet.pings.Load(); n != 10 {
			t.Fatalf("a quiet agent was pinged %d times in 10 intervals, want every interval", n)
		}
		if n := chatty.pings.Load(); n != 0 {
			t.Fatalf("an agent that pings every quarter of an interval was pinged %d times in 10 intervals, want never", n)
		}
	})
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
