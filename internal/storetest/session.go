package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// testSessions: an agent's session is replaced by a newer connection (whose
// predecessor's offers go back to the queue), renewed only by its holder,
// closed only by its holder, and gone with the agent.
func testSessions(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	now := time.Now().UTC().Truncate(time.Millisecond)
	if _, err := s.FindSession(ctx, g.ID); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("session of a new agent: %v", err)
	}
	first := &switchboard.AgentSession{AgentID: g.ID, Holder: "conn-1", InstanceID: "i1", Client: "c/1",
		ConnectedAt: now, ExpiresAt: now.Add(time.Minute)}
	replaced, err := s.OpenSession(ctx, first)
	must(t, err)
	if replaced != "" {
		t.Fatalf("first session replaced %q", replaced)
	}
	_, d := queueTask(t, s, g, "m1", now.Add(-time.Second))
	idle := newAgent(t, s, newAccount(t, s, "bob"), "idle")
	unknown := make([]string, 0, 1200) // more than one statement's list
	for i := range 1200 {
		unknown = append(unknown, fmt.Sprintf("no-such-agent-%d", i))
	}
	due, err := s.AgentsWithDueWork(ctx, append(unknown, idle.ID, g.ID))
	must(t, err)
	if !slices.Equal(due, []string{g.ID}) {
		t.Fatalf("agents with due work: %v, want only %s", due, g.ID)
	}
	if none, err := s.AgentsWithDueWork(ctx, nil); err != nil || len(none) != 0 {
		t.Fatalf("agents with due work among none: %v %v", none, err)
	}
	claimed, err := s.ClaimDeliveries(ctx, g.ID, "conn-1", 10, time.Minute)
	must(t, err)
	if len(claimed) != 1 {
		t.Fatalf("claimed %d", len(claimed))
	}
	if due, err := s.AgentsWithDueWork(ctx, []string{g.ID}); err != nil || len(due) != 0 {
		t.Fatalf("agents with due work after the claim: %v %v", due, err)
	}

	second := &switchboard.AgentSession{AgentID: g.ID, Holder: "conn-2", InstanceID: "i2",
		ConnectedAt: now.Add(time.Second), ExpiresAt: now.Add(2 * time.Minute)}
	replaced, err = s.OpenSession(ctx, second)
	must(t, err)
	if replaced != "conn-1" {
		t.Fatalf("replaced %q, want conn-1", replaced)
	}
	ds, err := s.FindDeliveries(ctx, switchboard.DeliveryFilter{AgentID: &g.ID})
	must(t, err)
	if len(ds) != 1 || ds[0].ID != d.ID || ds[0].State != switchboard.DeliveryQueued || ds[0].Holder != "" {
		t.Fatalf("the replaced connection's offer: %+v", ds[0])
	}
	got, err := s.FindSession(ctx, g.ID)
	must(t, err)
	if got.Holder != "conn-2" || got.InstanceID != "i2" || !got.ExpiresAt.Equal(second.ExpiresAt) || !got.Live(now) {
		t.Fatalf("session %+v", got)
	}
	if replaced, err := s.OpenSession(ctx, second); err != nil || replaced != "" {
		t.Fatalf("reopening one's own session: %q %v", replaced, err)
	}

	if renewed, err := s.RenewSessions(ctx, []string{"conn-1"}, now.Add(time.Hour)); err != nil || len(renewed) != 0 {
		t.Fatalf("the replaced connection renewed: %v %v", renewed, err)
	}
	later := now.Add(3 * time.Minute)
	if renewed, err := s.RenewSessions(ctx, []string{"conn-2"}, later); err != nil || !slices.Equal(renewed, []string{"conn-2"}) {
		t.Fatalf("renew: %v %v", renewed, err)
	}
	got, _ = s.FindSession(ctx, g.ID)
	if !got.ExpiresAt.Equal(later) || got.Live(later) {
		t.Fatalf("renewed session %+v", got)
	}
	evenLater := later.Add(time.Minute)
	renewed, err := s.RenewSessions(ctx, []string{"conn-1", "conn-2", "nobody"}, evenLater)
	must(t, err)
	if !slices.Equal(renewed, []string{"conn-2"}) {
		t.Fatalf("RenewSessions renewed %v, want [conn-2]", renewed)
	}
	got, _ = s.FindSession(ctx, g.ID)
	if !got.ExpiresAt.Equal(evenLater) {
		t.Fatalf("session after RenewSessions: %+v", got)
	}
	many := make([]string, 1200) // more than one statement's worth
	for i := range many {
		many[i] = fmt.Sprintf("gone-%d", i)
	}
	many[1100] = "conn-2"
	if renewed, err := s.RenewSessions(ctx, many, evenLater); err != nil || !slices.Equal(renewed, []string{"conn-2"}) {
		t.Fatalf("RenewSessions of 1,200 holders: %v %v", renewed, err)
	}
	if renewed, err := s.RenewSessions(ctx, nil, evenLater); err != nil || len(renewed) != 0 {
		t.Fatalf("RenewSessions of nobody: %v %v", renewed, err)
	}

	must(t, s.CloseSessions(ctx, []string{"conn-1"})) // not its session: nothing happens
	if _, err := s.FindSession(ctx, g.ID); err != nil {
		t.Fatalf("closed by a stale connection: %v", err)
	}
	must(t, s.CloseSessions(ctx, nil))
	must(t, s.CloseSessions(ctx, many)) // conn-2 among 1,200 holders, past one statement's worth
	if _, err := s.FindSession(ctx, g.ID); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("after close: %v", err)
	}

	_, err = s.OpenSession(ctx, first)
	must(t, err)
	must(t, s.DeleteAgent(ctx, g.ID))
	if _, err := s.FindSession(ctx, g.ID); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("after the agent was deleted: %v", err)
	}
}

// testConnectSession: a new connection's session replaces the old one's,
// whose offer goes back to the queue, and the work the agent acknowledged
// but no longer holds is queued again, in one call.
func testConnectSession(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	now := time.Now().UTC().Truncate(time.Millisecond)
	old := &switchboard.AgentSession{AgentID: g.ID, Holder: "c1", InstanceID: "i1", ConnectedAt: now, ExpiresAt: now.Add(time.Minute)}
	_, err := s.OpenSession(ctx, old)
	must(t, err)
	acked, _ := queueTask(t, s, g, "m1", now.Add(-time.Minute))
	got, err := s.ClaimDeliveries(ctx, g.ID, "c1", 1, time.Minute)
	must(t, err)
	must(t, ackAll(s, got))
	offered, _ := queueTask(t, s, g, "m2", now.Add(-time.Minute))
	got, err = s.ClaimDeliveries(ctx, g.ID, "c1", 1, time.Minute)
	must(t, err)
	if len(got) != 1 || got[0].TaskID != offered.ID() {
		t.Fatalf("offered %v", ids(got))
	}

	next := &switchboard.AgentSession{AgentID: g.ID, Holder: "c2", InstanceID: "i2", ConnectedAt: now, ExpiresAt: now.Add(time.Minute)}
	replaced, requeued, err := s.ConnectSession(ctx, next, nil, now.Add(time.Hour))
	must(t, err)
	if replaced != "c1" || requeued != 1 {
		t.Fatalf("replaced %q, requeued %d; want c1 and 1 (the acknowledged task)", replaced, requeued)
	}
	sess, err := s.FindSession(ctx, g.ID)
	must(t, err)
	if sess.Holder != "c2" {
		t.Fatalf("session held by %q", sess.Holder)
	}
	got, err = s.ClaimDeliveries(ctx, g.ID, "c2", 10, time.Minute)
	must(t, err)
	var tasks []string
	for _, d := range got {
		tasks = append(tasks, string(d.TaskID))
	}
	slices.Sort(tasks)
	want := []string{string(acked.ID()), string(offered.ID())}
	slices.Sort(want)
	if !slices.Equal(tasks, want) {
		t.Fatalf("c2 was offered %v, want both tasks %v", tasks, want)
	}

	// The same connection saying hello again, holding its task, changes
	// nothing.
	replaced, requeued, err = s.ConnectSession(ctx, next, []a2a.TaskID{acked.ID(), offered.ID()}, now.Add(time.Hour))
	must(t, err)
	if replaced != "" || requeued != 0 {
		t.Fatalf("again: replaced %q, requeued %d", replaced, requeued)
	}
}
