package hub_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/coder/websocket"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/hub"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/metrics"
	"github.com/switchboard-dev/switchboard/relay"
)

// statesLogged returns the states of the status events in a task's log.
func (s *server) statesLogged(taskID string) []a2a.TaskState {
	s.t.Helper()
	evs, err := s.db.FindTaskEvents(context.Background(), a2a.TaskID(taskID), 0, 100)
	must(s.t, err)
	var states []a2a.TaskState
	for _, e := range evs {
		if st, ok := e.Event.(*a2a.TaskStatusUpdateEvent); ok {
			states = append(states, st.Status.State)
		}
	}
	return states
}

// workingAnswered starts a deployment with one connected agent, sends it a
// task, and answers the offer "working": the answer is then held. It runs
// in the caller's synctest bubble (newBubbleServer), where the hold's
// 20 ms pass only while everything waits: what the test does next comes
// within them, however loaded the machine.
func workingAnswered(t *testing.T) (*server, *switchboard.Agent, string, *testAgent, offered) {
	s := newBubbleServer(t)
	g, tok := s.agent("alice")
	peer := s.peerToken(g, "bob")
	a := s.connect(tok)
	id := path(s.send(g, peer, "one", true), "result", "task", "id").(string)
	o := a.nextOffer()
	a.ackWorking(o)
	return s, g, id, a, o
}

// requireAcked fails unless the task's delivery is acknowledged.
func (s *server) requireAcked(taskID string) {
	s.t.Helper()
	if d := s.delivery(taskID); d.State != switchboard.DeliveryAcked {
		s.t.Fatalf("delivery %s, want acknowledged", d.State)
	}
}

// TestWorkingAnswerJoinsTheTurnsEnd checks held answers (held.go): an
// answer that says only "working", followed at once by the end of the
// turn, is written with it, in one change: the log has no working status,
// and the offer is acknowledged. It runs in a synctest bubble
// (newBubbleServer): the update comes within the hold's 20 ms of the
// bubble's time, which a loaded machine does not shorten.
func TestWorkingAnswerJoinsTheTurnsEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newBubbleServer(t)
		g, tok := s.agent("alice")
		peer := s.peerToken(g, "bob")
		a := s.connect(tok)
		res := async(func() map[string]any { return s.send(g, peer, "hi", false) })
		o := a.nextOffer()
		a.ackWorking(o)
		if r := a.update(status(o.taskID, "TASK_STATE_COMPLETED", "hello bob")); r.Error != nil {
			t.Fatalf("update: %+v", r.Error)
		}
		if got := path(await(t, res), "result", "task", "status", "state"); got != "TASK_STATE_COMPLETED" {
			t.Fatalf("peer got state %v", got)
		}
		if got := s.statesLogged(o.taskID); len(got) != 1 || got[0] != a2a.TaskStateCompleted {
			t.Fatalf("status events %v, want only completed", got)
		}
		s.requireAcked(o.taskID)
	})
}

// TestHeldWorkingAnswerWrittenAlone checks that a working answer that no
// update follows is written when its time is up, and that one held when
// the connection closes is written before the connection's offers are
// released: the task is not offered again.
func TestHeldWorkingAnswerWrittenAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, g, first, a, _ := workingAnswered(t)
		peer := s.peerToken(g, "carol")
		s.waitState(first, a2a.TaskStateWorking)
		s.requireAcked(first)

		second := path(s.send(g, peer, "two", true), "result", "task", "id").(string)
		o2 := a.nextOffer()
		a.ackWorking(o2)
		must(t, a.ws.Close(websocket.StatusNormalClosure, "bye")) // at once: the answer is still held
		// The connection writes what it holds, then releases what it was
		// offered and did not answer: the delivery leaves "offered" once,
		// acknowledged.
		var d *switchboard.Delivery
		testwait.For(t, "the delivery to leave offered after the connection closed", func() bool {
			d = s.delivery(second)
			return d.State != switchboard.DeliveryOffered
		})
		if d.State != switchboard.DeliveryAcked {
			t.Fatalf("delivery %s after the connection closed, want acknowledged", d.State)
		}
		if st := s.task(second).State(); st != a2a.TaskStateWorking {
			t.Fatalf("task %s, want working", st)
		}
		b := s.connect(s.agentToken(g), first, second)
		b.quiet(200 * time.Millisecond)
	})
}

// TestHeldAnswerKeptWhenTheUpdateFails checks that an update refused while
// a working answer is held leaves the answer written as it came.
func TestHeldAnswerKeptWhenTheUpdateFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _, id, a, o := workingAnswered(t)
		r := a.update(map[string]any{"artifactUpdate": map[string]any{"taskId": o.taskID, "artifact": map[string]any{"artifactId": "a", "parts": []any{}}}})
		if r.Error == nil {
			t.Fatal("an artifact without parts was taken")
		}
		if st := s.task(id).State(); st != a2a.TaskStateWorking {
			t.Fatalf("task %s right after the refused update, want working", st)
		}
		s.requireAcked(id)
	})
}

// TestArtifactAfterHeldAnswerKeepsWorking checks that an update that sets
// no state (an artifact) does not take the place of a held working answer:
// the answer is written first, and the task shows working.
func TestArtifactAfterHeldAnswerKeepsWorking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _, id, a, o := workingAnswered(t)
		r := a.update(map[string]any{"artifactUpdate": map[string]any{"taskId": o.taskID,
			"artifact": map[string]any{"artifactId": "a", "parts": []any{map[string]any{"text": "partial"}}}}})
		if r.Error != nil {
			t.Fatalf("update: %+v", r.Error)
		}
		if st := s.task(id).State(); st != a2a.TaskStateWorking {
			t.Fatalf("task %s after an artifact, want working", st)
		}
		if got := s.statesLogged(id); len(got) != 1 || got[0] != a2a.TaskStateWorking {
			t.Fatalf("status events %v, want working", got)
		}
	})
}

// TestReplacingHelloFindsTheHeldAnswerWritten checks that a newer
// connection of an agent, whose hello requeues the offers of the one it
// replaces, first has that one write the answers it holds: a task the
// agent answered "working" and says it still holds is not offered again.
// The old connection's peer has gone silent (it reads nothing more, so the
// server's close waits for a handshake that does not come), and the answer
// is held for a minute: only the hello can have written it. The heartbeat
// is an hour, so that it cannot drop the silent connection (whose close
// would write the answer) however long a loaded machine takes.
func TestReplacingHelloFindsTheHeldAnswerWritten(t *testing.T) {
	s := newServer(t, func(_ *relay.Service, h *hub.Config, _ *httpapi.Config) {
		h.HoldWorking, h.HeartbeatInterval = time.Minute, time.Hour
	})
	g, tok := s.agent("alice")
	peer := s.peerToken(g, "bob")
	var silent *silentConn
	a, _, err := s.dialWith(s.srv.URL, tok, func(c net.Conn) net.Conn {
		silent = &silentConn{Conn: c, release: make(chan struct{})}
		return silent
	})
	must(t, err)
	t.Cleanup(func() { close(silent.release) })
	if res := a.call("hello", map[string]any{"holding": []string{}}); res.Error != nil {
		t.Fatalf("hello: %+v", res.Error)
	}
	id := path(s.send(g, peer, "one", true), "result", "task", "id").(string)
	o := a.nextOffer()
	reg := metrics.NewRegistry()
	reg.MustRegister(s.hub.Metrics()...)
	s.wantSamples(reg, map[string]float64{"switchboard_hub_pending_offers": 1})
	silent.silent.Store(true)
	a.ackWorking(o)
	// The answer reaches the old connection, which holds it: the offer no
	// longer waits for an answer, and the delivery stays offered.
	s.wantSamples(reg, map[string]float64{"switchboard_hub_pending_offers": 0})
	if d := s.delivery(id); d.State != switchboard.DeliveryOffered {
		t.Fatalf("delivery %s before the new connection, want offered (the answer held)", d.State)
	}
	b := s.connect(tok, id)
	s.requireAcked(id)
	b.quiet(300 * time.Millisecond)
	if st := s.task(id).State(); st != a2a.TaskStateWorking {
		t.Fatalf("task %s, want working", st)
	}
}

// silentConn is a client's socket that, once silent, hands nothing more it
// receives to the WebSocket above it (a peer gone quiet), until release.
type silentConn struct {
	net.Conn
	silent  atomic.Bool
	release chan struct{}
}

func (c *silentConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.silent.Load() {
		<-c.release
		return 0, net.ErrClosed
	}
	return n, err
}
