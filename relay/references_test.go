package relay_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/relay"
)

// TestReferencesMustBeTheCallersOwn: a message may refer only to tasks its
// own peer created on this agent. Another peer's task reads as not found,
// like a task that does not exist, and nothing is stored.
func TestReferencesMustBeTheCallersOwn(t *testing.T) {
	f := newFixture(t, membus.New())
	ctx := context.Background()
	bobs := f.send(t, "m-bob", "bob's work")
	eve := switchboard.Peer{AgentID: f.agent.ID, ID: "peer-eve", Label: "eve"}
	send := func(id string, refs ...a2a.TaskID) error {
		_, _, err := f.svc.SendMessage(ctx, f.agent, eve, &a2a.SendMessageRequest{Message: &a2a.Message{
			ID: id, Role: a2a.MessageRoleUser, ReferenceTasks: refs, Parts: a2a.ContentParts{a2a.NewTextPart("see that")}}},
			switchboard.ProtocolV1)
		return err
	}
	must(t, send("m-eve-1"))
	eves, _, err := f.db.FindTasks(ctx, switchboard.TaskFilter{PeerID: &eve.ID})
	must(t, err)
	if len(eves) != 1 {
		t.Fatalf("eve has %d tasks", len(eves))
	}
	many := make([]a2a.TaskID, relay.MaxReferenceTasks+1)
	for i := range many {
		many[i] = eves[0].ID()
	}
	for name, refs := range map[string][]a2a.TaskID{
		"another peer's": {bobs.ID()},
		"unknown":        {"no-such-task"},
		"one of several": {eves[0].ID(), bobs.ID()},
		"too many":       many,
	} {
		err := send(fmt.Sprint("m-", name), refs...)
		if switchboard.ErrorCode(err) != switchboard.EINVALID {
			t.Errorf("%s: %v, want EINVALID", name, err)
		}
	}
	if got, _, _ := f.db.FindTasks(ctx, switchboard.TaskFilter{PeerID: &eve.ID}); len(got) != 1 {
		t.Fatalf("refused messages stored tasks: eve has %d", len(got))
	}
	if err := send("m-own", eves[0].ID()); err != nil {
		t.Fatalf("a reference to the peer's own task: %v", err)
	}
}
