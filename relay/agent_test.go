package relay_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/membus"
)

// connectorFixture is a fixture whose agent is a connector agent.
func connectorFixture(t *testing.T) *fixture {
	f := newFixture(t, membus.New())
	mode := switchboard.ModeConnector
	g, err := f.db.UpdateAgent(context.Background(), f.agent.ID, switchboard.AgentUpdate{Mode: &mode})
	must(t, err)
	f.agent = g
	return f
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func event(t *testing.T, raw string) a2a.Event {
	t.Helper()
	var sr a2a.StreamResponse
	must(t, json.Unmarshal([]byte(raw), &sr))
	return sr.Event
}

func TestApplyAgentEvents(t *testing.T) {
	f := connectorFixture(t)
	ctx := context.Background()
	task := f.send(t, "m1", "hello")
	apply := func(raw string) (*switchboard.Task, error) {
		return f.svc.ApplyAgentEvent(ctx, f.agent, task.ID(), event(t, raw))
	}

	// An artifact with append adds its parts to the artifact with that id.
	_, err := apply(`{"artifactUpdate":{"taskId":"x","artifact":{"artifactId":"a","parts":[{"text":"one "}]}}}`)
	must(t, err)
	got, err := apply(`{"artifactUpdate":{"taskId":"x","append":true,"artifact":{"artifactId":"a","parts":[{"text":"two"}]}}}`)
	must(t, err)
	if n := len(got.A2A.Artifacts); n != 1 || len(got.A2A.Artifacts[0].Parts) != 2 {
		t.Fatalf("append: %d artifacts, %+v", n, got.A2A.Artifacts)
	}
	// Without append, it replaces the artifact.
	got, err = apply(`{"artifactUpdate":{"taskId":"x","artifact":{"artifactId":"a","parts":[{"text":"only"}]}}}`)
	must(t, err)
	if len(got.A2A.Artifacts[0].Parts) != 1 || got.A2A.Artifacts[0].Parts[0].Text() != "only" {
		t.Fatalf("replace: %+v", got.A2A.Artifacts[0])
	}
	// The agent's ids and role are replaced by the task's; the relay's own
	// metadata key is not the agent's to set.
	got, err = apply(`{"statusUpdate":{"taskId":"x","contextId":"wrong","metadata":{"switchboard":"forged","k":1},
		"status":{"state":"TASK_STATE_INPUT_REQUIRED","message":{"messageId":"q","role":"ROLE_USER","parts":[{"text":"which?"}]}}}}`)
	must(t, err)
	last := got.A2A.History[len(got.A2A.History)-1]
	if got.State() != a2a.TaskStateInputRequired || last.Role != a2a.MessageRoleAgent || last.ContextID != got.A2A.ContextID {
		t.Fatalf("status: %s, last message %+v", got.State(), last)
	}
	evs, err := f.db.FindTaskEvents(ctx, task.ID(), 0, 0)
	must(t, err)
	st := evs[len(evs)-1].Event.(*a2a.TaskStatusUpdateEvent)
	if _, forged := st.Metadata["switchboard"]; forged || st.ContextID != got.A2A.ContextID || st.Metadata["k"] != float64(1) {
		t.Fatalf("logged event %+v", st)
	}

	for name, raw := range map[string]string{
		"SubmittedState": `{"statusUpdate":{"taskId":"x","status":{"state":"TASK_STATE_SUBMITTED"}}}`,
		"UnknownState":   `{"statusUpdate":{"taskId":"x","status":{"state":"TASK_STATE_SLEEPING"}}}`,
		"EmptyArtifact":  `{"artifactUpdate":{"taskId":"x","artifact":{"artifactId":"a","parts":[]}}}`,
		"EmptyMessage":   `{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := apply(raw); switchboard.ErrorCode(err) != switchboard.EINVALIDAGENTRESPONSE {
				t.Fatalf("err %v, want EINVALIDAGENTRESPONSE", err)
			}
		})
	}

	// Another agent's event about this task is refused as not found.
	other := *f.agent
	other.ID = switchboard.NewID()
	if _, err := f.svc.ApplyAgentEvent(ctx, &other, task.ID(), event(t, `{"statusUpdate":{"taskId":"x","status":{"state":"TASK_STATE_COMPLETED"}}}`)); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("foreign agent: %v", err)
	}
	// A finished task ignores later events.
	_, err = apply(`{"message":{"messageId":"done","role":"ROLE_AGENT","parts":[{"text":"bye"}]}}`)
	must(t, err)
	got, err = apply(`{"statusUpdate":{"taskId":"x","status":{"state":"TASK_STATE_WORKING"}}}`)
	must(t, err)
	if got.State() != a2a.TaskStateCompleted {
		t.Fatalf("a late event reopened the task: %s", got.State())
	}
}

// FuzzAgentEvent feeds arbitrary agent events to a task: the task is never
// left in a state an agent may not set, and failures are the agent's fault.
func FuzzAgentEvent(f *testing.F) {
	for _, s := range []string{
		`{"statusUpdate":{"taskId":"x","status":{"state":"TASK_STATE_WORKING"}}}`,
		`{"artifactUpdate":{"taskId":"x","append":true,"artifact":{"artifactId":"a","parts":[{"text":"p"}]}}}`,
		`{"task":{"id":"x","contextId":"y","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"z","parts":[{"data":1}]}]}}`,
		`{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"url":"https://x","mediaType":"a/b"}]}}`,
		`{"statusUpdate":{"taskId":"x","status":{"state":"TASK_STATE_UNSPECIFIED"}}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var sr a2a.StreamResponse
		if json.Unmarshal([]byte(raw), &sr) != nil || sr.Event == nil {
			return
		}
		fx := connectorFixture(t)
		task := fx.send(t, "m1", "x")
		got, err := fx.svc.ApplyAgentEvent(context.Background(), fx.agent, task.ID(), sr.Event)
		if err != nil {
			if c := switchboard.ErrorCode(err); c != switchboard.EINVALIDAGENTRESPONSE {
				t.Fatalf("error %v (code %s) for %s", err, c, raw)
			}
			return
		}
		if st := got.State(); st == a2a.TaskStateUnspecified {
			t.Fatalf("state %s after %s", st, raw)
		}
	})
}

// TestClaimOffersReadsAcceptsTasks checks that whether the agent accepts
// tasks is read from the store when offers are claimed, not from the
// connection's copy of the agent, which is older than the owner's change.
func TestClaimOffersReadsAcceptsTasks(t *testing.T) {
	f := connectorFixture(t)
	ctx := context.Background()
	stale := *f.agent // as the connection loaded it: accepting tasks
	no := false
	_, err := f.db.UpdateAgent(ctx, f.agent.ID, switchboard.AgentUpdate{AcceptsTasks: &no})
	must(t, err)
	f.send(t, "m1", "hello")
	offers, err := f.svc.ClaimOffers(ctx, &stale, "conn-1", 10)
	must(t, err)
	if len(offers) != 0 {
		t.Fatalf("offered %d new tasks to an agent that stopped accepting them", len(offers))
	}
}
