package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/switchboard-dev/switchboard"
)

// frontTests cover the front store: an agent's upstream and credentials,
// its last failure, and the upstream ids of its tasks and contexts.
var frontTests = map[string]func(*testing.T, Store){
	"FrontPutFindCredentials": testFrontPutFind,
	"FrontTaskAndContextMaps": testFrontMaps,
	"FrontMapInTaskChange":    testFrontMapInChange,
	"FrontTaskWithAnswer":     testFrontTaskWithAnswer,
	"FrontOfferSent":          testFrontOfferSent,
	"PublishedCard":           testPublishedCard,
}

// testPublishedCard: a connector's published card is kept, replaced,
// forgotten, and deleted with its agent.
func testPublishedCard(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "laptop")
	if _, err := s.FindPublishedCard(ctx, g.ID); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("before any: %v, want ENOTFOUND", err)
	}
	if err := s.PublishCard(ctx, &switchboard.PublishedCard{AgentID: "no-such-agent", Target: "http://127.0.0.1:9999", Card: []byte(`{}`)}); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("a missing agent's: %v, want ENOTFOUND", err)
	}
	big := make([]byte, switchboard.MaxPublishedCard+1)
	if err := s.PublishCard(ctx, &switchboard.PublishedCard{AgentID: g.ID, Target: "http://127.0.0.1:9999", Card: big}); switchboard.ErrorCode(err) != switchboard.EINVALID {
		t.Fatalf("an oversized card: %v, want EINVALID", err)
	}
	must(t, s.PublishCard(ctx, &switchboard.PublishedCard{AgentID: g.ID, Target: "http://127.0.0.1:9999", Card: []byte(`{"name":"one"}`)}))
	must(t, s.PublishCard(ctx, &switchboard.PublishedCard{AgentID: g.ID, Target: "http://10.0.0.2:8080/a2a", Card: []byte(`{"name":"two"}`)}))
	got, err := s.FindPublishedCard(ctx, g.ID)
	must(t, err)
	if got.Target != "http://10.0.0.2:8080/a2a" || string(got.Card) != `{"name":"two"}` || got.UpdatedAt.IsZero() {
		t.Fatalf("published %+v", got)
	}
	must(t, s.ForgetPublishedCard(ctx, g.ID))
	if _, err := s.FindPublishedCard(ctx, g.ID); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("forgotten: %v, want ENOTFOUND", err)
	}
	must(t, s.ForgetPublishedCard(ctx, g.ID)) // nothing to forget is no error
	must(t, s.PublishCard(ctx, &switchboard.PublishedCard{AgentID: g.ID, Target: "http://127.0.0.1:9999", Card: []byte(`{"name":"three"}`)}))
	must(t, s.DeleteAgent(ctx, g.ID))
	if _, err := s.FindPublishedCard(ctx, g.ID); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("after the agent's deletion: %v, want ENOTFOUND", err)
	}
}

// testFrontMapInChange: a task change records the upstream's ids in its
// own transaction, and a change that fails records nothing.
func testFrontMapInChange(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "front")
	task := newTask(g, "peer-a", "ctx-1", "m1", time.Now())
	_, err := s.CreateTask(ctx, task, created(task, nil))
	must(t, err)
	m := switchboard.FrontTaskMap{TaskID: task.ID(), AgentID: g.ID, PeerID: task.PeerID, ContextID: task.A2A.ContextID,
		UpstreamTaskID: "up-task", UpstreamContextID: "up-ctx"}
	_, _, err = s.ModifyTask(ctx, task.ID(), func(*switchboard.Task) (*switchboard.TaskChange, error) {
		return nil, errors.New("refused")
	})
	if err == nil {
		t.Fatal("a refused change succeeded")
	}
	if _, err := s.FindFrontTask(ctx, task.ID()); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("after a refused change: %v, want ENOTFOUND", err)
	}
	_, _, err = s.ModifyTask(ctx, task.ID(), func(tk *switchboard.Task) (*switchboard.TaskChange, error) {
		tk.A2A.Status.State = a2a.TaskStateWorking
		ev := &a2a.TaskStatusUpdateEvent{TaskID: tk.ID(), ContextID: tk.A2A.ContextID, Status: tk.A2A.Status}
		return &switchboard.TaskChange{Events: []a2a.Event{ev}, FrontMap: &m}, nil
	})
	must(t, err)
	got, err := s.FindFrontTask(ctx, task.ID())
	must(t, err)
	if got.UpstreamTaskID != "up-task" || got.UpstreamContextID != "up-ctx" {
		t.Fatalf("mapped %+v", got)
	}
	up, err := s.FindFrontContext(ctx, g.ID, task.PeerID, task.A2A.ContextID)
	must(t, err)
	if up != "up-ctx" {
		t.Fatalf("context maps to %q", up)
	}
}

// testFrontTaskWithAnswer: a task created with its first answer applied
// (TaskChange.Created) is stored as answered, with the task as created
// for its first event and the answer's events after it, and the
// upstream's ids; its peer holds no open task for it.
func testFrontTaskWithAnswer(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "front")
	task := newTask(g, "peer-a", "ctx-1", "m1", time.Now())
	asCreated := task.A2A
	asCreated.History = slices.Clone(task.A2A.History)
	answer := &a2a.Message{ID: "a1", Role: a2a.MessageRoleAgent, TaskID: task.ID(), ContextID: "ctx-1", Parts: a2a.ContentParts{a2a.NewTextPart("done")}}
	task.A2A.History = append(task.A2A.History, answer)
	task.A2A.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted, Message: answer}
	ev := &a2a.TaskStatusUpdateEvent{TaskID: task.ID(), ContextID: "ctx-1", Status: task.A2A.Status}
	m := &switchboard.FrontTaskMap{TaskID: task.ID(), AgentID: g.ID, PeerID: task.PeerID, ContextID: "ctx-1", UpstreamTaskID: "up-task", UpstreamContextID: "up-ctx"}
	first, err := s.CreateTask(ctx, task, &switchboard.TaskChange{MessageID: "m1", Events: []a2a.Event{ev}, FrontMap: m, Created: &asCreated,
		OfferSent: true, MaxBytes: switchboard.MaxTaskBytes, Quota: &switchboard.PeerQuota{MaxOpenTasks: 1}})
	must(t, err)
	if first.Seq != 1 || task.Seq != 2 {
		t.Fatalf("first event %d, task at %d: want 1 and 2", first.Seq, task.Seq)
	}
	got, err := s.FindTaskByID(ctx, task.ID())
	must(t, err)
	if got.State() != a2a.TaskStateCompleted || len(got.A2A.History) != 2 || got.Seq != 2 || !got.Offered {
		t.Fatalf("stored %s with %d messages at %d, offered %v", got.State(), len(got.A2A.History), got.Seq, got.Offered)
	}
	events, err := s.FindTaskEvents(ctx, task.ID(), 0, 10)
	must(t, err)
	if len(events) != 2 {
		t.Fatalf("%d events, want 2", len(events))
	}
	if c, ok := events[0].Event.(*a2a.Task); !ok || c.Status.State != a2a.TaskStateSubmitted || len(c.History) != 1 {
		t.Fatalf("first event %T, want the task as created", events[0].Event)
	}
	if st, ok := events[1].Event.(*a2a.TaskStatusUpdateEvent); !ok || st.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("second event %T, want the answer's status", events[1].Event)
	}
	if up, err := s.FindFrontTask(ctx, task.ID()); err != nil || up.UpstreamTaskID != "up-task" {
		t.Fatalf("upstream ids %+v, %v", up, err)
	}
	// The finished task fills no open slot: the peer may start another.
	next := newTask(g, "peer-a", "ctx-2", "m2", time.Now())
	_, err = s.CreateTask(ctx, next, &switchboard.TaskChange{MessageID: "m2", Quota: &switchboard.PeerQuota{MaxOpenTasks: 1}})
	must(t, err)
	// The message id is recorded: the same message again is a duplicate.
	again := newTask(g, "peer-a", "ctx-1", "m1", time.Now())
	if _, err := s.CreateTask(ctx, again, created(again, nil)); !errors.Is(err, switchboard.ErrDuplicateMessage) {
		t.Fatalf("the same message again: %v, want ErrDuplicateMessage", err)
	}
	// The quota is checked as the task was before it answered, open: with
	// the peer's one open slot taken, a task that finished in its first
	// answer is refused all the same, and nothing of it is written.
	late := newTask(g, "peer-a", "ctx-3", "m3", time.Now())
	lateCreated := late.A2A
	lateCreated.History = slices.Clone(late.A2A.History)
	late.A2A.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted}
	lateEv := &a2a.TaskStatusUpdateEvent{TaskID: late.ID(), ContextID: "ctx-3", Status: late.A2A.Status}
	_, err = s.CreateTask(ctx, late, &switchboard.TaskChange{MessageID: "m3", Events: []a2a.Event{lateEv}, Created: &lateCreated,
		OfferSent: true, MaxBytes: switchboard.MaxTaskBytes, Quota: &switchboard.PeerQuota{MaxOpenTasks: 1}})
	var qe *switchboard.QuotaError
	if !errors.As(err, &qe) || !qe.TooMany {
		t.Fatalf("a finished task past the open quota: %v, want a QuotaError for too many", err)
	}
	if _, err := s.FindTaskByMessageID(ctx, g.ID, late.PeerID, "m3"); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("the refused task's message: %v, want ENOTFOUND", err)
	}
	if open, _, err := s.PeerUsage(ctx, g.ID, late.PeerID); err != nil || open != 1 {
		t.Fatalf("the peer holds %d open tasks (%v), want 1", open, err)
	}
}

// testFrontOfferSent: a delivery written offered and already sent stays
// offered although the agent has older work queued, which would queue an
// offered one that was not sent.
func testFrontOfferSent(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "front")
	now := time.Now().UTC()
	delivery := func(task *switchboard.Task, state switchboard.DeliveryState) *switchboard.Delivery {
		d := &switchboard.Delivery{ID: "dlv-" + string(task.ID()), TaskID: task.ID(), AgentID: g.ID, Kind: switchboard.DeliverTask,
			MessageID: task.A2A.History[0].ID, State: state, Deadline: now.Add(time.Hour), NextAttemptAt: now, CreatedAt: now}
		if state == switchboard.DeliveryOffered {
			d.Holder, d.Attempts, d.OfferedAt, d.NextAttemptAt = "dispatch/front/x", 1, &now, now.Add(time.Minute)
		}
		return d
	}
	old := newTask(g, "peer-a", "ctx-1", "m1", now)
	_, err := s.CreateTask(ctx, old, &switchboard.TaskChange{MessageID: "m1", NewDeliveries: []*switchboard.Delivery{delivery(old, switchboard.DeliveryQueued)}})
	must(t, err)
	for _, sent := range []bool{false, true} {
		task := newTask(g, "peer-a", "ctx-1", fmt.Sprintf("m-%v", sent), now)
		d := delivery(task, switchboard.DeliveryOffered)
		_, err := s.CreateTask(ctx, task, &switchboard.TaskChange{MessageID: task.A2A.History[0].ID, NewDeliveries: []*switchboard.Delivery{d}, OfferSent: sent})
		must(t, err)
		id := task.ID()
		ds, err := s.FindDeliveries(ctx, switchboard.DeliveryFilter{TaskID: &id})
		must(t, err)
		want := switchboard.DeliveryQueued
		if sent {
			want = switchboard.DeliveryOffered
		}
		if len(ds) != 1 || ds[0].State != want || d.State != want || task.Offered != sent {
			t.Fatalf("sent %v: stored %+v, given %s, task offered %v; want %s", sent, ds, d.State, task.Offered, want)
		}
	}
}

func testFrontPutFind(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "front")
	if _, err := s.FindFront(ctx, g.ID); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("FindFront before PutFront: %v, want ENOTFOUND", err)
	}
	if err := s.SetFrontCredentials(ctx, g.ID, switchboard.FrontCredentials{Bearer: "x"}); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("credentials without a front: %v, want ENOTFOUND", err)
	}
	if err := s.PutFront(ctx, "no-such-agent", "https://up.example/a2a", ""); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("PutFront of a missing agent: %v, want ENOTFOUND", err)
	}
	must(t, s.PutFront(ctx, g.ID, "https://up.example/a2a", ""))
	creds := switchboard.FrontCredentials{Bearer: "up-secret", Headers: map[string]string{"CF-Access-Client-Id": "id", "CF-Access-Client-Secret": "s"}}
	must(t, s.SetFrontCredentials(ctx, g.ID, creds))
	must(t, s.RecordFrontFailure(ctx, g.ID, &switchboard.FrontFailure{Reason: switchboard.FrontAuthRejected, Status: 401, Method: "SendMessage"}))
	f, err := s.FindFront(ctx, g.ID)
	must(t, err)
	if f.Upstream != "https://up.example/a2a" || f.Credentials.Bearer != "up-secret" || f.Credentials.Headers["CF-Access-Client-Secret"] != "s" {
		t.Fatalf("found %+v", f)
	}
	if f.LastFailure == nil || f.LastFailure.Reason != switchboard.FrontAuthRejected || f.LastFailure.Status != 401 {
		t.Fatalf("last failure %+v", f.LastFailure)
	}
	// The same upstream again keeps the credentials and the failure; a new
	// one clears the failure, and new credentials do too.
	must(t, s.PutFront(ctx, g.ID, "https://up.example/a2a", "https://up.example/card.json"))
	f, err = s.FindFront(ctx, g.ID)
	must(t, err)
	if f.CardURL != "https://up.example/card.json" || f.Credentials.Bearer != "up-secret" || f.LastFailure == nil {
		t.Fatalf("after setting the card URL: %+v", f)
	}
	must(t, s.PutFront(ctx, g.ID, "https://other.example/a2a", ""))
	f, err = s.FindFront(ctx, g.ID)
	must(t, err)
	if f.LastFailure != nil || f.Credentials.Bearer != "up-secret" {
		t.Fatalf("after a new upstream: %+v", f)
	}
	must(t, s.SetFrontCredentials(ctx, g.ID, switchboard.FrontCredentials{}))
	f, err = s.FindFront(ctx, g.ID)
	must(t, err)
	if !f.Credentials.Empty() {
		t.Fatalf("credentials cleared, found %+v", f.Credentials)
	}
	must(t, s.DeleteAgent(ctx, g.ID))
	if _, err := s.FindFront(ctx, g.ID); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("FindFront after the agent's deletion: %v, want ENOTFOUND", err)
	}
}

func testFrontMaps(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "front")
	must(t, s.PutFront(ctx, g.ID, "https://up.example/a2a", ""))
	if _, err := s.FindFrontTask(ctx, "task-1"); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("unmapped task: %v, want ENOTFOUND", err)
	}
	must(t, s.MapFrontTask(ctx, switchboard.FrontTaskMap{TaskID: "task-1", AgentID: g.ID, PeerID: "peer-a", ContextID: "ctx-1"}))
	must(t, s.MapFrontTask(ctx, switchboard.FrontTaskMap{TaskID: "task-1", AgentID: g.ID, PeerID: "peer-a", ContextID: "ctx-1",
		UpstreamTaskID: "up-1", UpstreamContextID: "up-ctx-1"}))
	// The first ids the upstream named stand.
	must(t, s.MapFrontTask(ctx, switchboard.FrontTaskMap{TaskID: "task-1", AgentID: g.ID, PeerID: "peer-a", ContextID: "ctx-1",
		UpstreamTaskID: "up-other", UpstreamContextID: "up-ctx-other"}))
	m, err := s.FindFrontTask(ctx, "task-1")
	must(t, err)
	if m.UpstreamTaskID != "up-1" || m.UpstreamContextID != "up-ctx-1" || m.AgentID != g.ID {
		t.Fatalf("task map %+v", m)
	}
	up, err := s.FindFrontContext(ctx, g.ID, "peer-a", "ctx-1")
	must(t, err)
	if up != "up-ctx-1" {
		t.Fatalf("peer-a's context maps to %q, want up-ctx-1", up)
	}
	// Another peer naming the same context id has none.
	up, err = s.FindFrontContext(ctx, g.ID, "peer-b", "ctx-1")
	must(t, err)
	if up != "" {
		t.Fatalf("peer-b's ctx-1 maps to %q, want nothing", up)
	}
	must(t, s.DeleteAgent(ctx, g.ID))
	if _, err := s.FindFrontTask(ctx, "task-1"); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("task map after the agent's deletion: %v, want ENOTFOUND", err)
	}
}
