package network_test

import (
	"context"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/network"
)

// TestFollowUpGates: a follow-up (a message with a taskId) is refused to
// a sender that may no longer use the network, and a task whose agent's
// account was disabled reads as not found.
func TestFollowUpGates(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	sender := w.agent("sender", "", "lab")
	other := &switchboard.Account{ID: switchboard.NewID(), Name: "other", Role: switchboard.RoleOwner}
	must(t, w.db.CreateAccount(ctx, other))
	w.agentOf(other, "worker", "x", "lab")
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("start"))
	task, _, err := w.net.Send(ctx, sender, network.Request{Target: network.Target{To: "worker"}, Message: &a2a.SendMessageRequest{Message: msg}}, nil)
	must(t, err)
	followUp := func() error {
		next := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("more"))
		next.TaskID = task.ID()
		s, err := w.db.FindAgentByID(ctx, sender.ID)
		must(t, err)
		_, _, err = w.net.Send(ctx, s, network.Request{Message: &a2a.SendMessageRequest{Message: next}}, nil)
		return err
	}
	must(t, followUp())

	w.update(sender, switchboard.AgentUpdate{Approved: new(false)})
	if err := followUp(); switchboard.ErrorCode(err) != switchboard.EFORBIDDEN {
		t.Fatalf("an unapproved sender continues its task: %v", err)
	}
	w.update(sender, switchboard.AgentUpdate{Approved: new(true)})

	_, err = w.db.UpdateAccount(ctx, other.ID, switchboard.AccountUpdate{Disabled: new(true)})
	must(t, err)
	if _, err := w.net.TaskAgent(ctx, network.AgentPeer(sender), task.ID()); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("the task of a disabled account's agent: %v", err)
	}
	if err := followUp(); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("a follow-up to a disabled account's agent: %v", err)
	}
}

// TestRetryMemory: a retry (the same message id) goes where the first
// went for ten minutes, then is a new question; and never to an agent
// whose account was disabled since.
func TestRetryMemory(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	sender := w.agent("sender", "", "lab")
	other := &switchboard.Account{ID: switchboard.NewID(), Name: "other", Role: switchboard.RoleOwner}
	must(t, w.db.CreateAccount(ctx, other))
	a := w.agentOf(other, "a", "x", "lab")
	b := w.agent("b", "x", "lab")
	connectAll := func() {
		w.connect(a)
		w.connect(b)
	}
	connectAll()
	q := switchboard.DiscoveryQuery{SenderID: sender.ID, Communities: []string{"lab"}}
	key := network.AgentPeer(sender).Key()
	first, err := w.net.DiscoverFor(ctx, key, "m1", q)
	must(t, err)
	again, err := w.net.DiscoverFor(ctx, key, "m1", q)
	must(t, err)
	if again.Agent.ID != first.Agent.ID {
		t.Fatalf("a retry went to %s, the first to %s", again.Agent.Handle, first.Agent.Handle)
	}
	w.advance(11 * time.Minute)
	connectAll() // live again, at the new time
	later, err := w.net.DiscoverFor(ctx, key, "m1", q)
	must(t, err)
	if later.Agent.ID == first.Agent.ID {
		t.Fatalf("eleven minutes on, the message went to %s again: the turns moved on", later.Agent.Handle)
	}

	// n… goes to a; a's account is disabled; a retry of it is no new work.
	toA := sentTo(t, w, key, q, a)
	_, err = w.db.UpdateAccount(ctx, other.ID, switchboard.AccountUpdate{Disabled: new(true)})
	must(t, err)
	if c, err := w.net.DiscoverFor(ctx, key, toA, q); switchboard.ErrorCode(err) != switchboard.ENOAGENT {
		t.Fatalf("a retry to an agent whose account is disabled: %v %v", c, err)
	}
}

// sentTo returns the id of a message that discovery sent to g.
func sentTo(t *testing.T, w *world, key string, q switchboard.DiscoveryQuery, g *switchboard.Agent) string {
	t.Helper()
	for i := range 6 {
		id := "n" + string(rune('0'+i))
		c, err := w.net.DiscoverFor(context.Background(), key, id, q)
		must(t, err)
		if c.Agent.ID == g.ID {
			return id
		}
	}
	t.Fatalf("%s was never chosen", g.Handle)
	return ""
}

// TestRetryToAnUnreachableAgent: a retry of a message whose agent has
// since left the community, lost its approval or been deleted is
// ENOAGENT, never new work on another member; an agent still in another
// of the sender's communities takes a retry asked of any of them.
func TestRetryToAnUnreachableAgent(t *testing.T) {
	cases := map[string]struct {
		unreach func(w *world, a *switchboard.Agent)
		anyOK   bool // a retry asked of any community still reaches a
	}{
		"LeftTheCommunity": {func(w *world, a *switchboard.Agent) {
			must(t, w.db.LeaveCommunity(context.Background(), a.ID, "lab"))
		}, true},
		"Unapproved": {func(w *world, a *switchboard.Agent) {
			w.update(a, switchboard.AgentUpdate{Approved: new(false)})
		}, false},
		"Deleted": {func(w *world, a *switchboard.Agent) {
			must(t, w.db.DeleteAgent(context.Background(), a.ID))
		}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			ctx := context.Background()
			sender := w.agent("sender", "", "lab", "other")
			a := w.agent("a", "x", "lab", "other")
			w.connect(a)
			w.connect(w.agent("b", "x", "lab"))
			inLab := switchboard.DiscoveryQuery{SenderID: sender.ID, Communities: []string{"lab"}}
			inAny := switchboard.DiscoveryQuery{SenderID: sender.ID}
			labKey, anyKey := network.AgentPeer(sender).Key(), network.AgentPeer(sender).Key()+"any"
			labID, anyID := sentTo(t, w, labKey, inLab, a), sentTo(t, w, anyKey, inAny, a)
			tc.unreach(w, a)
			if c, err := w.net.DiscoverFor(ctx, labKey, labID, inLab); switchboard.ErrorCode(err) != switchboard.ENOAGENT {
				t.Fatalf("a retry in lab to an unreachable agent: %v %v", c, err)
			}
			c, err := w.net.DiscoverFor(ctx, anyKey, anyID, inAny)
			switch {
			case tc.anyOK && (err != nil || c.Agent.ID != a.ID):
				t.Fatalf("a retry in any community, a still in other: %v %v", c, err)
			case !tc.anyOK && switchboard.ErrorCode(err) != switchboard.ENOAGENT:
				t.Fatalf("a retry in any community to an unreachable agent: %v %v", c, err)
			}
		})
	}
}

// TestRetryCreatesNoNewTask: a message sent again after its agent left
// the community is refused, and no other member gets a task for it.
func TestRetryCreatesNoNewTask(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	sender := w.agent("sender", "", "lab")
	w.connect(w.agent("a", "x", "lab"))
	w.connect(w.agent("b", "x", "lab"))
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("once"))
	req := network.Request{Target: network.Target{Community: "lab"}, Message: &a2a.SendMessageRequest{Message: msg}}
	_, first, err := w.net.Send(ctx, sender, req, nil)
	must(t, err)
	must(t, w.db.LeaveCommunity(ctx, first.ID, "lab"))
	task, target, err := w.net.Send(ctx, sender, req, nil)
	if switchboard.ErrorCode(err) != switchboard.ENOAGENT || task != nil {
		t.Fatalf("a retry after its agent left: %v %v %v", task, target, err)
	}
}

// TestViewNeverPicksTheSender: the view of a community serves all its
// senders, and the sender is left out of its own pick, also when the pick
// is trusted without a check (nothing changed since the ranking).
func TestViewNeverPicksTheSender(t *testing.T) {
	w := newWorld(t)
	sender := w.agent("sender", "x", "lab")
	mate := w.agent("mate", "x", "lab")
	w.connect(sender)
	w.connect(mate)
	for range 6 {
		g, err := w.choose(sender, "lab", "x")
		must(t, err)
		if g.ID != mate.ID {
			t.Fatalf("chose %s", g.Handle)
		}
	}
}

// TestViewPrefersLiveToDropped: two candidates were ranked live; one's
// socket drops (it is in its reconnect grace). A pick of it, checked
// against the store, finds it no longer live: the view is dropped and the
// live one is chosen, every time.
func TestViewPrefersLiveToDropped(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	sender := w.agent("sender", "", "lab")
	a := w.agent("a", "x", "lab")
	b := w.agent("b", "x", "lab")
	holder := w.connect(a)
	w.connect(b)
	if _, err := w.choose(sender, "lab", "x"); err != nil { // ranks the view: both live
		t.Fatal(err)
	}
	must(t, w.db.CloseSessions(ctx, []string{holder})) // a is in its grace now
	for range 4 {
		g, err := w.choose(sender, "lab", "x")
		must(t, err)
		if g.ID != b.ID {
			t.Fatalf("chose %s, which is reconnecting, over b, which is live", g.Handle)
		}
	}
}
