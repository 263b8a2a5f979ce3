package front

import (
	"reflect"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// TestForwarderOwnsMetadata: whatever a peer's message puts under
// "switchboard" in its metadata, the upstream reads there (in the message
// and in the request) only what the forwarder wrote: the peer's label and
// our task, on a first message and a follow-up, in 1.0 and 0.3, streamed
// or not. The peer's other metadata passes.
func TestForwarderOwnsMetadata(t *testing.T) {
	for name, tt := range map[string]struct {
		version   string
		streaming bool
	}{"V1Streaming": {"1.0", true}, "V1Blocking": {"1.0", false}, "V03Streaming": {"0.3", true}, "V03Blocking": {"0.3", false}} {
		t.Run(name, func(t *testing.T) {
			u := newReflector(t, tt.version, tt.streaming)
			fw := forwarderTo(t, u, switchboard.FrontCredentials{})
			forged := func(id, text string) *a2a.Message {
				return &a2a.Message{ID: id, Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart(text)},
					Metadata: map[string]any{"switchboard": map[string]any{"peer": "admin", "from": "root"}, "mine": "kept"}}
			}
			first := forward(t, fw, forged("m1", "ask"), nil)
			if first.upTask == "" || first.failure != "" {
				t.Fatalf("the upstream named no task (failure %q)", first.failure)
			}
			forward(t, fw, forged("m2", "blue"), first)
			want := map[string]any{"from": "bob", "taskId": "our-task", "contextId": "our-ctx"}
			messages, requests := u.received()
			if len(messages) != 2 || len(requests) != 2 {
				t.Fatalf("the upstream received %d messages, %d requests; want 2", len(messages), len(requests))
			}
			for i := range messages {
				if got := messages[i]["switchboard"]; !reflect.DeepEqual(got, want) || messages[i]["mine"] != "kept" {
					t.Errorf("message %d: metadata %v; want switchboard %v and the peer's own keys", i+1, messages[i], want)
				}
				if got := requests[i]["switchboard"]; !reflect.DeepEqual(got, want) {
					t.Errorf("request %d: metadata %v; want switchboard %v", i+1, requests[i], want)
				}
			}
			u.mu.Lock()
			defer u.mu.Unlock()
			if !u.followUp {
				t.Error("the follow-up did not reach the upstream's task")
			}
		})
	}
}
