package natsbus_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/bustest"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/natsbus"
)

// startServer starts an embedded server for the test.
func startServer(t testing.TB, o natsbus.ServerOptions) *server.Server {
	t.Helper()
	s, err := natsbus.StartServer(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}

func connect(t testing.TB, url string, o natsbus.Options) *natsbus.Bus {
	t.Helper()
	if o.Logger == nil && !testing.Verbose() {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	b, err := natsbus.Connect(url, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func TestContractInProcess(t *testing.T) {
	s := startServer(t, natsbus.ServerOptions{})
	bustest.Run(t, func(t *testing.T) switchboard.Bus {
		b, err := natsbus.ConnectInProcess(s, natsbus.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return b
	})
}

func TestContractTCP(t *testing.T) {
	s := startServer(t, natsbus.ServerOptions{Listen: "127.0.0.1:0"})
	bustest.Run(t, func(t *testing.T) switchboard.Bus {
		b, err := natsbus.Connect(s.ClientURL(), natsbus.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return b
	})
}

// cluster starts n embedded servers joined by routes to the first.
func cluster(t testing.TB, n int) []*server.Server {
	t.Helper()
	seed := startServer(t, natsbus.ServerOptions{Name: "s0", Listen: "127.0.0.1:0", ClusterListen: "127.0.0.1:0"})
	route := fmt.Sprintf("nats-route://%s", seed.ClusterAddr())
	out := []*server.Server{seed}
	for i := 1; i < n; i++ {
		out = append(out, startServer(t, natsbus.ServerOptions{Name: fmt.Sprint("s", i), Listen: "127.0.0.1:0",
			ClusterListen: "127.0.0.1:0", Routes: []string{route}}))
	}
	return out
}

// linked waits until a hint published on a reaches a watcher on b: the
// routes are up and the subscriptions known on both sides.
func linked(t testing.TB, a, b switchboard.Bus) {
	t.Helper()
	ctx := context.Background()
	w, err := b.Watch(ctx, "probe")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	testwait.For(t, "the cluster to carry a hint", func() bool {
		if err := a.Notify(ctx, "probe"); err != nil {
			t.Fatal(err)
		}
		select {
		case <-w.C():
			return true
		case <-time.After(20 * time.Millisecond):
			return false
		}
	})
}

func TestContractAcrossCluster(t *testing.T) {
	servers := cluster(t, 3)
	bustest.RunAcross(t, func(t *testing.T) (switchboard.Bus, switchboard.Bus) {
		a := connect(t, servers[1].ClientURL(), natsbus.Options{})
		b := connect(t, servers[2].ClientURL(), natsbus.Options{})
		linked(t, a, b)
		linked(t, b, a)
		return a, b
	})
}

// TestPrefixSeparatesDeployments: two deployments on one NATS server do
// not see each other's hints.
func TestPrefixSeparatesDeployments(t *testing.T) {
	s := startServer(t, natsbus.ServerOptions{Listen: "127.0.0.1:0"})
	a := connect(t, s.ClientURL(), natsbus.Options{Prefix: "prod"})
	a2 := connect(t, s.ClientURL(), natsbus.Options{Prefix: "prod"})
	b := connect(t, s.ClientURL(), natsbus.Options{Prefix: "staging"})
	linked(t, a, a2)
	w, _ := b.Watch(context.Background(), "task.1")
	defer w.Close()
	_ = a.Notify(context.Background(), "task.1")
	select {
	case <-w.C():
		t.Fatal("a hint crossed from one prefix to another")
	case <-time.After(100 * time.Millisecond):
	}
	if _, err := natsbus.Connect(s.ClientURL(), natsbus.Options{Prefix: "bad.prefix."}); err == nil {
		t.Fatal("a prefix ending in a dot was accepted")
	}
}

// TestServerRestart: the NATS server goes away and comes back on the same
// address. Watches stay open, Notify does not fail meanwhile, and hints reach
// the old watches again once the clients have reconnected.
func TestServerRestart(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s, err := natsbus.StartServer(natsbus.ServerOptions{Listen: addr})
	if err != nil {
		t.Fatal(err)
	}
	url := s.ClientURL()
	a := connect(t, url, natsbus.Options{})
	b := connect(t, url, natsbus.Options{})
	linked(t, a, b)
	w, _ := b.Watch(context.Background(), "agent.1")
	defer w.Close()

	s.Shutdown()
	s.WaitForShutdown()
	if err := a.Notify(context.Background(), "agent.1"); err != nil {
		t.Fatalf("notify while the server is down: %v", err)
	}
	startServer(t, natsbus.ServerOptions{Listen: addr})
	testwait.For(t, "the buses to reconnect", func() bool { return a.Connected() && b.Connected() })
	// The hint sent during the outage may be lost (a may flush it before b
	// has subscribed again): hints are only hints. The old watch works again.
	testwait.For(t, "the watch opened before the outage to be woken after it", func() bool {
		_ = a.Notify(context.Background(), "agent.1")
		select {
		case _, ok := <-w.C():
			if !ok {
				t.Fatal("the watch closed during the outage")
			}
			return true
		case <-time.After(20 * time.Millisecond):
			return false
		}
	})
}

// TestReceivedCountsOtherInstancesHints: Received counts the hints that
// came from another instance, not the instance's own.
func TestReceivedCountsOtherInstancesHints(t *testing.T) {
	s := startServer(t, natsbus.ServerOptions{Listen: "127.0.0.1:0"})
	a := connect(t, s.ClientURL(), natsbus.Options{})
	b := connect(t, s.ClientURL(), natsbus.Options{})
	// One server: b's subscription is there once Connect returns.
	ctx := context.Background()
	w, err := b.Watch(ctx, "task.x")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := a.Notify(ctx, "task.x"); err != nil {
		t.Fatal(err)
	}
	<-w.C()
	if got, want := b.Received(), uint64(1); got != want {
		t.Fatalf("b received: got %d, want %d", got, want)
	}
	if got, want := a.Received(), uint64(0); got != want {
		t.Fatalf("a counted its own hint: got %d, want %d", got, want)
	}
}
