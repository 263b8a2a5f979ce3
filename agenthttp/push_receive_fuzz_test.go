package agenthttp

import (
	"encoding/json"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/outbox"
)

// pushSeeds are push bodies in every accepted shape, and some that are not.
var pushSeeds = []string{
	// A2A 1.0 StreamResponse shapes.
	`{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED","message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"done"}]}}}}`,
	`{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}`,
	`{"artifactUpdate":{"taskId":"t1","contextId":"c1","artifact":{"artifactId":"a1","parts":[{"text":"part"}]}}}`,
	`{"message":{"messageId":"m2","taskId":"t1","role":"ROLE_AGENT","parts":[{"text":"hi"}]}}`,
	// A2A 0.3 shapes.
	`{"kind":"task","id":"t1","contextId":"c1","status":{"state":"completed"}}`,
	`{"id":"t1","contextId":"c1","status":{"state":"input-required"}}`,
	`{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"working"},"final":false}`,
	`{"kind":"artifact-update","taskId":"t1","contextId":"c1","artifact":{"artifactId":"a","parts":[{"kind":"text","text":"x"}]}}`,
	`{"kind":"message","messageId":"m","taskId":"t1","role":"agent","parts":[{"kind":"text","text":"x"}]}`,
	`{"kind":"task","id":"t1","contextId":"c1","status":{"state":"completed","message":{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"data"}]}},"artifacts":[{"artifactId":"a","parts":[{"kind":"data","data":null},{"kind":"text","text":"x"}]}]}`,
	// Not pushes.
	`{"task":{"id":"t1"},"message":{"messageId":"m"}}`,
	`{"statusUpdate":{"status":{"state":"TASK_STATE_WORKING"}}}`,
	`{"kind":"nonsense","id":"t1"}`,
	`{"kind":7}`,
	`{}`, `[]`, `null`, `"x"`, ``, `{`, `{"task":null}`,
}

// TestParsePushBodySeeds runs the fuzz seeds as a regular test, with the
// outcome each must have.
func TestParsePushBodySeeds(t *testing.T) {
	for i, seed := range pushSeeds {
		id, ev, err := parsePushBody([]byte(seed))
		wantOK := i < 10
		if (err == nil) != wantOK {
			t.Fatalf("seed %d %s: err %v, want ok=%v", i, seed, err, wantOK)
		}
		if err != nil {
			if switchboard.ErrorCode(err) != switchboard.EINVALID {
				t.Fatalf("seed %d: error code %s", i, switchboard.ErrorCode(err))
			}
			continue
		}
		if id != "t1" || ev == nil {
			t.Fatalf("seed %d: task %q event %T", i, id, ev)
		}
	}
	// The 0.3 state names become 1.0 states.
	_, ev, err := parsePushBody([]byte(pushSeeds[5]))
	if err != nil || ev.(*a2a.Task).Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("0.3 task: %v %+v", err, ev)
	}
}

// FuzzParsePushBody checks the push body parser on arbitrary bodies: it
// never panics, refuses with EINVALID only, and whatever it accepts names a
// task and is an event that can be applied to an outbound record and
// written back as a StreamResponse.
func FuzzParsePushBody(f *testing.F) {
	for _, s := range pushSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		id, ev, err := parsePushBody(body)
		if err != nil {
			if switchboard.ErrorCode(err) != switchboard.EINVALID {
				t.Fatalf("error code %s: %v", switchboard.ErrorCode(err), err)
			}
			return
		}
		if id == "" || ev == nil || pushTaskID(ev) != id {
			t.Fatalf("accepted without a task: %q %T", id, ev)
		}
		var o switchboard.Outbound
		outbox.ApplyEvent(&o, ev, switchboard.OutboundFromPush, o.UpdatedAt)
		if len(o.Updates) != 1 {
			t.Fatalf("updates after one event: %d", len(o.Updates))
		}
		if _, err := json.Marshal(a2a.StreamResponse{Event: ev}); err != nil {
			t.Fatalf("accepted event does not marshal: %v", err)
		}
		// What the record keeps reads back: the store writes and reads it so.
		for _, kept := range []any{o.Task, o.Reply} {
			b, err := json.Marshal(kept)
			if err != nil {
				t.Fatalf("the record does not marshal: %v", err)
			}
			if err := json.Unmarshal(b, new(a2a.Task)); kept == o.Task && err != nil {
				t.Fatalf("the kept task does not read back: %v: %s", err, b)
			}
			if err := json.Unmarshal(b, new(a2a.Message)); kept == o.Reply && err != nil {
				t.Fatalf("the kept reply does not read back: %v: %s", err, b)
			}
		}
	})
}
