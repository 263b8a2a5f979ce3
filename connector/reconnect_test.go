package connector_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/coder/websocket"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/internal/testwait"
)

// echo replies with the message's text.
func echo(ctx context.Context, w *connector.Work) { _ = w.Reply(w.Text()) }

func TestReconnectAfterServerRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newBubbleServer(t)
		g := s.agent("phoenix")
		runClient(t, newClient(s, g, echo))
		s.connected(g)
		if got, want := s.send(g, "m1", "before", true, "").answerText(), "before"; got != want {
			t.Fatalf("before the restart: got %q, want %q", got, want)
		}

		s.restart() // close code 1012, then the listener closes and opens again
		start := time.Now()
		s.connected(g)
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("reconnecting took %s", took)
		}
		if got, want := s.send(g, "m2", "after", true, "").answerText(), "after"; got != want {
			t.Fatalf("after the restart: got %q, want %q", got, want)
		}
	})
}

func TestQueuedWorkSurvivesRestart(t *testing.T) {
	s := newTestServer(t)
	g := s.agent("patient")
	task := s.send(g, "m1", "queued", false, "")
	s.restart()
	runClient(t, newClient(s, g, echo))
	if got, want := s.waitState(g, task.ID, "TASK_STATE_COMPLETED").answerText(), "queued"; got != want {
		t.Fatalf("answer: got %q, want %q", got, want)
	}
}

func TestReconnectAfterDeadSocket(t *testing.T) {
	s := newTestServer(t)
	g := s.agent("zombie")
	p := newProxy(t, s.addr)
	c := newClient(s, g, echo)
	c.URLs = []string{p.URL()}
	c.Heartbeat = 100 * time.Millisecond
	runClient(t, c)
	s.connected(g)
	if got, want := s.send(g, "m0", "hello", true, "").answerText(), "hello"; got != want {
		t.Fatalf("before the dead socket: got %q, want %q", got, want)
	}

	p.freeze() // no close frame, no FIN: only the heartbeat can tell
	testwait.For(t, "a second connection through the proxy", func() bool { return p.accepted.Load() >= 2 })
	if got, want := s.send(g, "m1", "still there?", true, "").answerText(), "still there?"; got != want {
		t.Fatalf("after the dead socket: got %q, want %q", got, want)
	}
}

func TestRedeliveryRunsHandlerOnce(t *testing.T) {
	s := newTestServer(t)
	g := s.agent("once")
	var calls atomic.Int32
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	releaseOnce := sync.OnceFunc(func() { close(release) })
	runClient(t, newClient(s, g, func(ctx context.Context, w *connector.Work) {
		calls.Add(1)
		started <- struct{}{}
		<-release
		_ = w.Reply("done once")
	}))
	defer releaseOnce()
	s.connected(g)
	task := s.send(g, "m1", "do it once", false, "")
	<-started
	s.waitState(g, task.ID, "TASK_STATE_WORKING") // the first offer is acknowledged

	// The server offers the acknowledged message again, as it does for
	// work an agent no longer holds (at-least-once delivery).
	ctx := context.Background()
	if n, err := s.db.RequeueUnheld(ctx, g.ID, nil, time.Now().Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("requeue: %d, %v", n, err)
	}
	must(t, s.bus.Notify(ctx, switchboard.AgentSubject(g.ID)))
	id := a2a.TaskID(task.ID)
	testwait.For(t, "the second offer acknowledged", func() bool {
		ds, err := s.db.FindDeliveries(ctx, switchboard.DeliveryFilter{TaskID: &id})
		must(t, err)
		return len(ds) == 1 && ds[0].Attempts == 2 && ds[0].State == switchboard.DeliveryAcked
	})
	if got, want := s.getTask(g, task.ID).Status.State, "TASK_STATE_WORKING"; got != want {
		t.Fatalf("state after the second offer: got %s, want %s", got, want)
	}

	releaseOnce()
	if got, want := s.waitState(g, task.ID, "TASK_STATE_COMPLETED").answerText(), "done once"; got != want {
		t.Fatalf("answer: got %q, want %q", got, want)
	}
	if got, want := calls.Load(), int32(1); got != want {
		t.Fatalf("handler calls: got %d, want %d", got, want)
	}
}

func TestUnacknowledgedOfferIsDeliveredAgain(t *testing.T) {
	s := newTestServer(t)
	g := s.agent("flaky")
	task := s.send(g, "m1", "catch me", false, "")

	// A connector that takes the offer and dies before answering it.
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://"+s.addr+"/connect", &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + g.Token}}, Subprotocols: []string{connector.Subprotocol},
	})
	must(t, err)
	must(t, ws.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":"h","method":"hello","params":{"holding":[]}}`)))
	for {
		_, data, err := ws.Read(ctx)
		must(t, err)
		var f struct {
			Method string `json:"method"`
		}
		must(t, json.Unmarshal(data, &f))
		if f.Method == "SendMessage" {
			break
		}
	}
	_ = ws.CloseNow()

	attempts := make(chan int, 1)
	runClient(t, newClient(s, g, func(ctx context.Context, w *connector.Work) {
		attempts <- w.Attempt
		echo(ctx, w)
	}))
	if got, want := s.waitState(g, task.ID, "TASK_STATE_COMPLETED").answerText(), "catch me"; got != want {
		t.Fatalf("answer: got %q, want %q", got, want)
	}
	if got, want := <-attempts, 2; got != want {
		t.Fatalf("attempt: got %d, want %d", got, want)
	}
}

func TestReplacedConnectionPauses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newBubbleServer(t)
		g := s.agent("twin")
		var logs logBuffer
		var firstCalls atomic.Int32
		first := newClient(s, g, func(ctx context.Context, w *connector.Work) { firstCalls.Add(1); echo(ctx, w) })
		first.Logger = slogTo(&logs)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- first.Run(ctx) }()
		returned := false
		defer func() {
			if cancel(); !returned {
				<-done
			}
		}()
		s.connected(g)
		testwait.For(t, "the first client connected", func() bool { return strings.Contains(logs.String(), "msg=connected") })

		runClient(t, newClient(s, g, echo))
		testwait.For(t, "the replacement warning", func() bool { return strings.Contains(logs.String(), "replaced") })
		if got, want := s.send(g, "m1", "who answers?", true, "").answerText(), "who answers?"; got != want {
			t.Fatalf("answer: got %q, want %q", got, want)
		}
		if got := firstCalls.Load(); got != 0 {
			t.Fatalf("the replaced client handled %d tasks", got)
		}
		// Run returns at once when its context ends during the pause.
		cancel()
		select {
		case err := <-done:
			returned = true
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("Run did not return during the pause")
		}
	})
}

func TestReportSentAgainAfterDeadSocket(t *testing.T) {
	s := newTestServer(t)
	g := s.agent("resender")
	p := newProxy(t, s.addr)
	var calls atomic.Int32
	started := make(chan struct{}, 1)
	answer := make(chan struct{})
	answerOnce := sync.OnceFunc(func() { close(answer) })
	defer answerOnce()
	replied := make(chan error, 1)
	c := newClient(s, g, func(ctx context.Context, w *connector.Work) {
		calls.Add(1)
		started <- struct{}{}
		select {
		case <-answer:
		case <-ctx.Done():
			return
		}
		replied <- w.Reply("made it") // written into the frozen link, answered on the next one
	})
	c.URLs = []string{p.URL()}
	c.Heartbeat = 200 * time.Millisecond
	runClient(t, c)
	s.connected(g)
	task := s.send(g, "m1", "report through a dead link", false, "")
	<-started
	s.waitState(g, task.ID, "TASK_STATE_WORKING")

	p.freeze()
	answerOnce()
	select {
	case err := <-replied:
		if err != nil {
			t.Fatalf("Reply: %v", err)
		}
	case <-time.After(testwait.Timeout):
		t.Fatal("the reply was never answered")
	}
	if got, want := p.accepted.Load(), int32(2); got < want {
		t.Fatalf("connections through the proxy: got %d, want at least %d", got, want)
	}
	if got, want := s.waitState(g, task.ID, "TASK_STATE_COMPLETED").answerText(), "made it"; got != want {
		t.Fatalf("answer: got %q, want %q", got, want)
	}
	if got, want := calls.Load(), int32(1); got != want {
		t.Fatalf("handler calls: got %d, want %d (the task was held across the reconnection)", got, want)
	}
}
