package outbox_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/outbox"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// TestConversationKeepsNewest: a conversation with more tasks and outbound
// records than are read shows its latest entries, not its oldest.
func TestConversationKeepsNewest(t *testing.T) {
	f := newTaskFixture(t)
	ctx := context.Background()
	clock := time.Now().UTC()
	tick := func() time.Time { clock = clock.Add(time.Second); return clock }
	f.svc.Now = tick
	box := outbox.New(f.db, f.db)
	box.Now = tick
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
		if err := box.Record(ctx, o, ""); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := box.Conversation(ctx, f.agent.ID, "c1", "", outbox.MaxConversationEntries)
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

// TestConversationsArePerPeer: two peers that chose the same contextId
// hold two conversations. Asked for one peer's, the history shows only its
// messages; asked without a peer, it refuses and names both, rather than
// mix them.
func TestConversationsArePerPeer(t *testing.T) {
	f := newTaskFixture(t)
	ctx := context.Background()
	eve := switchboard.Peer{AgentID: f.agent.ID, ID: "peer-eve", Label: "eve"}
	for _, p := range []switchboard.Peer{f.peer, eve} {
		_, _, err := f.svc.SendMessage(ctx, f.agent, p, &a2a.SendMessageRequest{
			Message: &a2a.Message{ID: "m-" + p.Label, ContextID: "project-x", Role: a2a.MessageRoleUser,
				Parts: a2a.ContentParts{a2a.NewTextPart("I am " + p.Label)}},
		}, switchboard.ProtocolV1)
		if err != nil {
			t.Fatal(err)
		}
	}
	box := outbox.New(f.db, f.db)
	if _, err := box.Conversation(ctx, f.agent.ID, "project-x", "", 50); switchboard.ErrorCode(err) != switchboard.ECONFLICT ||
		!strings.Contains(err.Error(), "bob, eve") {
		t.Fatalf("history of a shared contextId without a peer: %v", err)
	}
	for _, p := range []switchboard.Peer{f.peer, eve} {
		entries, err := box.Conversation(ctx, f.agent.ID, "project-x", p.Label, 50)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 || entries[0].Peer != p.Label || entries[0].Text != "I am "+p.Label {
			t.Fatalf("%s's conversation: %+v", p.Label, entries)
		}
	}
}

// taskFixture is an inbox agent on a real SQLite file, with the relay that
// accepts its peers' messages.
type taskFixture struct {
	db    *sqlstore.DB
	svc   *relay.Service
	agent *switchboard.Agent
	peer  switchboard.Peer
}

func newTaskFixture(t *testing.T) *taskFixture {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.OpenSQLite(ctx, sqlitetest.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	bus := membus.New()
	t.Cleanup(func() { _ = bus.Close(); _ = db.Close() })
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "a", Role: switchboard.RoleOwner}
	if err := db.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "g", Mode: switchboard.ModeInbox, AcceptsTasks: true}
	if err := db.CreateAgent(ctx, g); err != nil {
		t.Fatal(err)
	}
	return &taskFixture{db: db, svc: relay.New(db, bus, slog.New(slog.NewTextHandler(io.Discard, nil))), agent: g,
		peer: switchboard.Peer{AgentID: g.ID, ID: "peer-bob", Label: "bob"}}
}
