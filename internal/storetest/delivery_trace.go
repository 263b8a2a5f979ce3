package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// testDeliveryTraceParent checks that a delivery keeps the trace context
// it was written with, whichever way it was written (with its new task,
// queued or offered, or with a change of the task), through claims,
// releases and listings: the trace goes on with it on the instance that
// offers it.
func testDeliveryTraceParent(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	now := time.Now().Add(-time.Minute).UTC()
	const tpQueued = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	const tpOffered = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	const tpFollow = "00-4bf92f3577b34da6a3ce929d0e0e4736-1111111111111111-00"

	task := newTask(g, "bob", "c", "m1", now)
	change := withQueuedDelivery(task, now)
	change.NewDeliveries[0].TraceParent = tpQueued
	_, err := s.CreateTask(ctx, task, change)
	must(t, err)
	claimed, err := s.ClaimDeliveries(ctx, g.ID, "conn-a", 10, time.Minute)
	must(t, err)
	if len(claimed) != 1 || claimed[0].TraceParent != tpQueued {
		t.Fatalf("claimed %+v, want the queued delivery with its trace context %s", claimed, tpQueued)
	}
	must(t, ackAll(s, claimed))

	offeredTask := newTask(g, "bob", "c", "m2", now)
	d := &switchboard.Delivery{
		ID: switchboard.NewID(), TaskID: offeredTask.ID(), AgentID: g.ID, Kind: switchboard.DeliverTask, MessageID: "m2",
		State: switchboard.DeliveryOffered, Holder: "conn-a", Attempts: 1, OfferedAt: &now,
		Deadline: now.Add(time.Hour), NextAttemptAt: now.Add(time.Minute), CreatedAt: now, TraceParent: tpOffered,
	}
	oc := created(offeredTask, nil)
	oc.NewDeliveries = []*switchboard.Delivery{d}
	_, err = s.CreateTask(ctx, offeredTask, oc)
	must(t, err)
	// Given back unacknowledged and claimed again, it keeps its context.
	if _, err := s.ReleaseDeliveries(ctx, []string{"conn-a"}); err != nil {
		t.Fatal(err)
	}
	claimed, err = s.ClaimDeliveries(ctx, g.ID, "conn-b", 10, time.Minute)
	must(t, err)
	if len(claimed) != 1 || claimed[0].ID != d.ID || claimed[0].TraceParent != tpOffered {
		t.Fatalf("claimed %+v, want the released offer %s with its trace context", claimed, d.ID)
	}
	must(t, ackAll(s, claimed))

	f := &switchboard.Delivery{
		ID: switchboard.NewID(), TaskID: task.ID(), AgentID: g.ID, Kind: switchboard.DeliverMessage, MessageID: "f1",
		State: switchboard.DeliveryQueued, Deadline: now.Add(time.Hour), NextAttemptAt: now, CreatedAt: now, TraceParent: tpFollow,
	}
	_, _, err = s.ModifyTask(ctx, task.ID(), func(*switchboard.Task) (*switchboard.TaskChange, error) {
		return &switchboard.TaskChange{NewDeliveries: []*switchboard.Delivery{f}}, nil
	})
	must(t, err)
	tid := task.ID()
	all, err := s.FindDeliveries(ctx, switchboard.DeliveryFilter{TaskID: &tid})
	must(t, err)
	got := map[string]string{}
	for _, x := range all {
		got[x.ID] = x.TraceParent
	}
	if got[f.ID] != tpFollow || got[change.NewDeliveries[0].ID] != tpQueued {
		t.Fatalf("listed trace contexts %v, want %s for the follow-up and %s for the task", got, tpFollow, tpQueued)
	}

	// Without one it stays empty.
	_, plain := queueTask(t, s, g, "m3", now)
	claimed, err = s.ClaimDeliveries(ctx, g.ID, "conn-c", 10, time.Minute)
	must(t, err)
	for _, x := range claimed {
		if x.ID == plain.ID && x.TraceParent != "" {
			t.Fatalf("a delivery written without a trace context claimed with %q", x.TraceParent)
		}
	}
}

// testPushTraceParent checks that a push keeps the trace context of the
// change that queued it, as claimed and as listed, and none without one.
func testPushTraceParent(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	task := pushTask(t, s, g, "m1", "cfg")
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	_, _, err := s.ModifyTask(ctx, task.ID(), func(x *switchboard.Task) (*switchboard.TaskChange, error) {
		now := time.Now().UTC()
		x.A2A.Status = a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: &now}
		ev := &a2a.TaskStatusUpdateEvent{TaskID: x.ID(), ContextID: x.A2A.ContextID, Status: x.A2A.Status}
		return &switchboard.TaskChange{Events: []a2a.Event{ev}, TraceParent: tp}, nil
	})
	must(t, err)
	ps := claimAll(t, s, "pusher", time.Now().Add(time.Second))
	if len(ps) != 1 || ps[0].TraceParent != tp {
		t.Fatalf("claimed %+v, want one push with trace context %s", ps, tp)
	}
	listed, err := s.FindPushes(ctx, task.ID())
	must(t, err)
	if len(listed) != 1 || listed[0].TraceParent != tp {
		t.Fatalf("listed %+v, want one push with trace context %s", listed, tp)
	}

	plain := pushTask(t, s, g, "m2", "cfg")
	setState(t, s, plain.ID(), a2a.TaskStateWorking, "")
	for _, p := range claimAll(t, s, "pusher", time.Now().Add(time.Second)) {
		if p.TaskID == plain.ID() && p.TraceParent != "" {
			t.Fatalf("a push queued without a trace context claimed with %q", p.TraceParent)
		}
	}
}

// testWakeTraceParent checks that a wake keeps the trace context of the
// latest request merged into it, and none without one.
func testWakeTraceParent(t *testing.T, s Store, c *Clock) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "sleeper")
	must(t, s.SaveWakeConfig(ctx, wakeConfig(g, time.Second, 0, c.Now())))
	const tp1 = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	const tp2 = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for i, tp := range []string{tp1, tp2, ""} {
		ctxID := "c1"
		if tp == "" {
			ctxID = "c2"
		}
		task := newTask(g, "bob", ctxID, fmt.Sprint("m", i), c.Now())
		change := created(task, nil)
		change.Wake = &switchboard.WakeRequest{AgentID: g.ID, ContextID: ctxID, TaskID: task.ID(), Kind: switchboard.WakeInbound,
			From: "bob", Preview: "hello", TraceParent: tp}
		_, err := s.CreateTask(ctx, task, change)
		must(t, err)
	}
	c.Add(2 * time.Second)
	got := map[string]string{}
	for _, w := range claimWakes(t, s, "h1") {
		got[w.ContextID] = w.TraceParent
	}
	if len(got) != 2 || got["c1"] != tp2 || got["c2"] != "" {
		t.Fatalf("claimed wakes' trace contexts %v, want c1: the latest request's %s, c2: none", got, tp2)
	}
}
