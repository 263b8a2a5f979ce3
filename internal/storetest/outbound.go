package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/outbox"
)

// outboundTests are the contract of OutboundStore.
var outboundTests = map[string]func(*testing.T, Store){
	"OutboundCreateFindModify": testOutboundCreateFindModify,
	"OutboundFilters":          testOutboundFilters,
	"OutboundModifyConcurrent": testOutboundModifyConcurrent,
	"OutboundModifyQueuesWake": testOutboundModifyQueuesWake,
}

func newOutbound(g *switchboard.Agent, contextID string, at time.Time) *switchboard.Outbound {
	at = at.UTC()
	return &switchboard.Outbound{
		ID: switchboard.NewID(), AgentID: g.ID, Target: "bob", Endpoint: "https://bob.example/a2a",
		Protocol: switchboard.ProtocolV1, ContextID: contextID, MessageID: "m-" + switchboard.NewID(), Text: "hello bob",
		CreatedAt: at, UpdatedAt: at,
	}
}

func testOutboundCreateFindModify(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "alice")
	now := time.Now().UTC().Truncate(time.Microsecond)

	orphan := newOutbound(&switchboard.Agent{ID: switchboard.NewID()}, "c1", now)
	wantCode(t, s.CreateOutbound(ctx, orphan), switchboard.ENOTFOUND)

	o := newOutbound(g, "c1", now)
	o.PushTokenHash = switchboard.HashToken("push-secret-0123456789")
	must(t, s.CreateOutbound(ctx, o))
	got, err := s.FindOutboundByID(ctx, o.ID)
	must(t, err)
	if got.AgentID != g.ID || got.Target != "bob" || got.Endpoint != o.Endpoint || got.Protocol != switchboard.ProtocolV1 ||
		got.ContextID != "c1" || got.Text != "hello bob" || got.MessageID != o.MessageID || got.TaskID != "" ||
		got.PushTokenHash != o.PushTokenHash || !got.CreatedAt.Equal(now) || got.Task != nil {
		t.Fatalf("found %+v", got)
	}
	_, err = s.FindOutboundByID(ctx, switchboard.NewID())
	wantCode(t, err, switchboard.ENOTFOUND)

	// A change is written whole: task, state, updates.
	task := &a2a.Task{ID: "remote-1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking,
		Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("on it"))}}
	later := now.Add(time.Second)
	upd, _, err := s.ModifyOutbound(ctx, o.ID, func(o *switchboard.Outbound) (*switchboard.WakeRequest, error) {
		outbox.ApplyTask(o, task, switchboard.OutboundFromSend, later)
		return nil, nil
	})
	must(t, err)
	got, err = s.FindOutboundByID(ctx, o.ID)
	must(t, err)
	if got.TaskID != "remote-1" || got.State != a2a.TaskStateWorking || got.Task == nil || got.Task.ID != "remote-1" ||
		len(got.Updates) != 1 || got.Updates[0].Text != "on it" || !got.UpdatedAt.Equal(later) || upd.TaskID != "remote-1" {
		t.Fatalf("after modify %+v", got)
	}

	// More than MaxOutboundUpdates changes keep the last ones.
	for i := range switchboard.MaxOutboundUpdates + 5 {
		_, _, err := s.ModifyOutbound(ctx, o.ID, func(o *switchboard.Outbound) (*switchboard.WakeRequest, error) {
			outbox.ApplyEvent(o, &a2a.TaskStatusUpdateEvent{TaskID: "remote-1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking,
				Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(fmt.Sprint("step ", i)))}}, switchboard.OutboundFromPush, later.Add(time.Duration(i+1)*time.Second))
			return nil, nil
		})
		must(t, err)
	}
	got, err = s.FindOutboundByID(ctx, o.ID)
	must(t, err)
	if n := len(got.Updates); n != switchboard.MaxOutboundUpdates || got.Updates[n-1].Text != fmt.Sprint("step ", switchboard.MaxOutboundUpdates+4) {
		t.Fatalf("updates kept: %d, last %+v", n, got.Updates[n-1])
	}

	// fn's error writes nothing.
	boom := errors.New("boom")
	_, _, err = s.ModifyOutbound(ctx, o.ID, func(o *switchboard.Outbound) (*switchboard.WakeRequest, error) {
		o.State = a2a.TaskStateFailed
		return nil, boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("modify error = %v", err)
	}
	if again, _ := s.FindOutboundByID(ctx, o.ID); again.State != a2a.TaskStateWorking {
		t.Fatalf("a failed modify wrote: %s", again.State)
	}
	_, _, err = s.ModifyOutbound(ctx, switchboard.NewID(), func(*switchboard.Outbound) (*switchboard.WakeRequest, error) { return nil, nil })
	wantCode(t, err, switchboard.ENOTFOUND)

	// Deleting the agent deletes its records.
	must(t, s.DeleteAgent(ctx, g.ID))
	_, err = s.FindOutboundByID(ctx, o.ID)
	wantCode(t, err, switchboard.ENOTFOUND)
}

func testOutboundFilters(t *testing.T, s Store) {
	ctx := context.Background()
	acct := newAccount(t, s, "alice")
	g := newAgent(t, s, acct, "alice")
	other := newAgent(t, s, acct, "carol")
	base := time.Now().UTC().Add(-time.Hour)

	a := newOutbound(g, "c1", base)
	b := newOutbound(g, "c1", base.Add(time.Second))
	b.PushTokenHash = switchboard.HashToken("token-b-0123456789")
	c := newOutbound(g, "c2", base.Add(2*time.Second))
	d := newOutbound(other, "c1", base.Add(3*time.Second))
	d.PushTokenHash = b.PushTokenHash
	e := newOutbound(g, "c1", base.Add(5*time.Second)) // created after b, updated before a
	for _, o := range []*switchboard.Outbound{a, b, c, d, e} {
		must(t, s.CreateOutbound(ctx, o))
	}
	_, _, err := s.ModifyOutbound(ctx, a.ID, func(o *switchboard.Outbound) (*switchboard.WakeRequest, error) {
		outbox.ApplyTask(o, &a2a.Task{ID: "t-a", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}, switchboard.OutboundFromPoll, base.Add(10*time.Second))
		return nil, nil
	})
	must(t, err)

	ids := func(f switchboard.OutboundFilter) []string {
		t.Helper()
		all, err := s.FindOutbounds(ctx, f)
		must(t, err)
		var out []string
		for _, o := range all {
			out = append(out, o.ID)
		}
		return out
	}
	check := func(name string, got []string, want ...string) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: got %v, want %v", name, got, want)
		}
	}
	// Default order: newest update first (a was updated last).
	check("agent", ids(switchboard.OutboundFilter{AgentID: g.ID}), a.ID, e.ID, c.ID, b.ID)
	check("limit", ids(switchboard.OutboundFilter{AgentID: g.ID, Limit: 1}), a.ID)
	check("context oldest first", ids(switchboard.OutboundFilter{AgentID: g.ID, ContextID: "c1", OldestFirst: true}), a.ID, b.ID, e.ID)
	check("context newest update first", ids(switchboard.OutboundFilter{AgentID: g.ID, ContextID: "c1"}), a.ID, e.ID, b.ID)
	check("context oldest first, limit", ids(switchboard.OutboundFilter{AgentID: g.ID, ContextID: "c1", OldestFirst: true, Limit: 2}), a.ID, b.ID)
	check("context, limit", ids(switchboard.OutboundFilter{AgentID: g.ID, ContextID: "c1", Limit: 2}), a.ID, e.ID)
	check("task", ids(switchboard.OutboundFilter{AgentID: g.ID, TaskID: "t-a"}), a.ID)
	check("task of another agent", ids(switchboard.OutboundFilter{AgentID: other.ID, TaskID: "t-a"}))
	check("pending by push hash", ids(switchboard.OutboundFilter{AgentID: g.ID, Pending: true, PushTokenHash: b.PushTokenHash}), b.ID)
	check("pending", ids(switchboard.OutboundFilter{AgentID: g.ID, Pending: true, OldestFirst: true}), b.ID, c.ID, e.ID)
}

// testOutboundModifyConcurrent: changes to one record never interleave, so
// none is lost (pushes may arrive together).
func testOutboundModifyConcurrent(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "alice")
	o := newOutbound(g, "c1", time.Now())
	must(t, s.CreateOutbound(ctx, o))
	const n = 10
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := s.ModifyOutbound(ctx, o.ID, func(o *switchboard.Outbound) (*switchboard.WakeRequest, error) {
				outbox.ApplyEvent(o, &a2a.Message{ID: fmt.Sprint(i), TaskID: "r1", Parts: a2a.ContentParts{a2a.NewTextPart(fmt.Sprint(i))}},
					switchboard.OutboundFromPush, time.Now())
				return nil, nil
			})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, err)
	}
	got, err := s.FindOutboundByID(ctx, o.ID)
	must(t, err)
	if len(got.Updates) != n {
		t.Fatalf("%d updates kept of %d concurrent changes", len(got.Updates), n)
	}
}

// testOutboundModifyQueuesWake: a wake request returned by ModifyOutbound's
// function is queued in the same transaction as the change, only for an
// agent with a wake configuration, and not at all when the change fails.
func testOutboundModifyQueuesWake(t *testing.T, s Store) {
	ctx := context.Background()
	acct := newAccount(t, s, "alice")
	g := newAgent(t, s, acct, "alice")
	sleeper := newAgent(t, s, acct, "carol")
	now := time.Now().UTC()
	must(t, s.SaveWakeConfig(ctx, wakeConfig(sleeper, 0, 0, now)))
	wake := func(g *switchboard.Agent) *switchboard.WakeRequest {
		return &switchboard.WakeRequest{AgentID: g.ID, ContextID: "c1", TaskID: "remote-1", Kind: switchboard.WakeOutboundUpdate,
			From: "bob", Preview: "[update on outbound task: working] on it"}
	}
	push := func(o *switchboard.Outbound) {
		outbox.ApplyEvent(o, &a2a.TaskStatusUpdateEvent{TaskID: "remote-1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}},
			switchboard.OutboundFromPush, now)
	}

	// No wake configuration: the change is written, no wake is queued.
	o := newOutbound(g, "c1", now)
	must(t, s.CreateOutbound(ctx, o))
	got, queued, err := s.ModifyOutbound(ctx, o.ID, func(o *switchboard.Outbound) (*switchboard.WakeRequest, error) {
		push(o)
		return wake(g), nil
	})
	must(t, err)
	if queued || got.State != a2a.TaskStateWorking {
		t.Fatalf("without a wake configuration: queued %v, state %s", queued, got.State)
	}
	if ws, err := s.FindWakes(ctx, g.ID, 10); err != nil || len(ws) != 0 {
		t.Fatalf("wakes of an agent without configuration: %v %v", ws, err)
	}

	// A failed change queues nothing.
	o = newOutbound(sleeper, "c1", now)
	must(t, s.CreateOutbound(ctx, o))
	boom := errors.New("boom")
	_, queued, err = s.ModifyOutbound(ctx, o.ID, func(o *switchboard.Outbound) (*switchboard.WakeRequest, error) {
		push(o)
		return wake(sleeper), boom
	})
	if !errors.Is(err, boom) || queued {
		t.Fatalf("failed change: queued %v, err %v", queued, err)
	}
	if ws, err := s.FindWakes(ctx, sleeper.ID, 10); err != nil || len(ws) != 0 {
		t.Fatalf("a failed change queued wakes: %v %v", ws, err)
	}

	// With a configuration: the change and its wake are written together;
	// a second change joins the pending wake.
	for i := range 2 {
		_, queued, err = s.ModifyOutbound(ctx, o.ID, func(o *switchboard.Outbound) (*switchboard.WakeRequest, error) {
			push(o)
			return wake(sleeper), nil
		})
		must(t, err)
		if !queued {
			t.Fatalf("change %d: no wake queued", i)
		}
	}
	ws, err := s.FindWakes(ctx, sleeper.ID, 10)
	must(t, err)
	if len(ws) != 1 || ws[0].Kind != switchboard.WakeOutboundUpdate || ws[0].ContextID != "c1" || ws[0].Count != 2 ||
		ws[0].State != switchboard.WakePending || ws[0].From != "bob" {
		t.Fatalf("wakes: %+v", ws)
	}
}
