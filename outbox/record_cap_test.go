package outbox_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/outbox"
)

func taskJSONSize(t *testing.T, task *a2a.Task) int {
	t.Helper()
	b, err := json.Marshal(task)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

// TestOutboundRemoteTaskIsBounded: a remote agent that pushes without end
// (status messages, artifact chunks, new artifacts, a huge task) cannot
// grow the kept task past its bounds; what is kept is the newest.
func TestOutboundRemoteTaskIsBounded(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	newRecord := func() *switchboard.Outbound {
		o := &switchboard.Outbound{}
		outbox.ApplyTask(o, &a2a.Task{ID: "r1", ContextID: "c1", Status: status(a2a.TaskStateWorking, t0, "")}, switchboard.OutboundFromSend, t0)
		return o
	}
	at := func(i int) time.Time { return t0.Add(time.Duration(i+1) * time.Second) }

	// Status messages: the last MaxOutboundHistory are kept.
	o := newRecord()
	for i := range 3 * outbox.MaxOutboundHistory {
		outbox.ApplyEvent(o, &a2a.TaskStatusUpdateEvent{TaskID: "r1", ContextID: "c1", Status: status(a2a.TaskStateWorking, at(i), fmt.Sprint("step ", i))},
			switchboard.OutboundFromPush, at(i))
	}
	h := o.Task.History
	if len(h) != outbox.MaxOutboundHistory || switchboard.MessageText(h[len(h)-1]) != fmt.Sprint("step ", 3*outbox.MaxOutboundHistory-1) {
		t.Fatalf("history kept: %d messages", len(h))
	}

	// Artifact chunks appended to one artifact: its last parts are kept.
	o = newRecord()
	for i := range 3 * outbox.MaxOutboundArtifactParts {
		outbox.ApplyEvent(o, &a2a.TaskArtifactUpdateEvent{TaskID: "r1", ContextID: "c1", Append: i > 0,
			Artifact: &a2a.Artifact{ID: "a1", Parts: a2a.ContentParts{a2a.NewTextPart(fmt.Sprint("chunk ", i))}}}, switchboard.OutboundFromPush, at(i))
	}
	if len(o.Task.Artifacts) != 1 {
		t.Fatalf("%d artifacts", len(o.Task.Artifacts))
	}
	parts := o.Task.Artifacts[0].Parts
	if len(parts) != outbox.MaxOutboundArtifactParts || parts[len(parts)-1].Text() != fmt.Sprint("chunk ", 3*outbox.MaxOutboundArtifactParts-1) {
		t.Fatalf("parts kept: %d", len(parts))
	}

	// New artifacts: the last MaxOutboundArtifacts are kept.
	o = newRecord()
	for i := range 2 * outbox.MaxOutboundArtifacts {
		outbox.ApplyEvent(o, &a2a.TaskArtifactUpdateEvent{TaskID: "r1", ContextID: "c1",
			Artifact: &a2a.Artifact{ID: a2a.ArtifactID(fmt.Sprint("a", i)), Parts: a2a.ContentParts{a2a.NewTextPart("x")}}}, switchboard.OutboundFromPush, at(i))
	}
	arts := o.Task.Artifacts
	if len(arts) != outbox.MaxOutboundArtifacts || arts[len(arts)-1].ID != a2a.ArtifactID(fmt.Sprint("a", 2*outbox.MaxOutboundArtifacts-1)) {
		t.Fatalf("artifacts kept: %d", len(arts))
	}

	// Large messages: the total stays under MaxOutboundTaskBytes, the
	// newest message is kept.
	o = newRecord()
	big := strings.Repeat("y", 10<<10)
	for i := range outbox.MaxOutboundHistory {
		outbox.ApplyEvent(o, &a2a.TaskStatusUpdateEvent{TaskID: "r1", ContextID: "c1", Status: status(a2a.TaskStateWorking, at(i), fmt.Sprint(i, big))},
			switchboard.OutboundFromPush, at(i))
		outbox.ApplyEvent(o, &a2a.TaskArtifactUpdateEvent{TaskID: "r1", ContextID: "c1", Append: i > 0,
			Artifact: &a2a.Artifact{ID: "a1", Parts: a2a.ContentParts{a2a.NewTextPart(big)}}}, switchboard.OutboundFromPush, at(i))
	}
	if n := taskJSONSize(t, o.Task); n > outbox.MaxOutboundTaskBytes {
		t.Fatalf("kept task is %d bytes", n)
	}
	if h := o.Task.History; len(h) == 0 || !strings.HasPrefix(switchboard.MessageText(h[len(h)-1]), fmt.Sprint(outbox.MaxOutboundHistory-1)) {
		t.Fatalf("the newest message is not kept: %d messages", len(h))
	}

	// A whole task pushed with a huge history and metadata is bounded too,
	// and the caller's task is not changed.
	pushed := &a2a.Task{ID: "r1", ContextID: "c1", Status: status(a2a.TaskStateCompleted, at(100), strings.Repeat("z", 100<<10)),
		Metadata: map[string]any{"blob": strings.Repeat("m", 100<<10)}}
	for i := range 500 {
		pushed.History = append(pushed.History, a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(fmt.Sprint("h", i))))
	}
	o = newRecord()
	outbox.ApplyEvent(o, pushed, switchboard.OutboundFromPush, at(100))
	if n := taskJSONSize(t, o.Task); n > outbox.MaxOutboundTaskBytes || o.State != a2a.TaskStateCompleted || len(pushed.History) != 500 ||
		pushed.Metadata == nil || pushed.Status.Message == nil {
		t.Fatalf("pushed task kept as %d bytes, state %s; caller's history %d", n, o.State, len(pushed.History))
	}
	if len(o.Updates) == 0 || !strings.HasPrefix(outbox.LastText(o), "zzz") {
		t.Fatal("the update lost the status text")
	}
}
