package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/internal/otlptest"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/server"
)

// staleTraceparent is a TRACEPARENT the connector itself was started with:
// a command must never see it as its task's.
const staleTraceparent = "00-11111111111111111111111111111111-2222222222222222-01"

// TestConnectExecTraceparent: with tracing on, the command connect --exec
// runs finds its task's trace context in TRACEPARENT: the offer's span,
// in the trace of the peer's call. The connector's own TRACEPARENT is
// never passed on.
func TestConnectExecTraceparent(t *testing.T) {
	rcv := otlptest.Start(t)
	m := MustRunMain(t, t.TempDir(), "", func(cfg *server.Config) {
		cfg.OTLPEndpoint, cfg.TraceSample, cfg.TraceBatchTimeout = rcv.URL, 1, 20*time.Millisecond
	})
	id, agentToken, peerToken := connectAgent(t, m, "tracer")
	t.Setenv("SWITCHBOARD_AGENT_TOKEN", agentToken)
	t.Setenv("TRACEPARENT", staleTraceparent)
	startConnect(t, m, id, "--exec", `printf '%s' "$TRACEPARENT"; cat >/dev/null`)

	task := peerSend(t, m, "tracer", peerToken, "m1", "hello", "", true)
	got := task.answer()
	// The offer's span is below the peer's call (which ends, and is
	// exported, after the answer is written).
	testwait.ForErr(t, "the offer's span below the call", func() error {
		for _, s := range rcv.Spans() {
			if s.Name != "hub offer" || fmt.Sprintf("00-%s-%s-01", s.TraceID, s.SpanID) != got {
				continue
			}
			for _, p := range rcv.Trace(s.TraceID) {
				if p.Name == "a2a SendMessage" && p.SpanID == s.ParentID {
					return nil
				}
			}
			return fmt.Errorf("the offer's span %s is not below a call in trace %s", s.SpanID, s.TraceID)
		}
		return fmt.Errorf("no offer span %q among %d spans", got, len(rcv.Spans()))
	})
}

// TestConnectExecNoTraceparent: without tracing, the command has no
// TRACEPARENT, not even the connector's own.
func TestConnectExecNoTraceparent(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	id, agentToken, peerToken := connectAgent(t, m, "plain")
	t.Setenv("SWITCHBOARD_AGENT_TOKEN", agentToken)
	t.Setenv("TRACEPARENT", staleTraceparent)
	startConnect(t, m, id, "--exec", `printf '[%s]' "${TRACEPARENT-unset}"; cat >/dev/null`)
	task := peerSend(t, m, "plain", peerToken, "m1", "hello", "", true)
	if got, want := task.answer(), "[unset]"; got != want {
		t.Fatalf("the command saw TRACEPARENT %s, want %s", got, want)
	}
}

// TestCollectorDownIsNoError: spans that cannot be sent (no collector
// listens) fail no request and no shutdown. (The SDK reports failed
// exports to its error handler, not to Shutdown; server.Close logs any
// error Shutdown does return rather than fail the stop.)
func TestCollectorDownIsNoError(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "", func(cfg *server.Config) {
		cfg.OTLPEndpoint, cfg.TraceSample, cfg.ShutdownTimeout = "http://127.0.0.1:1", 1, time.Second
	})
	_, _, peerToken := connectAgent(t, m, "lonely")
	for i := range 3 {
		if task := peerSend(t, m, "lonely", peerToken, fmt.Sprint("m", i), "hello", "", false); task.Status.State != "TASK_STATE_SUBMITTED" {
			t.Fatalf("task %s is %s", task.ID, task.Status.State)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatalf("close with the collector down: %v", err)
	}
}

// TestAgentSendTrace: an agent's SendTask over its socket is a span
// "agent send", below the trace context the agent sent it with (the work
// it was handling), and the receiver's work is offered below that span;
// without a trace context the send starts a trace of its own.
func TestAgentSendTrace(t *testing.T) {
	rcv := otlptest.Start(t)
	m := MustRunMain(t, t.TempDir(), "", func(cfg *server.Config) {
		cfg.OTLPEndpoint, cfg.TraceSample, cfg.TraceBatchTimeout = rcv.URL, 1, 20*time.Millisecond
	})
	senderToken := networkAgent(t, m, "sender", "", "lab")
	workerToken := networkAgent(t, m, "worker", "code", "lab")
	offered := make(chan string, 4) // the traceparent each offer came with
	runConnector(t, m, "worker", workerToken, func(_ context.Context, w *connector.Work) {
		offered <- w.TraceParent
		_ = w.Reply("done")
	})
	sender, _ := runConnector(t, m, "sender", senderToken, func(_ context.Context, w *connector.Work) { _ = w.Reply("?") })

	const agentTrace, agentSpan = "5bf92f3577b34da6a3ce929d0e0e4736", "10f067aa0ba902b7"
	for name, traceparent := range map[string]string{"AgentsTrace": "00-" + agentTrace + "-" + agentSpan + "-01", "NewTrace": ""} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("traced"))
			if _, _, err := sender.SendTask(ctx, connector.TaskRequest{To: "worker", Request: &a2a.SendMessageRequest{Message: msg}, Wait: true,
				TraceParent: traceparent}); err != nil {
				t.Fatal(err)
			}
			got := <-offered
			testwait.ForErr(t, "the offer below the agent's send", func() error {
				for _, s := range rcv.Spans() {
					if s.Name != "hub offer" || fmt.Sprintf("00-%s-%s-01", s.TraceID, s.SpanID) != got {
						continue
					}
					for _, p := range rcv.Trace(s.TraceID) {
						if p.Name != "agent send" {
							continue
						}
						if traceparent != "" && (p.TraceID != agentTrace || p.ParentID != agentSpan) {
							return fmt.Errorf("the send's span is in trace %s below %s, want %s below %s", p.TraceID, p.ParentID, agentTrace, agentSpan)
						}
						if traceparent == "" && p.ParentID != "" {
							return fmt.Errorf("a send without a trace context has the parent %s", p.ParentID)
						}
						return nil
					}
					return fmt.Errorf("no agent send span in the offer's trace %s", s.TraceID)
				}
				return fmt.Errorf("no offer span %q among %d spans", got, len(rcv.Spans()))
			})
		})
	}
}
