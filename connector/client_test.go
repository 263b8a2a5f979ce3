package connector_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/internal/testwait"
)

func TestReplyReachesBlockingPeer(t *testing.T) {
	s := newTestServer(t)
	g := s.agent("helper")
	works := make(chan *connector.Work, 1)
	runClient(t, newClient(s, g, func(ctx context.Context, w *connector.Work) {
		works <- w
		_ = w.Reply(strings.ToUpper(w.Text()))
	}))
	s.connected(g)

	task := s.send(g, "m1", "what is 2+2?", true, "")
	if got, want := task.Status.State, "TASK_STATE_COMPLETED"; got != want {
		t.Fatalf("state: got %s, want %s", got, want)
	}
	if got, want := task.answerText(), "WHAT IS 2+2?"; got != want {
		t.Fatalf("answer: got %q, want %q", got, want)
	}
	w := <-works
	if got, want := string(w.TaskID), task.ID; got != want {
		t.Errorf("TaskID: got %s, want %s", got, want)
	}
	if got, want := w.ContextID, task.ContextID; got != want {
		t.Errorf("ContextID: got %s, want %s", got, want)
	}
	if got, want := w.From, "bob"; got != want {
		t.Errorf("From: got %q, want %q", got, want)
	}
	if got, want := w.MessageID, "m1"; got != want {
		t.Errorf("MessageID: got %q, want %q", got, want)
	}
	if !w.NewTask || w.Attempt != 1 {
		t.Errorf("NewTask %v Attempt %d, want true 1", w.NewTask, w.Attempt)
	}
}

func TestStreamingUpdates(t *testing.T) {
	s := newTestServer(t)
	g := s.agent("streamer")
	runClient(t, newClient(s, g, func(ctx context.Context, w *connector.Work) {
		_ = w.Working("thinking")
		_ = w.Artifact(&a2a.Artifact{Name: "notes", Parts: a2a.ContentParts{a2a.NewTextPart("a note")}})
		_ = w.Reply("done")
	}))
	s.connected(g)

	events := s.stream(g, "m1", "go")
	var kinds []string
	for _, ev := range events {
		for k := range ev {
			kinds = append(kinds, k+":"+eventState(ev))
		}
	}
	joined := strings.Join(kinds, " ")
	for _, want := range []string{"statusUpdate:TASK_STATE_WORKING", "artifactUpdate:", "statusUpdate:TASK_STATE_COMPLETED"} {
		if !strings.Contains(joined, want) {
			t.Errorf("stream lacks %s: %s", want, joined)
		}
	}
	last := events[len(events)-1]["statusUpdate"].(map[string]any)
	taskID := last["taskId"].(string)
	task := s.getTask(g, taskID)
	if got, want := len(task.Artifacts), 2; got != want {
		t.Fatalf("artifacts: got %d, want %d", got, want)
	}
	if got, want := task.Artifacts[0].ArtifactID, "artifact-m1-1"; got != want {
		t.Errorf("default artifact id: got %s, want %s", got, want)
	}
	if got, want := task.Artifacts[1].ArtifactID, "answer-m1"; got != want {
		t.Errorf("answer artifact id: got %s, want %s", got, want)
	}
}

func TestCancelReachesHandler(t *testing.T) {
	s := newTestServer(t)
	g := s.agent("cancelme")
	started := make(chan struct{})
	cause := make(chan error, 1)
	runClient(t, newClient(s, g, func(ctx context.Context, w *connector.Work) {
		close(started)
		<-ctx.Done()
		cause <- context.Cause(ctx)
		if err := w.Working("too late"); err == nil {
			t.Error("a report after the cancel succeeded")
		}
	}))
	s.connected(g)

	task := s.send(g, "m1", "long job", false, "")
	waitClosed(t, started)
	if a := s.peerCall(g, "CancelTask", map[string]any{"id": task.ID}); a.Error != nil {
		t.Fatalf("CancelTask: %s", a.Error.Message)
	}
	select {
	case err := <-cause:
		if !errors.Is(err, connector.ErrTaskCanceled) {
			t.Fatalf("cause: got %v, want ErrTaskCanceled", err)
		}
	case <-time.After(testwait.Timeout):
		t.Fatal("the cancel did not reach the handler")
	}
	if got, want := s.getTask(g, task.ID).Status.State, "TASK_STATE_CANCELED"; got != want {
		t.Fatalf("state: got %s, want %s", got, want)
	}
}

func TestOfflineTaskDeliveredOnConnect(t *testing.T) {
	s := newTestServer(t)
	g := s.agent("sleeper")
	task := s.send(g, "m1", "wake up", false, "")
	if got, want := task.Status.State, "TASK_STATE_SUBMITTED"; got != want {
		t.Fatalf("state while offline: got %s, want %s", got, want)
	}
	runClient(t, newClient(s, g, func(ctx context.Context, w *connector.Work) {
		_ = w.Reply("awake: " + w.Text())
	}))
	done := s.waitState(g, task.ID, "TASK_STATE_COMPLETED")
	if got, want := done.answerText(), "awake: wake up"; got != want {
		t.Fatalf("answer: got %q, want %q", got, want)
	}
}

func TestInputRequiredThenFollowUp(t *testing.T) {
	s := newTestServer(t)
	g := s.agent("asker")
	var newTasks []bool
	var mu sync.Mutex
	runClient(t, newClient(s, g, func(ctx context.Context, w *connector.Work) {
		mu.Lock()
		newTasks = append(newTasks, w.NewTask)
		mu.Unlock()
		if w.NewTask {
			_ = w.InputRequired("which base?")
			return
		}
		_ = w.Reply("4 in base " + w.Text())
	}))
	s.connected(g)

	task := s.send(g, "m1", "2+2?", true, "")
	if got, want := task.Status.State, "TASK_STATE_INPUT_REQUIRED"; got != want {
		t.Fatalf("state: got %s, want %s", got, want)
	}
	if got, want := task.statusText(), "which base?"; got != want {
		t.Fatalf("question: got %q, want %q", got, want)
	}
	task = s.send(g, "m2", "10", true, task.ID)
	if got, want := task.answerText(), "4 in base 10"; got != want {
		t.Fatalf("answer: got %q, want %q", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if got, want := len(newTasks), 2; got != want || !newTasks[0] || newTasks[1] {
		t.Fatalf("NewTask of each work: got %v, want [true false]", newTasks)
	}
}

func TestHandlerWithoutAnswerFailsTask(t *testing.T) {
	s := newTestServer(t)
	g := s.agent("mute")
	runClient(t, newClient(s, g, func(ctx context.Context, w *connector.Work) {
		if w.Text() == "panic" {
			panic("boom")
		}
	}))
	s.connected(g)

	for text, reason := range map[string]string{
		"nothing": "the agent's handler ended without an answer",
		"panic":   "the agent's handler failed",
	} {
		task := s.send(g, "m-"+text, text, true, "")
		if got, want := task.Status.State, "TASK_STATE_FAILED"; got != want {
			t.Fatalf("%s: state: got %s, want %s", text, got, want)
		}
		if got, want := task.statusText(), reason; got != want {
			t.Fatalf("%s: reason: got %q, want %q", text, got, want)
		}
	}
}

func TestMaxConcurrent(t *testing.T) {
	s := newTestServer(t)
	g := s.agent("busy")
	var running, peak atomic.Int32
	release := make(chan struct{})
	c := newClient(s, g, func(ctx context.Context, w *connector.Work) {
		n := running.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		select {
		case <-release:
		case <-ctx.Done():
		}
		running.Add(-1)
		_ = w.Reply("ok")
	})
	c.MaxConcurrent = 2
	runClient(t, c)
	s.connected(g)

	var ids []string
	for _, m := range []string{"m1", "m2", "m3", "m4"} {
		ids = append(ids, s.send(g, m, "job", false, "").ID)
	}
	// Every task is acknowledged; only those a handler works on are
	// working, the others wait as submitted.
	testwait.For(t, "every offer acknowledged", func() bool { return s.deliveryStates(g)[switchboard.DeliveryAcked] == len(ids) })
	testwait.For(t, "two handlers running", func() bool { return running.Load() == 2 })
	states := map[a2a.TaskState]int{}
	for _, id := range ids {
		states[s.storedState(id)]++
	}
	if got, want := states, (map[a2a.TaskState]int{a2a.TaskStateWorking: 2, a2a.TaskStateSubmitted: 2}); !maps.Equal(got, want) {
		t.Fatalf("states: got %v, want %v", got, want)
	}
	close(release)
	for _, id := range ids {
		s.waitState(g, id, "TASK_STATE_COMPLETED")
	}
	if got, want := peak.Load(), int32(2); got != want {
		t.Fatalf("peak concurrency: got %d, want %d", got, want)
	}
}

func TestGetTaskAndSend(t *testing.T) {
	s := newTestServer(t)
	g := s.agent("caller")
	other := s.agent("other")
	type outcome struct {
		history int
		sent    *a2a.Task
		err     error
	}
	out := make(chan outcome, 1)
	var c *connector.Client
	c = newClient(s, g, func(ctx context.Context, w *connector.Work) {
		var o outcome
		task, err := c.GetTask(ctx, w.TaskID)
		if err != nil {
			o.err = err
		} else {
			o.history = len(task.History)
			req := &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello other"))}
			o.sent, o.err = c.Send(ctx, "other", other.PeerToken, req)
		}
		out <- o
		_ = w.Reply("done")
	})
	runClient(t, c)
	s.connected(g)

	s.send(g, "m1", "call other", true, "")
	o := <-out
	if o.err != nil {
		t.Fatal(o.err)
	}
	if got, want := o.history, 1; got != want {
		t.Errorf("history of the own task: got %d, want %d", got, want)
	}
	if o.sent == nil || o.sent.ID == "" {
		t.Fatal("Send returned no task")
	}
	if got, want := s.getTask(other, string(o.sent.ID)).Status.State, "TASK_STATE_SUBMITTED"; got != want {
		t.Errorf("the task at the other agent: got %s, want %s", got, want)
	}
}

// waitClosed waits for ch to close, failing the test after testwait.Timeout.
func waitClosed(t testing.TB, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(testwait.Timeout):
		t.Fatal("timed out")
	}
}

func TestOnConnectCalledForEachConnection(t *testing.T) {
	s := newTestServer(t)
	g := s.agent("hooked")
	addrs := make(chan string, 4)
	c := newClient(s, g, func(ctx context.Context, w *connector.Work) { _ = w.Reply("ok") })
	c.OnConnect = func(address string) { addrs <- address }
	runClient(t, c)
	first := <-addrs
	if !strings.HasSuffix(first, "/a/hooked") {
		t.Fatalf("OnConnect address: got %q, want the agent's address", first)
	}
	s.restart()
	select {
	case again := <-addrs:
		if again != first {
			t.Errorf("after reconnect: got %q, want %q", again, first)
		}
	case <-time.After(testwait.Timeout):
		t.Fatal("OnConnect was not called again after the server restarted")
	}
}
