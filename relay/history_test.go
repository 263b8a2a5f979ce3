package relay_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/membus"
)

// TestConversationKeepsNewest: a conversation with more tasks and outbound
// records than are read shows its latest entries, not its oldest.
func TestConversationKeepsNewest(t *testing.T) {
	f := newFixture(t, membus.New())
	ctx := context.Background()
	clock := time.Now().UTC()
	tick := func() time.Time { clock = clock.Add(time.Second); return clock }
	f.svc.Now = tick
	outbox := switchboard.NewOutboxService(f.db, f.db)
	outbox.Now = tick
	const n = 230 // more than are read of each direction
	for i := range n {
		_, _, err := f.svc.SendMessage(ctx, f.agent, f.peer, &a2a.SendMessageRequest{
			Message: &a2a.Message{ID: fmt.Sprint("m", i), ContextID: "c1", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart(fmt.Sprint("in ", i))}},
		}, switchboard.ProtocolV1)
		if err != nil {
			t.Fatal(err)
		}
		o := &switchboard.Outbound{AgentID: f.agent.ID, Target: "bob", Endpoint: "https://bob.example/", Protocol: switchboard.ProtocolV1,
			ContextID: "c1", Text: fmt.Sprint("out ", i)}
		if err := outbox.Record(ctx, o, ""); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := outbox.Conversation(ctx, f.agent.ID, "c1", switchboard.MaxConversationEntries)
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string][]string{}
	for _, e := range entries {
		texts[e.Kind] = append(texts[e.Kind], e.Text)
	}
	// The 200 latest of each direction, oldest first.
	for kind, prefix := range map[string]string{"message": "in ", "sent": "out "} {
		got := texts[kind]
		if len(got) != 200 || got[0] != fmt.Sprint(prefix, n-200) || got[len(got)-1] != fmt.Sprint(prefix, n-1) {
			t.Fatalf("%s entries: %d, from %q to %q", kind, len(got), got[0], got[len(got)-1])
		}
	}
}
