package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/a2ajson"
)

var usageTests = map[string]func(*testing.T, Store){
	"PeerUsageCountsOpenTasksAndBytes": testPeerUsage,
	"PeerUsageConcurrentWrites":        testPeerUsageConcurrent,
	"QuotaOpenTasks":                   testQuotaOpenTasks,
	"QuotaBytes":                       testQuotaBytes,
	"QuotaConcurrentCreates":           testQuotaConcurrent,
	"QuotaHeld":                        testQuotaHeld,
}

// storedBytes returns the size of the task's A2A JSON as the store holds it.
func storedBytes(t *testing.T, s Store, id a2a.TaskID) int64 {
	t.Helper()
	task, err := s.FindTaskByID(context.Background(), id)
	must(t, err)
	data, err := a2ajson.AppendTask(nil, &task.A2A)
	must(t, err)
	return int64(len(data))
}

// wantUsage checks PeerUsage of the peer on the agent, and that a count
// of the tasks themselves (RecountPeerUsage) agrees, and changes nothing.
func wantUsage(t *testing.T, s Store, g *switchboard.Agent, peer string, tasks int, bytes int64) {
	t.Helper()
	ctx := context.Background()
	for _, count := range []struct {
		name string
		fn   func(context.Context, string, string) (int, int64, error)
	}{{"PeerUsage", s.PeerUsage}, {"RecountPeerUsage", s.RecountPeerUsage}, {"PeerUsage after a recount", s.PeerUsage}} {
		gotTasks, gotBytes, err := count.fn(ctx, g.ID, "id-"+peer)
		must(t, err)
		if gotTasks != tasks || gotBytes != bytes {
			t.Fatalf("%s(%s, %s) = %d tasks, %d bytes; want %d, %d", count.name, g.Handle, peer, gotTasks, gotBytes, tasks, bytes)
		}
	}
	sent, gotTasks, gotBytes, err := s.MessageUsage(ctx, g.ID, "id-"+peer, "never-sent")
	must(t, err)
	if sent || gotTasks != tasks || gotBytes != bytes {
		t.Fatalf("MessageUsage(%s, %s, never-sent) = %v, %d tasks, %d bytes; want false, %d, %d", g.Handle, peer, sent, gotTasks, gotBytes, tasks, bytes)
	}
}

// wantSent checks that MessageUsage finds a task of the peer's message on
// the agent, or not.
func wantSent(t *testing.T, s Store, g *switchboard.Agent, peer, messageID string, want bool) {
	t.Helper()
	sent, _, _, err := s.MessageUsage(context.Background(), g.ID, "id-"+peer, messageID)
	must(t, err)
	if sent != want {
		t.Fatalf("MessageUsage(%s, %s, %s) says sent %v, want %v", g.Handle, peer, messageID, sent, want)
	}
}

// testPeerUsage checks that PeerUsage counts the peer's unfinished tasks
// on the agent, and no one else's, with the bytes of their JSON as every
// kind of write leaves it: created with or without a push configuration
// (one statement or a transaction on PostgreSQL), changed with or without
// a message id (likewise), finished, and woken again.
func testPeerUsage(t *testing.T, s Store) {
	ctx := context.Background()
	acct := newAccount(t, s, "acme")
	g, h := newAgent(t, s, acct, "g"), newAgent(t, s, acct, "h")
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	wantUsage(t, s, g, "bob", 0, 0)

	create := func(agent *switchboard.Agent, peer, messageID string, push bool) *switchboard.Task {
		t.Helper()
		task := newTask(agent, peer, "c", messageID, at)
		var pc *switchboard.PushConfig
		if push {
			pc = &switchboard.PushConfig{Config: a2a.PushConfig{TaskID: task.ID(), ID: "p", URL: "https://example.com/push"},
				Protocol: switchboard.ProtocolV1, CreatedAt: at}
		}
		_, err := s.CreateTask(ctx, task, created(task, pc))
		must(t, err)
		return task
	}
	a := create(g, "bob", "m-a", false)
	b := create(g, "bob", "m-b", true)
	create(g, "carol", "m-c", false) // another peer
	create(h, "bob", "m-d", false)   // another agent
	wantUsage(t, s, g, "bob", 2, storedBytes(t, s, a.ID())+storedBytes(t, s, b.ID()))
	wantSent(t, s, g, "bob", "m-a", true)
	wantSent(t, s, g, "carol", "m-c", true)
	wantSent(t, s, g, "bob", "m-c", false) // carol's
	wantSent(t, s, g, "bob", "m-d", false) // to h

	// A change that grows a task: its new size counts.
	change := func(id a2a.TaskID, state a2a.TaskState, text, messageID string) {
		t.Helper()
		_, _, err := s.ModifyTask(ctx, id, func(task *switchboard.Task) (*switchboard.TaskChange, error) {
			at = at.Add(time.Second)
			msg := &a2a.Message{ID: switchboard.NewID(), Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart(text)}}
			task.A2A.History = append(task.A2A.History, msg)
			task.A2A.Status = a2a.TaskStatus{State: state, Timestamp: &at}
			task.UpdatedAt = at
			ev := &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: task.A2A.ContextID, Status: task.A2A.Status}
			return &switchboard.TaskChange{Events: []a2a.Event{ev}, MessageID: messageID}, nil
		})
		must(t, err)
	}
	before := storedBytes(t, s, a.ID())
	change(a.ID(), a2a.TaskStateWorking, strings.Repeat("x", 5000), "")
	if after := storedBytes(t, s, a.ID()); after < before+5000 {
		t.Fatalf("task grew from %d to %d bytes, want 5000 more", before, after)
	}
	wantUsage(t, s, g, "bob", 2, storedBytes(t, s, a.ID())+storedBytes(t, s, b.ID()))
	wantSent(t, s, g, "bob", "m-b2", false)
	change(b.ID(), a2a.TaskStateInputRequired, "which one?", "m-b2")
	wantSent(t, s, g, "bob", "m-b2", true) // a follow-up's message id
	wantUsage(t, s, g, "bob", 2, storedBytes(t, s, a.ID())+storedBytes(t, s, b.ID()))
	change(b.ID(), a2a.TaskStateAuthRequired, "who are you?", "")
	wantUsage(t, s, g, "bob", 2, storedBytes(t, s, a.ID())+storedBytes(t, s, b.ID()))

	// A finished task no longer counts, whichever way it finished.
	change(a.ID(), a2a.TaskStateCompleted, "done", "")
	wantUsage(t, s, g, "bob", 1, storedBytes(t, s, b.ID()))
	change(b.ID(), a2a.TaskStateCanceled, "canceled", "m-b3")
	wantUsage(t, s, g, "bob", 0, 0)

	// A finished task set going again (an owner's forced reply) counts
	// again, at its size then.
	change(a.ID(), a2a.TaskStateInputRequired, "one more thing", "")
	wantUsage(t, s, g, "bob", 1, storedBytes(t, s, a.ID()))
	wantUsage(t, s, g, "carol", 1, storedBytes(t, s, newestTask(t, s, g, "carol")))
	wantUsage(t, s, h, "bob", 1, storedBytes(t, s, newestTask(t, s, h, "bob")))
}

// newestTask returns the id of the peer's newest task on the agent.
func newestTask(t *testing.T, s Store, g *switchboard.Agent, peer string) a2a.TaskID {
	t.Helper()
	id := "id-" + peer
	tasks, _, err := s.FindTasks(context.Background(), switchboard.TaskFilter{AgentID: &g.ID, PeerID: &id, Limit: 1, NoTotal: true})
	must(t, err)
	if len(tasks) != 1 {
		t.Fatalf("%s has %d tasks on %s, want some", peer, len(tasks), g.Handle)
	}
	return tasks[0].ID()
}

// testPeerUsageConcurrent creates and changes a peer's tasks from many
// goroutines at once, as several instances would: the counts PeerUsage
// keeps stay those of the tasks.
func testPeerUsageConcurrent(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "acme"), "g")
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := range 6 {
				task := newTask(g, "bob", "c", fmt.Sprint("m-", w, "-", i), at)
				if _, err := s.CreateTask(ctx, task, created(task, nil)); err != nil {
					errs <- err
					return
				}
				// Half the tasks grow and finish, a third are answered
				// with a question; the rest stay submitted.
				states := map[int][]a2a.TaskState{0: {a2a.TaskStateWorking, a2a.TaskStateCompleted}, 1: {a2a.TaskStateInputRequired}}[i%3]
				for _, state := range states {
					_, _, err := s.ModifyTask(ctx, task.ID(), func(tk *switchboard.Task) (*switchboard.TaskChange, error) {
						tk.A2A.History = append(tk.A2A.History, &a2a.Message{ID: switchboard.NewID(), Role: a2a.MessageRoleAgent,
							Parts: a2a.ContentParts{a2a.NewTextPart(strings.Repeat("y", 100*(i+1)))}})
						tk.A2A.Status = a2a.TaskStatus{State: state, Timestamp: &at}
						ev := &a2a.TaskStatusUpdateEvent{TaskID: tk.ID(), ContextID: tk.A2A.ContextID, Status: tk.A2A.Status}
						return &switchboard.TaskChange{Events: []a2a.Event{ev}}, nil
					})
					if err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	id := "id-bob"
	tasks, _, err := s.FindTasks(ctx, switchboard.TaskFilter{AgentID: &g.ID, PeerID: &id, NoTotal: true,
		States: []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired}})
	must(t, err)
	var bytes int64
	for _, task := range tasks {
		bytes += storedBytes(t, s, task.ID())
	}
	if len(tasks) != 8*4 {
		t.Fatalf("%d unfinished tasks, want 32", len(tasks))
	}
	wantUsage(t, s, g, "bob", len(tasks), bytes)
}

// createWithQuota stores a new task of the peer with the quota; it returns
// the task, or the store's error.
func createWithQuota(t *testing.T, s Store, g *switchboard.Agent, peer, messageID, text string, q switchboard.PeerQuota) (*switchboard.Task, error) {
	t.Helper()
	task := newTask(g, peer, "c", messageID, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	task.A2A.History[0].Parts = a2a.ContentParts{a2a.NewTextPart(text)}
	change := created(task, nil)
	change.Quota = &q
	_, err := s.CreateTask(context.Background(), task, change)
	return task, err
}

// wantQuotaError checks that err is the store's refusal for a quota, and
// returns it.
func wantQuotaError(t *testing.T, err error) *switchboard.QuotaError {
	t.Helper()
	var qe *switchboard.QuotaError
	if !errors.As(err, &qe) || switchboard.ErrorCode(err) != switchboard.EQUOTA {
		t.Fatalf("error %v, want a *QuotaError (EQUOTA)", err)
	}
	return qe
}

// wantNotStored checks that nothing of a refused new task was written.
func wantNotStored(t *testing.T, s Store, task *switchboard.Task) {
	t.Helper()
	_, err := s.FindTaskByID(context.Background(), task.ID())
	wantCode(t, err, switchboard.ENOTFOUND)
	_, err = s.FindTaskByMessageID(context.Background(), task.AgentID, task.PeerID, task.A2A.History[0].ID)
	wantCode(t, err, switchboard.ENOTFOUND)
	evs, err := s.FindTaskEvents(context.Background(), task.ID(), 0, 0)
	must(t, err)
	if len(evs) != 0 {
		t.Fatalf("a refused task has %d events", len(evs))
	}
}

// testQuotaOpenTasks checks TaskChange.Quota.MaxOpenTasks: a new task past
// it is refused with a *QuotaError that says so, and nothing is written; a
// change of an unfinished task, another peer's task, and a task once one
// finished are not refused.
func testQuotaOpenTasks(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "acme"), "g")
	q := switchboard.PeerQuota{MaxOpenTasks: 2}
	first, err := createWithQuota(t, s, g, "bob", "m-1", "one", q)
	must(t, err)
	_, err = createWithQuota(t, s, g, "bob", "m-2", "two", q)
	must(t, err)
	refused, err := createWithQuota(t, s, g, "bob", "m-3", "three", q)
	qe := wantQuotaError(t, err)
	if !qe.TooMany || qe.OpenTasks != 2 || qe.Quota != q {
		t.Fatalf("refusal %+v, want too many, 2 open, the quota", qe)
	}
	wantNotStored(t, s, refused)
	_, err = createWithQuota(t, s, g, "carol", "c-1", "mine", q)
	must(t, err)

	// A follow-up is no new task.
	_, _, err = s.ModifyTask(ctx, first.ID(), func(tk *switchboard.Task) (*switchboard.TaskChange, error) {
		tk.A2A.History = append(tk.A2A.History, &a2a.Message{ID: "m-1b", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("more")}})
		return &switchboard.TaskChange{MessageID: "m-1b", Quota: &q}, nil
	})
	must(t, err)
	finish(t, s, first.ID(), a2a.TaskStateCompleted)
	_, err = createWithQuota(t, s, g, "bob", "m-3", "three", q)
	must(t, err)
	wantUsage(t, s, g, "bob", 2, storedBytesOf(t, s, g, "bob", "m-3")+storedBytesOf(t, s, g, "bob", "m-2"))
}

// finish moves a task to a final state, without a quota.
func finish(t *testing.T, s Store, id a2a.TaskID, state a2a.TaskState) {
	t.Helper()
	_, _, err := s.ModifyTask(context.Background(), id, func(tk *switchboard.Task) (*switchboard.TaskChange, error) {
		at := time.Date(2026, 1, 2, 4, 0, 0, 0, time.UTC)
		tk.A2A.Status = a2a.TaskStatus{State: state, Timestamp: &at}
		return &switchboard.TaskChange{Events: []a2a.Event{&a2a.TaskStatusUpdateEvent{TaskID: tk.ID(), ContextID: tk.A2A.ContextID, Status: tk.A2A.Status}}}, nil
	})
	must(t, err)
}

// storedBytesOf returns the size of the task the peer's message created.
func storedBytesOf(t *testing.T, s Store, g *switchboard.Agent, peer, messageID string) int64 {
	t.Helper()
	task, err := s.FindTaskByMessageID(context.Background(), g.ID, "id-"+peer, messageID)
	must(t, err)
	return storedBytes(t, s, task.ID())
}

// testQuotaBytes checks TaskChange.Quota.MaxBytes: a new task or a change
// that would take the bytes of the peer's unfinished tasks past it is
// refused with a *QuotaError that says by how much, and nothing is
// written; a change without the quota (an agent's answer) may pass it.
func testQuotaBytes(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "acme"), "g")
	free := switchboard.PeerQuota{}
	first, err := createWithQuota(t, s, g, "bob", "m-1", strings.Repeat("a", 3000), free)
	must(t, err)
	size := storedBytes(t, s, first.ID())
	q := switchboard.PeerQuota{MaxBytes: 2*size + 1000}

	second, err := createWithQuota(t, s, g, "bob", "m-2", strings.Repeat("b", 3000), q)
	must(t, err)
	refused, err := createWithQuota(t, s, g, "bob", "m-3", strings.Repeat("c", 3000), q)
	qe := wantQuotaError(t, err)
	if qe.TooMany || qe.Bytes != 2*size || qe.Grow != size || qe.Quota != q {
		t.Fatalf("refusal %+v, want %d bytes held, %d more", qe, 2*size, size)
	}
	wantNotStored(t, s, refused)

	grow := func(id a2a.TaskID, messageID string, n int, quota *switchboard.PeerQuota) error {
		_, _, err := s.ModifyTask(ctx, id, func(tk *switchboard.Task) (*switchboard.TaskChange, error) {
			tk.A2A.History = append(tk.A2A.History, &a2a.Message{ID: messageID, Role: a2a.MessageRoleUser,
				Parts: a2a.ContentParts{a2a.NewTextPart(strings.Repeat("d", n))}})
			return &switchboard.TaskChange{MessageID: messageID, Quota: quota,
				Events: []a2a.Event{&a2a.TaskStatusUpdateEvent{TaskID: tk.ID(), ContextID: tk.A2A.ContextID, Status: tk.A2A.Status}}}, nil
		})
		return err
	}
	qe = wantQuotaError(t, grow(second.ID(), "m-2b", 2000, &q))
	if qe.TooMany || qe.Bytes != 2*size || qe.Grow < 2000 {
		t.Fatalf("refusal %+v, want %d bytes held, 2000 or more to add", qe, 2*size)
	}
	task, err := s.FindTaskByID(ctx, second.ID())
	must(t, err)
	if len(task.A2A.History) != 1 || task.Seq != 1 {
		t.Fatalf("the refused change was written: %d messages, seq %d", len(task.A2A.History), task.Seq)
	}
	_, err = s.FindTaskByMessageID(ctx, g.ID, "id-bob", "m-2b")
	wantCode(t, err, switchboard.ENOTFOUND)
	must(t, grow(second.ID(), "m-2c", 200, &q)) // fits
	must(t, grow(second.ID(), "m-2d", 5000, nil))
	wantUsage(t, s, g, "bob", 2, size+storedBytes(t, s, second.ID()))
}

// testQuotaHeld checks PeerQuota.HeldOpen and HeldBytes: what the peer
// holds outside the store counts toward the quota as if stored, and a
// refusal says so.
func testQuotaHeld(t *testing.T, s Store) {
	g := newAgent(t, s, newAccount(t, s, "acme"), "g")
	_, err := createWithQuota(t, s, g, "bob", "m-1", "one", switchboard.PeerQuota{})
	must(t, err)
	size := storedBytesOf(t, s, g, "bob", "m-1")
	held := switchboard.PeerQuota{MaxOpenTasks: 2, HeldOpen: 1}
	refused, err := createWithQuota(t, s, g, "bob", "m-2", "two", held)
	if qe := wantQuotaError(t, err); !qe.TooMany || qe.OpenTasks != 2 {
		t.Fatalf("refusal %+v, want too many, 2 open (1 stored, 1 held)", qe)
	}
	wantNotStored(t, s, refused)
	_, err = createWithQuota(t, s, g, "bob", "m-2", "two", switchboard.PeerQuota{MaxOpenTasks: 3, HeldOpen: 1})
	must(t, err)

	bytes := switchboard.PeerQuota{MaxBytes: 3*size + 100, HeldBytes: size + 100}
	refused, err = createWithQuota(t, s, g, "bob", "m-3", "tri", bytes)
	if qe := wantQuotaError(t, err); qe.TooMany || qe.Bytes != 2*size+size+100 {
		t.Fatalf("refusal %+v, want too big, %d bytes (2 tasks stored, and held)", qe, 3*size+100)
	}
	wantNotStored(t, s, refused)
	_, err = createWithQuota(t, s, g, "bob", "m-3", "tri", switchboard.PeerQuota{MaxBytes: 3*size + 100, HeldBytes: 100})
	must(t, err)
}

// testQuotaConcurrent creates tasks of one peer from many goroutines at
// once against a quota: exactly as many as it allows are written.
func testQuotaConcurrent(t *testing.T, s Store) {
	g := newAgent(t, s, newAccount(t, s, "acme"), "g")
	q := switchboard.PeerQuota{MaxOpenTasks: 20}
	var wg sync.WaitGroup
	var mu sync.Mutex
	created, refused := 0, 0
	for w := range 8 {
		wg.Go(func() {
			for i := range 6 {
				_, err := createWithQuota(t, s, g, "bob", fmt.Sprint("m-", w, "-", i), "hi", q)
				mu.Lock()
				if err == nil {
					created++
				} else if switchboard.ErrorCode(err) == switchboard.EQUOTA {
					refused++
				} else {
					t.Error(err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if created != 20 || refused != 28 {
		t.Fatalf("%d created and %d refused, want 20 and 28", created, refused)
	}
	open, _, err := s.PeerUsage(context.Background(), g.ID, "id-bob")
	must(t, err)
	if open != 20 {
		t.Fatalf("PeerUsage: %d open tasks, want 20", open)
	}
}
