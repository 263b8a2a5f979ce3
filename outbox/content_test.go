package outbox_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/parttest"
	"github.com/switchboard-dev/switchboard/outbox"
)

// TestOutboundKeepsOnlyPartsWithContent checks that a remote agent's answer
// with parts that have no content is recorded without them, in a form that
// reads back: the answer is not ours to refuse, and the record must not be
// lost.
func TestOutboundKeepsOnlyPartsWithContent(t *testing.T) {
	for name, part := range parttest.Empty() {
		t.Run(name, func(t *testing.T) {
			parts := a2a.ContentParts{a2a.NewTextPart("kept"), part}
			msg := &a2a.Message{ID: "m", TaskID: "r1", Role: a2a.MessageRoleAgent, Parts: parts}
			var o switchboard.Outbound
			outbox.ApplyTask(&o, &a2a.Task{ID: "r1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Message: msg},
				History: []*a2a.Message{msg}, Artifacts: []*a2a.Artifact{{ID: "a", Parts: parts}}}, switchboard.OutboundFromSend, time.Now())
			outbox.ApplyEvent(&o, &a2a.TaskArtifactUpdateEvent{TaskID: "r1", Append: true, Artifact: &a2a.Artifact{ID: "a", Parts: parts}}, switchboard.OutboundFromPush, time.Now())
			outbox.ApplyEvent(&o, &a2a.TaskStatusUpdateEvent{TaskID: "r1", Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired, Message: msg}}, switchboard.OutboundFromPush, time.Now())
			var reply switchboard.Outbound
			outbox.ApplyEvent(&reply, &a2a.Message{ID: "x", Role: a2a.MessageRoleAgent, Parts: parts}, switchboard.OutboundFromSend, time.Now())

			roundTrip(t, o.Task)
			roundTrip(t, reply.Reply)
			if got := o.Task.Artifacts[0].Parts; len(got) != 2 || got[0].Text() != "kept" || got[1].Text() != "kept" {
				t.Fatalf("artifact parts %+v", got)
			}
			if n := len(o.Task.History); n != 2 || len(o.Task.History[1].Parts) != 1 || len(o.Task.Status.Message.Parts) != 1 {
				t.Fatalf("%d messages, status message %+v", n, o.Task.Status.Message)
			}
			if len(reply.Reply.Parts) != 1 || len(msg.Parts) != 2 {
				t.Fatalf("reply %+v; the caller's message was changed: %+v", reply.Reply, msg)
			}
		})
	}
}

// roundTrip fails t unless v's JSON reads back into a value of its type.
func roundTrip[T any](t *testing.T, v *T) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, new(T)); err != nil {
		t.Fatalf("%s does not read back: %v", b, err)
	}
}
