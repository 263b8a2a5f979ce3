package sqlstore

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// TestEncodeEventMatchesStreamResponse checks that encodeEvent writes what
// a2a.StreamResponse writes, byte for byte, for every kind of event.
func TestEncodeEventMatchesStreamResponse(t *testing.T) {
	msg := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("an <answer> & more \u2028"), a2a.NewDataPart(map[string]any{"k": []any{1.5, "v"}}))
	msg.Metadata = map[string]any{"m": true}
	task := &a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Message: msg},
		History: []*a2a.Message{msg}, Artifacts: []*a2a.Artifact{{ID: "a1", Parts: a2a.ContentParts{a2a.NewTextPart("x")}}}}
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, e := range []a2a.Event{
		msg,
		task,
		&a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Message: msg, Timestamp: &now}},
		&a2a.TaskArtifactUpdateEvent{TaskID: "t1", ContextID: "c1", Artifact: task.Artifacts[0], Append: true, LastChunk: true},
		(*a2a.Task)(nil),
	} {
		want, wantErr := json.Marshal(a2a.StreamResponse{Event: e})
		got, err := encodeEvent(e)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Errorf("%T:\n got %s (%v)\nwant %s (%v)", e, got, err, want, wantErr)
		}
	}
}
