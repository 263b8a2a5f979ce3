package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/internal/otlptest"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/server"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// TestClusterTraceOfARoutedTask: a peer's blocking send on instance 0 to
// an agent connected to instance 1 makes one trace, exported by both
// instances over OTLP/HTTP: the call, its store write, the bus hint and
// the reply on instance 0; the offer on instance 1 (below the call: the
// trace context went with the delivery), the agent's answers below the
// offer, and their store writes. A peer's traceparent is continued; a
// malformed one starts a new trace and is no error.
func TestClusterTraceOfARoutedTask(t *testing.T) {
	rcv := otlptest.Start(t)
	c := newCluster(t, 2, func(cfg *server.Config) {
		cfg.OTLPEndpoint, cfg.TraceSample, cfg.TraceBatchTimeout = rcv.URL, 1, 20*time.Millisecond
	})
	_, agentToken, bob := c.agent("traced", nil)
	var mu sync.Mutex
	seen := map[string]string{} // task id → the traceparent the agent's work came with
	c.runAgent("traced", agentToken, []string{c.inst[1].URL()}, func(ctx context.Context, w *connector.Work) {
		mu.Lock()
		seen[string(w.TaskID)] = w.TraceParent
		mu.Unlock()
		echo(ctx, w)
	})

	const peerTrace, peerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	cases := map[string]struct {
		traceparent string
		parent      string // the call span's parent, "" for a new trace
	}{
		"NewTrace":         {},
		"PeersTraceparent": {traceparent: "00-" + peerTrace + "-" + peerSpan + "-01", parent: peerSpan},
		"MalformedIgnored": {traceparent: "00-not-a-trace-01"},
		"ZeroTraceIgnored": {traceparent: "00-00000000000000000000000000000000-" + peerSpan + "-01"},
		"UppercaseIgnored": {traceparent: "00-4BF92F3577B34DA6A3CE929D0E0E4736-" + peerSpan + "-01"},
		"RandomFlagKept":   {traceparent: "00-" + "0af7651916cd43dd8448eb211c80319c" + "-" + peerSpan + "-03", parent: peerSpan},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			taskID, status := tracedSend(t, c.inst[0], "traced", bob, "m-"+name, tc.traceparent)
			if status != http.StatusOK || taskID == "" {
				t.Fatalf("send with traceparent %q: status %d, task %q", tc.traceparent, status, taskID)
			}
			var tr traceView
			testwait.ForErr(t, "the trace of task "+taskID, func() error {
				var err error
				tr, err = findTrace(rcv, taskID)
				return err
			})
			call := tr.call
			if call.ParentID != tc.parent {
				t.Fatalf("call span's parent = %q, want %q", call.ParentID, tc.parent)
			}
			if tc.parent == peerSpan && tc.traceparent[3:35] != call.TraceID {
				t.Fatalf("trace %s, want the peer's %s", call.TraceID, tc.traceparent[3:35])
			}
			if tc.parent == "" && call.TraceID == peerTrace {
				t.Fatal("an ignored traceparent's trace id was used")
			}
			if call.Kind != tracepb.Span_SPAN_KIND_SERVER || call.Attrs["switchboard.agent_id"] == "" {
				t.Fatalf("call span %+v", call)
			}
			for _, s := range []otlptest.Span{tr.create, tr.notify, tr.reply, tr.offer} {
				if s.ParentID != call.SpanID {
					t.Fatalf("span %q has parent %s, want the call %s", s.Name, s.ParentID, call.SpanID)
				}
			}
			if tr.create.Instance != call.Instance || tr.reply.Instance != call.Instance || tr.notify.Kind != tracepb.Span_SPAN_KIND_PRODUCER {
				t.Fatalf("the call's own spans: create on %s, reply on %s, notify kind %v (call on %s)",
					tr.create.Instance, tr.reply.Instance, tr.notify.Kind, call.Instance)
			}
			if tr.offer.Instance == "" || tr.offer.Instance == call.Instance || tr.offer.Kind != tracepb.Span_SPAN_KIND_CONSUMER {
				t.Fatalf("offer span on instance %q (kind %v), want the socket's instance, not the call's %q", tr.offer.Instance, tr.offer.Kind, call.Instance)
			}
			mu.Lock()
			got := seen[taskID]
			mu.Unlock()
			// The offer's context, sampled (and random when the peer said so).
			if want := "00-" + call.TraceID + "-" + tr.offer.SpanID + "-0"; !strings.HasPrefix(got, want) || (got[54] != '1' && got[54] != '3') {
				t.Fatalf("the agent's work came with traceparent %q, want the offer's %q…, sampled", got, want)
			}
		})
	}
}

// traceView is the spans of one routed task's trace the test looks at.
type traceView struct {
	call, create, notify, reply, offer otlptest.Span
}

// findTrace finds the trace of the task in what rcv received, with every
// span a routed task makes; it reports what is missing.
func findTrace(rcv *otlptest.Receiver, taskID string) (traceView, error) {
	var v traceView
	traceID := ""
	for _, s := range rcv.Spans() {
		if s.Name == "store CreateTask" && s.Attrs["switchboard.task_id"] == taskID {
			traceID, v.create = s.TraceID, s
		}
	}
	if traceID == "" {
		return v, fmt.Errorf("no store CreateTask span of task %s", taskID)
	}
	spans := rcv.Trace(traceID)
	byName := map[string][]otlptest.Span{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
	}
	for name, dst := range map[string]*otlptest.Span{"a2a SendMessage": &v.call, "bus notify": &v.notify, "a2a reply": &v.reply, "hub offer": &v.offer} {
		if len(byName[name]) != 1 {
			return v, fmt.Errorf("trace %s: %d spans %q, want 1", traceID, len(byName[name]), name)
		}
		*dst = byName[name][0]
	}
	// The agent's answers (its acknowledgement of the offer, which may be
	// held back and written with the report that follows, and the report
	// that completes the task) are below the offer, on the socket's
	// instance; the report's store write is below it.
	written := false
	for _, a := range byName["agent answer"] {
		if a.ParentID != v.offer.SpanID || a.Instance != v.offer.Instance {
			return v, fmt.Errorf("answer span %s: parent %s on %s, want the offer %s on %s", a.SpanID, a.ParentID, a.Instance, v.offer.SpanID, v.offer.Instance)
		}
		for _, s := range spans {
			written = written || (s.ParentID == a.SpanID && s.Name == "store ModifyTask")
		}
	}
	if !written {
		return v, fmt.Errorf("trace %s: no agent answer with its store ModifyTask below it (%d answers)", traceID, len(byName["agent answer"]))
	}
	return v, nil
}

// tracedSend makes a blocking send as bob with the given traceparent
// header (none if empty) and returns the task's id and the status.
func tracedSend(t *testing.T, m *server.Server, handle, peerToken, messageID, traceparent string) (string, int) {
	t.Helper()
	msg := map[string]any{"messageId": messageID, "role": "ROLE_USER", "parts": []any{map[string]any{"text": "trace me"}}}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": map[string]any{"message": msg}})
	req, _ := http.NewRequest("POST", m.URL()+"/a/"+handle, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+peerToken)
	req.Header.Set("A2A-Version", "1.0")
	if traceparent != "" {
		req.Header.Set("traceparent", traceparent)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var a struct {
		Result struct {
			Task struct {
				ID     string `json:"id"`
				Status struct {
					State string `json:"state"`
				} `json:"status"`
			} `json:"task"`
		} `json:"result"`
		Error *struct{ Message string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil || a.Error != nil {
		t.Fatalf("send: %v %+v", err, a.Error)
	}
	if a.Result.Task.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("task %s is %s, want completed", a.Result.Task.ID, a.Result.Task.Status.State)
	}
	return a.Result.Task.ID, resp.StatusCode
}
