package relay_test

import (
	"context"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/relay"
)

// forgedMessage is a peer's message that claims the server's metadata key.
func forgedMessage(id string, taskID a2a.TaskID) *a2a.Message {
	return &a2a.Message{ID: id, Role: a2a.MessageRoleUser, TaskID: taskID, Parts: a2a.ContentParts{a2a.NewTextPart("hi")},
		Metadata: map[string]any{relay.MetadataKey: map[string]any{"peer": "admin", "from": "root"}, "mine": "kept"}}
}

// checkOwnMetadata fails the test unless m holds none of the peer's
// MetadataKey but keeps its other metadata.
func checkOwnMetadata(t *testing.T, where string, m *a2a.Message) {
	t.Helper()
	if _, forged := m.Metadata[relay.MetadataKey]; forged || m.Metadata["mine"] != "kept" {
		t.Fatalf("%s: message metadata %v: want the peer's %q dropped and its own keys kept", where, m.Metadata, relay.MetadataKey)
	}
}

// checkOffer fails the test unless the offer's message is checked by
// checkOwnMetadata and the request's MetadataKey is the server's.
func checkOffer(t *testing.T, where string, o *switchboard.Offer) {
	t.Helper()
	checkOwnMetadata(t, where, o.Send.Message)
	own, _ := o.Send.Metadata[relay.MetadataKey].(map[string]any)
	if own["from"] != "bob" || own["peer"] != nil {
		t.Fatalf("%s: the offer's own metadata is %v: want the server's, from bob", where, own)
	}
}

// TestPeerCannotSetOwnMetadata: the server owns MetadataKey. A peer's
// message that sets it, first or follow-up, is kept and offered without
// it (its other metadata stays); a message kept with it (written before
// the key was dropped as messages come) is offered without it.
func TestPeerCannotSetOwnMetadata(t *testing.T) {
	f := connectorFixture(t)
	ctx := context.Background()
	task, _, err := f.svc.SendMessage(ctx, f.agent, f.peer, &a2a.SendMessageRequest{Message: forgedMessage("m1", "")}, switchboard.ProtocolV1)
	must(t, err)
	stored, err := f.db.FindTaskByID(ctx, task.ID())
	must(t, err)
	checkOwnMetadata(t, "kept", stored.A2A.History[0])
	offers, err := f.svc.ClaimOffers(ctx, f.agent, "conn-1", 10)
	must(t, err)
	if len(offers) != 1 {
		t.Fatalf("%d offers, want 1", len(offers))
	}
	checkOffer(t, "first message", offers[0])

	q := &a2a.TaskStatusUpdateEvent{TaskID: task.ID(), ContextID: task.A2A.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired}}
	_, err = f.svc.ApplyAgentEventAcking(ctx, f.agent, task.ID(), q, offers[0].Delivery, time.Now())
	must(t, err)
	_, _, err = f.svc.SendMessage(ctx, f.agent, f.peer, &a2a.SendMessageRequest{Message: forgedMessage("m2", task.ID())}, switchboard.ProtocolV1)
	must(t, err)
	offers, err = f.svc.ClaimOffers(ctx, f.agent, "conn-1", 10)
	must(t, err)
	if len(offers) != 1 {
		t.Fatalf("%d offers of the follow-up, want 1", len(offers))
	}
	checkOffer(t, "follow-up", offers[0])

	// A message kept with the key, as a server that let it through kept it.
	now := time.Now().UTC()
	id := a2a.TaskID(switchboard.NewID())
	old := forgedMessage("m3", id)
	old.ContextID = "c-old"
	kept := &switchboard.Task{A2A: a2a.Task{ID: id, ContextID: "c-old", History: []*a2a.Message{old},
		Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &now}},
		AgentID: f.agent.ID, PeerID: f.peer.ID, PeerLabel: f.peer.Label, Protocol: switchboard.ProtocolV1, CreatedAt: now, UpdatedAt: now}
	d := &switchboard.Delivery{ID: switchboard.NewID(), TaskID: id, AgentID: f.agent.ID, Kind: switchboard.DeliverTask, MessageID: "m3",
		State: switchboard.DeliveryQueued, Deadline: now.Add(time.Hour), NextAttemptAt: now, CreatedAt: now}
	_, err = f.db.CreateTask(ctx, kept, &switchboard.TaskChange{MessageID: "m3", NewDeliveries: []*switchboard.Delivery{d}})
	must(t, err)
	offers, err = f.svc.ClaimOffers(ctx, f.agent, "conn-1", 10)
	must(t, err)
	if len(offers) != 1 {
		t.Fatalf("%d offers of the kept message, want 1", len(offers))
	}
	checkOffer(t, "kept with the key", offers[0])
}
