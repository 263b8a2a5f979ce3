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

	// m2 goes to a; a's account is disabled; a retry of m2 does not follow.
	var toA string
	for i := range 4 {
		id := "n" + string(rune('0'+i))
		c, err := w.net.DiscoverFor(ctx, key, id, q)
		must(t, err)
		if c.Agent.ID == a.ID {
			toA = id
			break
		}
	}
	if toA == "" {
		t.Fatal("a was never chosen")
	}
	_, err = w.db.UpdateAccount(ctx, other.ID, switchboard.AccountUpdate{Disabled: new(true)})
	must(t, err)
	c, err := w.net.DiscoverFor(ctx, key, toA, q)
	must(t, err)
	if c.Agent.ID == a.ID {
		t.Fatal("a retry went to an agent whose account is disabled")
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
