package hub_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/relay"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/hub"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"go.uber.org/goleak"
)

// The relay implements what the hub needs of the task protocol.
var _ hub.Service = (*relay.Service)(nil)

// The hub offers new tasks to the connections it holds as the relay
// creates them.
var _ switchboard.DirectOffers = (*hub.Hub)(nil)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestConnectAuthentication(t *testing.T) {
	s := newServer(t)
	g, _ := s.agent("alice")
	peer := s.peerToken(g, "bob")
	inbox := &switchboard.Agent{ID: switchboard.NewID(), AccountID: s.owner.ID, Handle: "inbox", Mode: switchboard.ModeInbox, AcceptsTasks: true}
	must(t, s.db.CreateAgent(context.Background(), inbox))
	for name, tc := range map[string]struct {
		token  string
		status int
	}{
		"NoToken":    {"", http.StatusUnauthorized},
		"Garbage":    {"sba_garbage", http.StatusUnauthorized},
		"PeerToken":  {peer, http.StatusUnauthorized},
		"InboxAgent": {s.agentToken(inbox), http.StatusConflict},
	} {
		t.Run(name, func(t *testing.T) {
			_, resp, err := s.dial(tc.token)
			if err == nil || resp == nil || resp.StatusCode != tc.status {
				code := 0
				if resp != nil {
					code = resp.StatusCode
				}
				t.Fatalf("dial: %v, status %d, want %d", err, code, tc.status)
			}
		})
	}
}

// TestRoundTrip follows one task from a peer's blocking SendMessage to the
// agent's socket and back.
func TestRoundTrip(t *testing.T) {
	s := newServer(t)
	g, tok := s.agent("alice")
	peer := s.peerToken(g, "bob")
	a := s.connect(tok)

	res := async(func() map[string]any { return s.send(g, peer, "what is 2+2?", false) })
	o := a.nextOffer()
	if o.text != "what is 2+2?" || o.from != "bob" || o.taskID == "" {
		t.Fatalf("offer %+v", o)
	}
	a.ackWorking(o)
	if up := a.update(status(o.taskID, "TASK_STATE_WORKING", "thinking")); up.Error != nil {
		t.Fatalf("update: %+v", up.Error)
	}
	up := a.update(map[string]any{"artifactUpdate": map[string]any{"taskId": o.taskID,
		"artifact": map[string]any{"artifactId": "answer", "parts": []any{map[string]any{"text": "4"}}}}})
	if up.Error != nil {
		t.Fatalf("artifact: %+v", up.Error)
	}
	done := a.update(status(o.taskID, "TASK_STATE_COMPLETED", ""))
	if !strings.Contains(string(done.Result), "TASK_STATE_COMPLETED") {
		t.Fatalf("final update answered %s", done.Result)
	}
	out := await(t, res)
	task := path(out, "result", "task")
	if path(task, "status", "state") != "TASK_STATE_COMPLETED" || path(task, "id") != o.taskID {
		t.Fatalf("peer got %v", out)
	}
	arts := path(task, "artifacts").([]any)
	if len(arts) != 1 || path(arts[0], "artifactId") != "answer" {
		t.Fatalf("artifacts %v", arts)
	}
	// A late update cannot reopen the task.
	late := a.update(status(o.taskID, "TASK_STATE_WORKING", "oops"))
	if !strings.Contains(string(late.Result), "TASK_STATE_COMPLETED") || s.task(o.taskID).State() != a2a.TaskStateCompleted {
		t.Fatalf("late update: %s", late.Result)
	}
	// The agent may read its task, not others'.
	if got := a.call(connproto.MethodGetTask, map[string]any{"id": o.taskID}); got.Error != nil || !strings.Contains(string(got.Result), "what is 2+2?") {
		t.Fatalf("GetTask: %+v %s", got.Error, got.Result)
	}
	other, _ := s.agent("other")
	otherTask := path(s.send(other, s.peerToken(other, "x"), "hi", true), "result", "task", "id").(string)
	if got := a.call(connproto.MethodGetTask, map[string]any{"id": otherTask}); got.Error == nil || got.Error.Code != -32001 {
		t.Fatalf("GetTask of another agent's task: %+v", got)
	}
	if got := a.update(status(otherTask, "TASK_STATE_COMPLETED", "")); got.Error == nil || got.Error.Code != -32001 {
		t.Fatalf("update of another agent's task: %+v", got)
	}
}

func TestDirectMessageAnswer(t *testing.T) {
	s := newServer(t)
	g, tok := s.agent("alice")
	peer := s.peerToken(g, "bob")
	a := s.connect(tok)
	res := async(func() map[string]any { return s.send(g, peer, "hi", false) })
	a.complete(a.nextOffer(), "hello bob")
	task := path(await(t, res), "result", "task")
	if path(task, "status", "state") != "TASK_STATE_COMPLETED" || path(task, "status", "message", "role") != "ROLE_AGENT" {
		t.Fatalf("task %v", task)
	}
	if art := path(task, "artifacts").([]any); path(art[0], "parts").([]any)[0].(map[string]any)["text"] != "hello bob" {
		t.Fatalf("artifact %v", art)
	}
}

func TestGarbageAnswerIsInvalidAgentResponse(t *testing.T) {
	s := newServer(t)
	g, tok := s.agent("alice")
	peer := s.peerToken(g, "bob")
	a := s.connect(tok)
	for name, result := range map[string]any{
		"NotAResponse": map[string]any{"nonsense": true},
		"BadState":     map[string]any{"task": map[string]any{"status": map[string]any{"state": "TASK_STATE_BOGUS"}}},
		"EmptyMessage": map[string]any{"message": map[string]any{"role": "ROLE_AGENT", "parts": []any{}}},
	} {
		t.Run(name, func(t *testing.T) {
			res := async(func() map[string]any { return s.send(g, peer, "x", false) })
			o := a.nextOffer()
			a.answer(o, result)
			out := await(t, res)
			if c, _ := path(out, "error", "code").(float64); c != -32006 {
				t.Fatalf("peer got %v, want -32006", out)
			}
			if s.task(o.taskID).State() != a2a.TaskStateFailed {
				t.Fatal("task not failed")
			}
		})
	}
	// An error answer is a refusal: the task fails with the agent's words.
	res := async(func() map[string]any { return s.send(g, peer, "x", false) })
	o := a.nextOffer()
	a.write(map[string]any{"jsonrpc": "2.0", "id": o.id, "error": map[string]any{"code": -32000, "message": "I am busy"}})
	out := await(t, res)
	if path(out, "result", "task", "status", "state") != "TASK_STATE_FAILED" || !strings.Contains(switchboard.MessageText(s.task(o.taskID).A2A.Status.Message), "I am busy") {
		t.Fatalf("refusal: %v", out)
	}
	// Frames that are not JSON-RPC are answered with an error, not fatal.
	must(t, a.ws.Write(context.Background(), 1, []byte("not json")))
	if f := a.next(); f.Error == nil || f.Error.Code != -32700 {
		t.Fatalf("garbage frame answered %+v", f)
	}
}

// TestOfflineAgentGetsQueuedWork checks that a task for an agent that is
// not connected waits, and is delivered the moment it connects: by the
// claim that follows its hello, since the poll for queued work is an hour
// away.
func TestOfflineAgentGetsQueuedWork(t *testing.T) {
	s := newServer(t, func(_ *relay.Service, h *hub.Config, _ *httpapi.Config) { h.Poll = time.Hour })
	g, tok := s.agent("alice")
	peer := s.peerToken(g, "bob")
	var ids []string
	for i := range 3 {
		out := s.send(g, peer, "queued "+string(rune('a'+i)), true)
		if path(out, "result", "task", "status", "state") != "TASK_STATE_SUBMITTED" {
			t.Fatalf("send to an offline agent: %v", out)
		}
		ids = append(ids, path(out, "result", "task", "id").(string))
	}
	a := s.connect(tok)
	for i := range 3 {
		o := a.nextOffer()
		if o.taskID != ids[i] {
			t.Fatalf("offer %d is task %s, want %s (oldest first)", i, o.taskID, ids[i])
		}
		a.complete(o, "done")
	}
	for _, id := range ids {
		s.waitState(id, a2a.TaskStateCompleted)
	}
}

// TestDeadlineFailsUndeliveredTask: a task no agent took fails at its
// delivery deadline, with a reason. It runs in a synctest bubble
// (newBubbleServer), the deadline on the bubble's clock.
func TestDeadlineFailsUndeliveredTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newBubbleServer(t, func(ts *relay.Service, _ *hub.Config, _ *httpapi.Config) {
			ts.DeliveryDeadline = 200 * time.Millisecond
		})
		g, _ := s.agent("alice")
		peer := s.peerToken(g, "bob")
		id := path(s.send(g, peer, "anyone?", true), "result", "task", "id").(string)
		task := s.waitState(id, a2a.TaskStateFailed)
		if reason := switchboard.MessageText(task.A2A.Status.Message); !strings.Contains(reason, "not delivered") {
			t.Fatalf("reason %q", reason)
		}
	})
}

// TestShutdownWhileAgentsConnect: connections that arrive while Shutdown
// runs are refused or closed too; Shutdown never waits out its timeout for
// one it did not see.
func TestShutdownWhileAgentsConnect(t *testing.T) {
	for round := range 10 {
		s := newServer(t)
		_, tok := s.agent("busy")
		stop := make(chan struct{})
		dialing := make(chan struct{})
		var accepted atomic.Int64
		go func() {
			defer close(dialing)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, _, err := s.dial(tok); err == nil {
					accepted.Add(1)
				}
			}
		}()
		// Shut down once connections are coming in.
		testwait.For(t, "a connection to be accepted", func() bool { return accepted.Load() > 0 })
		ctx, cancel := context.WithTimeout(context.Background(), patience) // only a hang outlasts it
		err := s.hub.Shutdown(ctx)
		cancel()
		close(stop)
		<-dialing
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
}
