package relay_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
)

// TestAgentIDsWithControlCharactersRefused: an agent's answer whose own ids
// (its message's id and referenceTaskIds, an artifact's id) hold a control
// character or are not UTF-8 is an invalid agent response (-32006 at the
// edge), and the task is left as it was: peers get every id of a task as
// it is stored.
func TestAgentIDsWithControlCharactersRefused(t *testing.T) {
	f := connectorFixture(t)
	ctx := context.Background()
	task := f.send(t, "m1", "hello")
	for name, raw := range map[string]string{
		"MessageIDNUL":         `{"message":{"messageId":"a\u0000b","role":"ROLE_AGENT","parts":[{"text":"hi"}]}}`,
		"MessageIDNewline":     `{"message":{"messageId":"a\nb","role":"ROLE_AGENT","parts":[{"text":"hi"}]}}`,
		"MessageIDC1":          `{"message":{"messageId":"a\u009bb","role":"ROLE_AGENT","parts":[{"text":"hi"}]}}`,
		"MessageIDInvalidUTF8": "{\"message\":{\"messageId\":\"a\xffb\",\"role\":\"ROLE_AGENT\",\"parts\":[{\"text\":\"hi\"}]}}",
		"ReferenceTaskIDDEL":   "{\"message\":{\"messageId\":\"ok\",\"referenceTaskIds\":[\"t\x7f\"],\"role\":\"ROLE_AGENT\",\"parts\":[{\"text\":\"hi\"}]}}",
		"StatusMessageID":      `{"statusUpdate":{"taskId":"x","status":{"state":"TASK_STATE_INPUT_REQUIRED","message":{"messageId":"q\u0000","role":"ROLE_AGENT","parts":[{"text":"which?"}]}}}}`,
		"ArtifactUpdateID":     `{"artifactUpdate":{"taskId":"x","artifact":{"artifactId":"a\u0000","parts":[{"text":"p"}]}}}`,
		"TaskArtifactID":       `{"task":{"id":"x","contextId":"y","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"z\u001b[2J","parts":[{"text":"p"}]}]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := f.svc.ApplyAgentEvent(ctx, f.agent, task.ID(), event(t, raw))
			if switchboard.ErrorCode(err) != switchboard.EINVALIDAGENTRESPONSE || !strings.Contains(switchboard.ErrorMessage(err), "control character") {
				t.Fatalf("err %v, want EINVALIDAGENTRESPONSE naming the control characters", err)
			}
		})
	}
	got, err := f.db.FindTaskByID(ctx, task.ID())
	must(t, err)
	if got.State() != task.State() || len(got.A2A.History) != 1 || len(got.A2A.Artifacts) != 0 {
		t.Fatalf("refused answers changed the task: %s, %d messages, %d artifacts", got.State(), len(got.A2A.History), len(got.A2A.Artifacts))
	}
}
