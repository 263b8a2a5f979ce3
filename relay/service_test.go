package relay_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// silentBus is a bus that loses every hint, to show that the store alone
// keeps streams correct.
type silentBus struct{ *membus.Bus }

func (*silentBus) Notify(context.Context, string) error { return nil }

type fixture struct {
	db    *sqlstore.DB
	svc   *relay.Service
	agent *switchboard.Agent
	peer  switchboard.Peer
}

func newFixture(t *testing.T, bus switchboard.Bus) *fixture {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.OpenSQLite(ctx, sqlitetest.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bus.Close(); _ = db.Close() })
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "a", Role: switchboard.RoleOwner}
	if err := db.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "g", Mode: switchboard.ModeInbox, AcceptsTasks: true}
	if err := db.CreateAgent(ctx, g); err != nil {
		t.Fatal(err)
	}
	svc := relay.New(db, bus, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return &fixture{db: db, svc: svc, agent: g, peer: switchboard.Peer{AgentID: g.ID, ID: "peer-bob", Label: "bob"}}
}

func (f *fixture) send(t *testing.T, id, text string) *switchboard.Task {
	t.Helper()
	task, _, err := f.svc.SendMessage(context.Background(), f.agent, f.peer, &a2a.SendMessageRequest{
		Message: &a2a.Message{ID: id, Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart(text)}},
	}, switchboard.ProtocolV1)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// TestFollowTaskWithoutHints shows that a lost bus hint only delays a
// follower by one poll interval: every event still arrives, in order.
func TestFollowTaskWithoutHints(t *testing.T) {
	f := newFixture(t, &silentBus{membus.New()})
	f.svc.StreamPoll = 20 * time.Millisecond
	task := f.send(t, "m1", "x")
	got := make(chan int64, 10)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go func() {
		_ = f.svc.FollowTask(ctx, task.ID(), task.Seq, func(ev *switchboard.TaskEvent) (bool, error) {
			got <- ev.Seq
			return !relay.EndsTurn(ev.Event), nil
		})
		close(got)
	}()
	for _, st := range []a2a.TaskState{a2a.TaskStateWorking, a2a.TaskStateCompleted} {
		if _, err := f.svc.ReplyToTask(context.Background(), task.ID(), relay.Reply{Text: "r", State: st}); err != nil {
			t.Fatal(err)
		}
	}
	var seqs []int64
	for s := range got {
		seqs = append(seqs, s)
	}
	if len(seqs) != 3 || seqs[0] != 2 || seqs[2] != 4 {
		t.Fatalf("followed %v, want [2 3 4]", seqs)
	}
}

// TestConcurrentDuplicateSends sends one message id from many goroutines
// at once: exactly one task results.
func TestConcurrentDuplicateSends(t *testing.T) {
	f := newFixture(t, membus.New())
	var wg sync.WaitGroup
	var replays atomic.Int32
	ids := make([]a2a.TaskID, 16)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			task, replayed, err := f.svc.SendMessage(context.Background(), f.agent, f.peer, &a2a.SendMessageRequest{
				Message: &a2a.Message{ID: "same", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("x")}},
			}, switchboard.ProtocolV1)
			if err != nil {
				t.Error(err)
				return
			}
			if replayed {
				replays.Add(1)
			}
			ids[i] = task.ID()
		}()
	}
	wg.Wait()
	if n := replays.Load(); n != int32(len(ids)-1) {
		t.Fatalf("%d sends were replays, want %d", n, len(ids)-1)
	}
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("one message became tasks %s and %s", ids[0], id)
		}
	}
	page, err := f.svc.ListTasks(context.Background(), f.peer, relay.TaskQuery{})
	if err != nil || page.TotalSize != 1 {
		t.Fatalf("tasks stored: %v %v", page, err)
	}
}

func TestSendDoesNotAliasRequest(t *testing.T) {
	f := newFixture(t, membus.New())
	msg := &a2a.Message{ID: "m1", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("x")}}
	if _, _, err := f.svc.SendMessage(context.Background(), f.agent, f.peer, &a2a.SendMessageRequest{Message: msg}, switchboard.ProtocolV1); err != nil {
		t.Fatal(err)
	}
	if msg.TaskID != "" || msg.ContextID != "" {
		t.Fatal("the service changed the caller's message")
	}
}

func TestTrimTask(t *testing.T) {
	task := &a2a.Task{ID: "t", History: []*a2a.Message{{ID: "1"}, {ID: "2"}, {ID: "3"}}, Artifacts: []*a2a.Artifact{{ID: "a"}}}
	n := func(i int) *int { return &i }
	for _, tc := range []struct {
		hist  *int
		arts  bool
		wantH []string
		wantA int
	}{
		{nil, true, []string{"1", "2", "3"}, 1},
		{n(0), true, nil, 1},
		{n(2), false, []string{"2", "3"}, 0},
		{n(10), true, []string{"1", "2", "3"}, 1},
	} {
		got := switchboard.TrimTask(task, tc.hist, tc.arts)
		var ids []string
		for _, m := range got.History {
			ids = append(ids, m.ID)
		}
		if len(ids) != len(tc.wantH) || len(got.Artifacts) != tc.wantA {
			t.Fatalf("trim(%v, %v) = %v, %d artifacts", tc.hist, tc.arts, ids, len(got.Artifacts))
		}
		for i := range ids {
			if ids[i] != tc.wantH[i] {
				t.Fatalf("trim(%v) = %v", tc.hist, ids)
			}
		}
	}
	if len(task.History) != 3 || len(task.Artifacts) != 1 {
		t.Fatal("switchboard.TrimTask changed the stored task")
	}
}

func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	prev := ""
	for range 1000 {
		id := switchboard.NewID()
		if !switchboard.IsUUID(id) || id[14] != '7' || seen[id] {
			t.Fatalf("bad or repeated id %q", id)
		}
		if id[:13] < prev[:min(13, len(prev))] {
			t.Fatalf("ids go back in time: %s after %s", id, prev)
		}
		seen[id], prev = true, id
	}
}

func TestTokens(t *testing.T) {
	secret, hash := switchboard.NewToken(switchboard.TokenPeer)
	if len(secret) != 4+43 || secret[:4] != "sbp_" || switchboard.HashToken(secret) != hash || len(hash) != 64 {
		t.Fatalf("token %q hash %q", secret, hash)
	}
	other, _ := switchboard.NewToken(switchboard.TokenPeer)
	if other == secret {
		t.Fatal("two tokens are equal")
	}
	if o, _ := switchboard.NewToken(switchboard.TokenOwner); o[:4] != "sbo_" {
		t.Fatalf("owner token %q", o)
	}
}

func TestPeerMessageCap(t *testing.T) {
	f := newFixture(t, membus.New())
	task := f.send(t, "m0", "first")
	send := func(i int) error {
		_, _, err := f.svc.SendMessage(context.Background(), f.agent, f.peer, &a2a.SendMessageRequest{
			Message: &a2a.Message{ID: fmt.Sprintf("m%d", i), TaskID: task.ID(), Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("more")}},
		}, switchboard.ProtocolV1)
		return err
	}
	for i := 1; i < relay.MaxPeerMessages; i++ {
		if err := send(i); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	if err := send(relay.MaxPeerMessages); switchboard.ErrorCode(err) != switchboard.EINVALID {
		t.Fatalf("message over the cap: %v", err)
	}
}

// TestTaskSizeCap: follow-ups that would grow a task past MaxTaskBytes are
// refused, and the task keeps what it had.
func TestTaskSizeCap(t *testing.T) {
	f := newFixture(t, membus.New())
	task := f.send(t, "s0", "first")
	big := strings.Repeat("x", 512<<10)
	var refused error
	sent := 0
	for i := 1; i <= 20 && refused == nil; i++ {
		_, _, refused = f.svc.SendMessage(context.Background(), f.agent, f.peer, &a2a.SendMessageRequest{
			Message: &a2a.Message{ID: fmt.Sprintf("s%d", i), TaskID: task.ID(), Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart(big)}},
		}, switchboard.ProtocolV1)
		if refused == nil {
			sent++
		}
	}
	if switchboard.ErrorCode(refused) != switchboard.EINVALID || !strings.Contains(switchboard.ErrorMessage(refused), "more than") {
		t.Fatalf("after %d big follow-ups: %v", sent, refused)
	}
	if sent < 6 || sent > 8 {
		t.Fatalf("%d follow-ups of 512 KiB fit in a task, want 7 or so", sent)
	}
	got, err := f.svc.GetTask(context.Background(), f.peer, task.ID())
	if err != nil || len(got.A2A.History) != sent+1 {
		t.Fatalf("the task after the refusal: %v, %d messages", err, len(got.A2A.History))
	}
}
