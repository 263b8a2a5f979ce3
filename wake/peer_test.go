package wake_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/wake"
)

// TestPeersSharingAContextAreWokenApart: bob and eve both write to
// contextId "project-x". The agent is woken twice, once per conversation:
// each wake names only its own peer's tasks, and says who wrote.
func TestPeersSharingAContextAreWokenApart(t *testing.T) {
	q := newQueue(t, switchboard.ModeInbox)
	rc := newReceiver(t)
	q.configure(t, rc, wake.Update{Debounce: ptr(time.Duration(0))})
	bob := q.send(t, "project-x", "", "from bob")
	q.peer = switchboard.Peer{AgentID: q.agent.ID, ID: "peer-eve", Label: "eve"}
	eve := q.send(t, "project-x", "", "from eve")
	if n := q.sendDue(t); n != 2 {
		t.Fatalf("%d wakes sent, want one per conversation", n)
	}
	got := map[string][]string{}
	for _, r := range rc.requests() {
		var p wake.Payload
		if err := json.Unmarshal(r.Body, &p); err != nil {
			t.Fatal(err)
		}
		if p.ContextID != "project-x" {
			t.Fatalf("wake for context %q", p.ContextID)
		}
		got[p.From] = p.TaskIDs
	}
	if !slices.Equal(got["bob"], []string{string(bob.ID())}) || !slices.Equal(got["eve"], []string{string(eve.ID())}) {
		t.Fatalf("wakes by sender: %v (bob %s, eve %s)", got, bob.ID(), eve.ID())
	}
}
