package hub_test

import (
	"context"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/internal/testwait"
)

// TestCancelCrossesLastUpdate: a peer cancels a task as the agent finishes
// it, so the agent's last update (written before it read the cancel) is
// answered "canceled". The cancel's offer stays held all the same: the
// agent's answer to it acknowledges it, and it is not offered again.
func TestCancelCrossesLastUpdate(t *testing.T) {
	s := newServer(t)
	g, tok := s.agent("crossed")
	peer := s.peerToken(g, "bob")
	a := s.connect(tok)
	id := s.send(g, peer, "work", true)["result"].(map[string]any)["task"].(map[string]any)["id"].(string)
	o := a.nextOffer()
	a.answer(o, map[string]any{"task": map[string]any{"id": o.taskID, "contextId": o.contextID, "status": map[string]any{"state": "TASK_STATE_SUBMITTED"}}})
	s.rpc(g, peer, "CancelTask", map[string]any{"id": id})
	c := a.next()
	if c.Method != connproto.MethodCancelTask {
		t.Fatalf("got %s, want CancelTask", c.Method)
	}
	if r := a.update(status(id, "TASK_STATE_COMPLETED", "")); r.Error != nil {
		t.Fatalf("update: %+v", r.Error)
	}
	a.write(map[string]any{"jsonrpc": "2.0", "id": c.ID, "result": map[string]any{"task": map[string]any{"id": id, "status": map[string]any{"state": "TASK_STATE_CANCELED"}}}})
	tid := a2a.TaskID(id)
	testwait.For(t, "the agent's answer to acknowledge the cancel", func() bool {
		ds, err := s.db.FindDeliveries(context.Background(), switchboard.DeliveryFilter{TaskID: &tid})
		must(t, err)
		for _, d := range ds {
			if d.Kind == switchboard.DeliverCancel {
				return d.State == switchboard.DeliveryAcked
			}
		}
		return false
	})
}
