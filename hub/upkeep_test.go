package hub_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/internal/testwait"
)

// TestSessionTakenWithoutHintClosesConnection: when the agent's session is
// taken by a connection the bus never told this instance about (a lost
// hint), the hub's next renewal finds it and closes the older connection
// as replaced. It runs in a synctest bubble (newBubbleServer): the
// renewals come on the bubble's clock.
func TestSessionTakenWithoutHintClosesConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newBubbleServer(t)
		g, _ := s.agent("taken")
		a := s.connect(s.agentToken(g))
		now := time.Now()
		_, err := s.db.OpenSession(context.Background(), &switchboard.AgentSession{AgentID: g.ID, Holder: "elsewhere",
			InstanceID: "another-instance", ConnectedAt: now, ExpiresAt: now.Add(time.Minute)})
		must(t, err)
		// Renewals run every heartbeat (1 s here); closed() waits longer.
		if code := a.closed(); code != connproto.CloseReplaced {
			t.Fatalf("closed with %d, want %d (replaced)", code, connproto.CloseReplaced)
		}
	})
}

// TestRenewalKeepsSessionsLive: the hub renews its connections' sessions
// every heartbeat, so a session outlives its first expiry.
func TestRenewalKeepsSessionsLive(t *testing.T) {
	s := newServer(t)
	g, _ := s.agent("kept")
	s.connect(s.agentToken(g))
	first, err := s.db.FindSession(context.Background(), g.ID)
	must(t, err)
	testwait.ForErr(t, "the session's renewal", func() error {
		got, err := s.db.FindSession(context.Background(), g.ID)
		must(t, err)
		if !got.ExpiresAt.After(first.ExpiresAt) || got.Holder != first.Holder {
			return fmt.Errorf("the session was not renewed: %+v", got)
		}
		return nil
	})
}
