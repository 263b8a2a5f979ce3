package relay_test

import (
	"context"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/parttest"
)

// TestAgentPartsWithoutContentAreRefused checks that an agent's message or
// artifact with such a part is refused as the agent's fault, and the task
// stays readable: stored, the part could not be read back.
func TestAgentPartsWithoutContentAreRefused(t *testing.T) {
	f := connectorFixture(t)
	ctx := context.Background()
	task := f.send(t, "m1", "hello")
	for name, part := range parttest.Empty() {
		parts := a2a.ContentParts{a2a.NewTextPart("fine"), part}
		for kind, ev := range map[string]a2a.Event{
			"Message":  &a2a.Message{ID: "m", Role: a2a.MessageRoleAgent, Parts: parts},
			"Status":   &a2a.TaskStatusUpdateEvent{Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Message: &a2a.Message{ID: "s", Role: a2a.MessageRoleAgent, Parts: parts}}},
			"Artifact": &a2a.TaskArtifactUpdateEvent{Artifact: &a2a.Artifact{ID: "a", Parts: parts}},
			"Task":     &a2a.Task{Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}, Artifacts: []*a2a.Artifact{{ID: "b", Parts: parts}}},
		} {
			t.Run(name+kind, func(t *testing.T) {
				if _, err := f.svc.ApplyAgentEvent(ctx, f.agent, task.ID(), ev); switchboard.ErrorCode(err) != switchboard.EINVALIDAGENTRESPONSE {
					t.Fatalf("err %v, want EINVALIDAGENTRESPONSE", err)
				}
				got, err := f.svc.GetTask(ctx, f.peer, task.ID())
				if err != nil || got.State() != a2a.TaskStateSubmitted {
					t.Fatalf("task after the refusal: %v, %v", got, err)
				}
			})
		}
	}
}
