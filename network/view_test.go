package network_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/network"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// TestViewNeverChoosesWhatChanged: a decision taken from the view checks
// its pick against the store, so an agent paused, unapproved or
// disconnected since the view was ranked (here behind the Service's back,
// as another instance would) is never chosen.
func TestViewNeverChoosesWhatChanged(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	w.net.ReconnectGrace = 0
	sender := w.agent("sender", "", "lab")
	a := w.agent("a", "x", "lab")
	b := w.agent("b", "x", "lab")
	c := w.agent("c", "x", "lab")
	holders := map[string]string{a.ID: w.connect(a), b.ID: w.connect(b), c.ID: w.connect(c)}
	if _, err := w.choose(sender, "lab", "x"); err != nil { // ranks the view
		t.Fatal(err)
	}
	w.update(a, switchboard.AgentUpdate{AcceptsTasks: new(false)})
	must(t, w.db.CloseSessions(ctx, []string{holders[b.ID]}))
	for range 6 {
		g, err := w.choose(sender, "lab", "x")
		must(t, err)
		if g.ID != c.ID {
			t.Fatalf("chose %s: only c accepts tasks and is connected", g.Handle)
		}
	}
	w.update(c, switchboard.AgentUpdate{Approved: new(false)})
	_, err := w.choose(sender, "lab", "x")
	wantNoAgent(t, err, "none live")
}

// TestViewSeesNewAgents: an agent that became a candidate behind the
// Service's back is chosen once the view is ranked again, within
// ViewTTL; with no view (ViewTTL 0) at once.
func TestViewSeesNewAgents(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	sender := w.agent("sender", "", "lab")
	a := w.agent("a", "x", "lab")
	w.connect(a)
	if g, err := w.choose(sender, "lab", "x"); err != nil || g.ID != a.ID {
		t.Fatalf("chose %v, %v", g, err)
	}
	late := w.agent("late", "x") // in no community yet
	w.connect(late)
	_, err := w.db.JoinCommunity(ctx, late.ID, "lab", true) // not through the Service
	must(t, err)
	w.advance(w.net.ViewTTL)
	seen := make(map[string]int)
	for range 4 {
		g, err := w.choose(sender, "lab", "x")
		must(t, err)
		seen[g.Handle]++
	}
	if seen["a"] != 2 || seen["late"] != 2 {
		t.Fatalf("turns %v, want a and late in turn", seen)
	}

	w.net.ViewTTL = 0
	later := w.agent("later", "x")
	w.connect(later)
	_, err = w.db.JoinCommunity(ctx, later.ID, "lab", true)
	must(t, err)
	seen = make(map[string]int)
	for range 3 {
		g, err := w.choose(sender, "lab", "x")
		must(t, err)
		seen[g.Handle]++
	}
	if seen["later"] != 1 {
		t.Fatalf("turns %v: without a view, later takes its turn at once", seen)
	}
}

// TestViewServesEverySender: a view of a community is shared by its
// senders, and each is left out of its own choice.
func TestViewServesEverySender(t *testing.T) {
	w := newWorld(t)
	a := w.agent("a", "x", "lab")
	b := w.agent("b", "x", "lab")
	w.connect(a)
	w.connect(b)
	for range 4 {
		for _, sender := range []*switchboard.Agent{a, b} {
			g, err := w.net.Choose(context.Background(), sender, network.Target{Community: "lab"})
			must(t, err)
			if g.ID == sender.ID {
				t.Fatalf("%s chose itself", sender.Handle)
			}
		}
	}
}

// checkCounter counts the checks of a pick (Discover of one agent).
type checkCounter struct {
	*sqlstore.DB
	checks atomic.Int64
}

func (c *checkCounter) Discover(ctx context.Context, q switchboard.DiscoveryQuery) (*switchboard.Candidate, error) {
	if q.AgentID != "" {
		c.checks.Add(1)
	}
	return c.DB.Discover(ctx, q)
}

// TestViewTrustsAnUnchangedGeneration: while nothing that could take a
// candidate away has committed since the ranking, and the pick's session
// is still live by its last renewal, the pick is taken without a check;
// a change (a session's end, an agent paused), or a session whose
// renewals stopped (its instance gone, no end written), sends the picks to
// the check again, and what changed is not chosen.
func TestViewTrustsAnUnchangedGeneration(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	store := &checkCounter{DB: w.db}
	w.net = network.New(store, w.relay)
	w.net.Now, w.net.HeartbeatInterval, w.net.ReconnectGrace = w.clock, 10*time.Second, 0
	w.net.ViewTTL = time.Hour // the view outlives the sessions' liveness below
	sender := w.agent("sender", "", "lab")
	rankAgain := func() {
		t.Helper()
		// Stale, and older than its ttl (the clock moves only when told:
		// a view of age 0 would be ranked again in the background).
		w.net.ViewTTL = time.Nanosecond
		w.advance(time.Millisecond)
		_, err := w.choose(sender, "lab", "x")
		must(t, err)
		w.net.ViewTTL = time.Hour
	}
	a := w.agent("a", "x", "lab")
	b := w.agent("b", "x", "lab")
	c := w.agent("c", "x", "lab")
	w.connect(a)
	bHolder := w.connect(b)
	w.connect(c)
	picks := func(n int) map[string]int {
		t.Helper()
		seen := make(map[string]int)
		for range n {
			g, err := w.choose(sender, "lab", "x")
			must(t, err)
			seen[g.Handle]++
		}
		return seen
	}
	if seen := picks(6); seen["a"] != 2 || seen["b"] != 2 || seen["c"] != 2 || store.checks.Load() != 0 {
		t.Fatalf("turns %v with %d checks, want a, b and c in turn and no check", seen, store.checks.Load())
	}

	// b's session ends behind the Service's back (as on another instance).
	must(t, w.db.CloseSessions(ctx, []string{bHolder}))
	if seen := picks(4); seen["b"] != 0 || store.checks.Load() == 0 {
		t.Fatalf("turns %v with %d checks after b left: b chosen, or nothing checked", seen, store.checks.Load())
	}

	// Ranked again, the view is trusted again; then a is paused.
	rankAgain()
	checks := store.checks.Load()
	if seen := picks(2); seen["b"] != 0 || store.checks.Load() != checks {
		t.Fatalf("turns %v with %d more checks, want a and c without a check", seen, store.checks.Load()-checks)
	}
	w.update(a, switchboard.AgentUpdate{AcceptsTasks: new(false)})
	if seen := picks(3); seen["c"] != 3 || store.checks.Load() == checks {
		t.Fatalf("turns %v, %d more checks after a was paused, want c alone, checked", seen, store.checks.Load()-checks)
	}

	// Ranked again, then c's renewals stop: once its last renewal is older
	// than the liveness allows, its pick is checked and it is not chosen.
	rankAgain()
	checks = store.checks.Load()
	w.advance(20 * time.Second) // past the heartbeat interval and its slack
	_, err := w.choose(sender, "lab", "x")
	wantNoAgent(t, err, "none live")
	if store.checks.Load() == checks {
		t.Fatal("a pick whose session ran out of liveness was not checked")
	}
}

// frozenGeneration is a store whose DiscoveryGeneration never moves: as
// an instance that has not yet heard of another's change (the
// notification on its way) while its reads already see it.
type frozenGeneration struct{ *sqlstore.DB }

func (frozenGeneration) DiscoveryGeneration() (uint64, bool) { return 1, true }

// TestViewChecksTheAgentAsReadNow: a pick trusted because the generation
// has not moved is still looked at as the store reads it now: an agent
// paused, unapproved, of a disabled account, whose handle is now another
// agent's, or that became a connector agent without a connection, is not
// chosen from the view.
func TestViewChecksTheAgentAsReadNow(t *testing.T) {
	for name, change := range map[string]func(w *world, a *switchboard.Agent){
		"Paused":     func(w *world, a *switchboard.Agent) { w.update(a, switchboard.AgentUpdate{AcceptsTasks: new(false)}) },
		"Unapproved": func(w *world, a *switchboard.Agent) { w.update(a, switchboard.AgentUpdate{Approved: new(false)}) },
		"AccountDisabled": func(w *world, a *switchboard.Agent) {
			_, err := w.db.UpdateAccount(context.Background(), a.AccountID, switchboard.AccountUpdate{Disabled: new(true)})
			must(w.t, err)
		},
		"HandleReused": func(w *world, a *switchboard.Agent) {
			must(w.t, w.db.DeleteAgent(context.Background(), a.ID))
			w.connect(w.agent(a.Handle, "x")) // live, in no community
		},
		"NowConnector": func(w *world, a *switchboard.Agent) {
			connector := switchboard.ModeConnector
			w.update(a, switchboard.AgentUpdate{Mode: &connector})
		},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			ctx := context.Background()
			w.net = network.New(frozenGeneration{w.db}, w.relay)
			w.net.Now, w.net.HeartbeatInterval, w.net.ReconnectGrace = w.clock, 10*time.Second, 0
			w.net.ViewTTL = time.Hour
			sender := w.agent("sender", "", "lab")
			other := &switchboard.Account{ID: switchboard.NewID(), Name: "other", Role: switchboard.RoleOwner}
			must(t, w.db.CreateAccount(ctx, other))
			a := w.agentOf(other, "a", "x", "lab")
			webhook := switchboard.ModeWebhook
			endpoint := "https://hook.example/a"
			if name == "NowConnector" {
				w.update(a, switchboard.AgentUpdate{Mode: &webhook, Endpoint: &endpoint}) // live without a session
			} else {
				w.connect(a)
			}
			b := w.agent("b", "x", "lab")
			w.connect(b)
			if _, err := w.choose(sender, "lab", "x"); err != nil { // ranks the view: a and b
				t.Fatal(err)
			}
			change(w, a)
			for range 4 {
				g, err := w.choose(sender, "lab", "x")
				must(t, err)
				if g.ID != b.ID {
					t.Fatalf("chose %s (%s), want b", g.Handle, g.ID)
				}
			}
		})
	}
}

// TestViewGraceRunsOut: a pick ranked in its reconnect grace is never
// trusted without a check: once the grace has run out the agent is not
// chosen, though the generation did not move.
func TestViewGraceRunsOut(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	w.net = network.New(frozenGeneration{w.db}, w.relay)
	w.net.Now, w.net.HeartbeatInterval, w.net.ReconnectGrace = w.clock, 10*time.Second, 5*time.Second
	w.net.ViewTTL = time.Hour
	sender := w.agent("sender", "", "lab")
	a := w.agent("a", "x", "lab")
	must(t, w.db.CloseSessions(ctx, []string{w.connect(a)}))
	if g, err := w.choose(sender, "lab", "x"); err != nil || g.ID != a.ID { // ranks the view: a, in its grace
		t.Fatalf("in its grace: %v %v", g, err)
	}
	w.advance(6 * time.Second)
	_, err := w.choose(sender, "lab", "x")
	wantNoAgent(t, err, "none live")
}
