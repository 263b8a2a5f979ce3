package hub_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/hub"
	"github.com/switchboard-dev/switchboard/relay"
)

// TestUnacknowledgedOfferIsOfferedAgainThenFails follows one task through
// the sweeper on a live connection that never acknowledges: its offer is
// offered again each time its lease ends (the sweeper puts it back in the
// queue: without that it would stay offered for ever), and once the task's
// delivery deadline passes it fails, with a reason the peer can read. The
// connection stays open throughout: nothing but the lease and the deadline
// moves the task. It runs in a synctest bubble (newBubbleServer): a loaded
// machine cannot let the deadline pass before the third offer.
func TestUnacknowledgedOfferIsOfferedAgainThenFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const lease, deadline = 300 * time.Millisecond, 2 * time.Second
		s := newBubbleServer(t, func(ts *relay.Service, h *hub.Config, _ *httpapi.Config) {
			ts.AckTimeout, h.AckTimeout = lease, lease
			ts.DeliveryDeadline = deadline
		})
		g, tok := s.agent("silent")
		peer := s.peerToken(g, "bob")
		a := s.connect(tok)
		res := s.send(g, peer, "anyone there?", true)
		id, _ := path(res, "result", "task", "id").(string)
		if id == "" {
			t.Fatalf("send: %v", res)
		}

		// The same work comes again and again, each time after a lease; the
		// agent never answers.
		first := a.nextOffer()
		start := time.Now()
		var offers int
		for offers = 1; offers < 3; offers++ {
			o := a.nextOffer()
			if o.taskID != id || o.messageID != first.messageID {
				t.Fatalf("offer %d is of %s/%s, want %s/%s", offers+1, o.taskID, o.messageID, id, first.messageID)
			}
		}
		if waited := time.Since(start); waited < lease {
			t.Fatalf("offered again after %s, before its lease of %s ended", waited, lease)
		}
		d, err := s.db.FindDeliveries(context.Background(), switchboard.DeliveryFilter{TaskID: (*a2a.TaskID)(&id)})
		must(t, err)
		if len(d) != 1 || d[0].Attempts < 3 {
			t.Fatalf("deliveries %+v, want one offered at least 3 times", d)
		}

		// Past its deadline the task fails, though the agent is connected.
		failed := s.waitState(id, a2a.TaskStateFailed)
		if msg := failed.A2A.Status.Message; msg == nil || !strings.Contains(switchboard.MessageText(msg), "did not take the task") {
			t.Fatalf("failure reason %+v", msg)
		}
		got := s.rpc(g, peer, "GetTask", map[string]any{"id": id})
		if state := path(got, "result", "status", "state"); state != "TASK_STATE_FAILED" {
			t.Fatalf("the peer sees %v", got)
		}
	})
}
