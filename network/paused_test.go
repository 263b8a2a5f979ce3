package network_test

import (
	"context"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/network"
)

// TestPausedByName: an agent that does not accept tasks now is still sent
// work by name, as at its address: the task waits for it, and is offered
// once it accepts tasks again. Discovery never chooses it.
func TestPausedByName(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	sender := w.agent("sender", "", "lab")
	paused := w.agent("paused", "code", "lab")
	holder := w.connect(paused)
	w.update(paused, switchboard.AgentUpdate{AcceptsTasks: new(false)})

	_, err := w.choose(sender, "lab", "code")
	wantNoAgent(t, err, "none accepting")
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("when you are back"))
	task, to, err := w.net.Send(ctx, sender, network.Request{Target: network.Target{To: "paused", Skill: "code"},
		Message: &a2a.SendMessageRequest{Message: msg}}, nil)
	must(t, err)
	if to.ID != paused.ID || task.AgentID != paused.ID || task.State() != a2a.TaskStateSubmitted {
		t.Fatalf("sent to %s, task on %s in %s", to.Handle, task.AgentID, task.State())
	}
	paused, err = w.db.FindAgentByID(ctx, paused.ID)
	must(t, err)
	offers, err := w.relay.ClaimOffers(ctx, paused, holder, 10)
	must(t, err)
	if len(offers) != 0 {
		t.Fatalf("a paused agent was offered %d tasks", len(offers))
	}
	w.update(paused, switchboard.AgentUpdate{AcceptsTasks: new(true)})
	offers, err = w.relay.ClaimOffers(ctx, paused, holder, 10)
	must(t, err)
	if len(offers) != 1 || offers[0].Task.ID() != task.ID() {
		t.Fatalf("accepting again, the agent was offered %d tasks, want the one that waited", len(offers))
	}
}
