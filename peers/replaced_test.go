package peers_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/peers"
)

// TestReplacedEndsTheOldTokensStreams: a token replaced outside Issue (a
// re-pairing's redemption) hints the address's tokens subject, so that
// the streams the old token opened check it again and end.
func TestReplacedEndsTheOldTokensStreams(t *testing.T) {
	bus := membus.New()
	t.Cleanup(func() { _ = bus.Close() })
	s := peers.New(nil, bus, nil)
	subject := switchboard.TokensSubject("agent-1")
	w, err := bus.Watch(context.Background(), subject)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s.Replaced(context.Background(), subject)
	select {
	case <-w.C():
	case <-time.After(10 * time.Second):
		t.Fatal("the tokens subject was not hinted")
	}
}
