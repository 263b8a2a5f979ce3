package network_test

import (
	"context"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/network"
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
