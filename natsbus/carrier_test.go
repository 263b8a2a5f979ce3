package natsbus_test

import (
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/bustest"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/natsbus"
)

func TestCarrierContractInProcess(t *testing.T) {
	s := startServer(t, natsbus.ServerOptions{})
	bustest.RunCarrier(t, func(t *testing.T) bustest.CarrierBus {
		b, err := natsbus.ConnectInProcess(s, natsbus.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return b
	})
}

func TestCarrierContractAcrossCluster(t *testing.T) {
	servers := cluster(t, 3)
	bustest.RunCarrierAcross(t, func(t *testing.T) (bustest.CarrierBus, bustest.CarrierBus) {
		a := connect(t, servers[1].ClientURL(), natsbus.Options{})
		b := connect(t, servers[2].ClientURL(), natsbus.Options{})
		linked(t, a, b)
		linked(t, b, a)
		return a, b
	})
}

// TestCarrierOutsideHints: a message is not a hint, and the hints'
// wildcard subscription does not receive the messages.
func TestCarrierOutsideHints(t *testing.T) {
	s := startServer(t, natsbus.ServerOptions{Listen: "127.0.0.1:0"})
	a := connect(t, s.ClientURL(), natsbus.Options{})
	b := connect(t, s.ClientURL(), natsbus.Options{})
	in := make(chan []byte, 1000)
	sub, err := b.Subscribe(t.Context(), "session.x.y", func(d []byte) { in <- d })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	// b's subscription reaches the server on b's connection: publish until
	// a message crosses.
	testwait.For(t, "a message to cross", func() bool {
		if err := a.Publish(t.Context(), "session.x.y", []byte("frame")); err != nil {
			t.Fatal(err)
		}
		select {
		case d := <-in:
			if string(d) != "frame" {
				t.Fatalf("got %q", d)
			}
			return true
		case <-time.After(20 * time.Millisecond):
			return false
		}
	})
	if got, want := b.Received(), uint64(0); got != want {
		t.Fatalf("the message counted as a hint: received %d", got)
	}
	if b.Carried() == 0 {
		t.Fatal("the message was not counted as carried")
	}
}
