package storetest

import (
	"context"
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
	step := func(what string, moves bool, change func() error) {
		t.Helper()
		before, _ := s.DiscoveryGeneration()
		must(t, change())
		after, ok := s.DiscoveryGeneration()
		if !ok {
			t.Fatalf("%s: the store no longer tells its generation", what)
		}
		if moved := after != before; moved != moves {
			t.Errorf("%s: generation %d → %d, want moved %v", what, before, after, moves)
		}
	}
	step("renewing the session", false, func() error {
		_, err := s.RenewSessions(ctx, []string{holder}, time.Now().Add(time.Minute))
		return err
	})
	step("a task for the agent", false, func() error {
		_, err := s.CreateTask(ctx, newTask(g, "bob", "ctx", "m1", time.Now()), &switchboard.TaskChange{MessageID: "m1"})
		return err
	})
	step("a sweep that puts nothing back", false, func() error {
		_, err := s.RequeueStaleOffers(ctx, time.Now().Add(-time.Hour))
		return err
	})
	step("leaving a community", true, func() error { return s.LeaveCommunity(ctx, g.ID, "lab") })
	step("joining one", true, func() error {
		_, err := s.JoinCommunity(ctx, g.ID, "lab", true)
		return err
	})
	step("pausing the agent", true, func() error {
		_, err := s.UpdateAgent(ctx, g.ID, switchboard.AgentUpdate{AcceptsTasks: new(false)})
		return err
	})
	step("a delivery put back after a failure", true, func() error {
		return s.RetryDelivery(ctx, switchboard.NewID(), time.Now().Add(time.Minute), "HTTP 503")
	})
	step("deliveries of a lost holder put back", true, func() error {
		_, err := s.ReleaseDeliveries(ctx, []string{holder})
		return err
	})
	step("the session ending", true, func() error { return s.CloseSessions(ctx, []string{holder}) })
	if now, _ := s.DiscoveryGeneration(); now == gen {
		t.Fatal("the generation never moved")
	}
}
