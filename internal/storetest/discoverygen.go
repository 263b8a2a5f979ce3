package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/testwait"
)

// testDiscoveryGeneration: the generation moves on with every committed
// change that could take an agent out of the candidates (memberships,
// the agent's gates, a session's end, a delivery put back after a
// failure or a lost holder), and stays with what cannot (a renewal, a new
// task, a sweep that put nothing back).
func testDiscoveryGeneration(t *testing.T, s Store) {
	ctx := context.Background()
	acct := newAccount(t, s, "alice")
	g := netAgent(t, s, acct, "worker", "x", "lab")
	holder := connect(t, s, g)
	var gen uint64
	testwait.For(t, "the store to tell its discovery generation (PostgreSQL: once it listens)", func() bool {
		var ok bool
		gen, ok = s.DiscoveryGeneration()
		return ok
	})
	// moves checks that change moves the generation. stays checks that it
	// does not: on PostgreSQL the store also hears its own earlier
	// changes' notifications, which may arrive during the change, so it
	// passes when one of ten tries leaves the generation where it was.
	moves := func(what string, change func() error) {
		t.Helper()
		before, _ := s.DiscoveryGeneration()
		must(t, change())
		if after, ok := s.DiscoveryGeneration(); !ok || after == before {
			t.Errorf("%s: generation %d → %d (known %v), want it moved", what, before, after, ok)
		}
	}
	stays := func(what string, change func() error) {
		t.Helper()
		for range 10 {
			before, _ := s.DiscoveryGeneration()
			must(t, change())
			if after, _ := s.DiscoveryGeneration(); after == before {
				return
			}
		}
		t.Errorf("%s: moved the generation in each of ten tries", what)
	}
	stays("renewing the session", func() error {
		_, err := s.RenewSessions(ctx, []string{holder}, time.Now().Add(time.Minute))
		return err
	})
	n := 0
	stays("a task for the agent", func() error {
		n++
		m := fmt.Sprint("m", n)
		_, err := s.CreateTask(ctx, newTask(g, "bob", "ctx", m, time.Now()), &switchboard.TaskChange{MessageID: m})
		return err
	})
	stays("a sweep that puts nothing back", func() error {
		_, err := s.RequeueStaleOffers(ctx, time.Now().Add(-time.Hour))
		return err
	})
	moves("leaving a community", func() error { return s.LeaveCommunity(ctx, g.ID, "lab") })
	moves("joining one", func() error {
		_, err := s.JoinCommunity(ctx, g.ID, "lab", true)
		return err
	})
	moves("pausing the agent", func() error {
		_, err := s.UpdateAgent(ctx, g.ID, switchboard.AgentUpdate{AcceptsTasks: new(false)})
		return err
	})
	moves("a delivery put back after a failure", func() error {
		return s.RetryDelivery(ctx, switchboard.NewID(), time.Now().Add(time.Minute), "HTTP 503")
	})
	moves("deliveries of a lost holder put back", func() error {
		_, err := s.ReleaseDeliveries(ctx, []string{holder})
		return err
	})
	moves("the session ending", func() error { return s.CloseSessions(ctx, []string{holder}) })
	if now, _ := s.DiscoveryGeneration(); now == gen {
		t.Fatal("the generation never moved")
	}
}
