package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// deliveryTests are the contract of switchboard.DeliveryStore.
var deliveryTests = map[string]func(*testing.T, Store){
	"DeliveryClaimAckRelease":       testDeliveryClaimAckRelease,
	"DeliveryFollowUpAfterTask":     testDeliveryFollowUpAfterTask,
	"DeliveryNewTasksHeldBack":      testDeliveryNewTasksHeldBack,
	"DeliveryLeaseAndExpiry":        testDeliveryLeaseAndExpiry,
	"DeliveryRequeueUnheld":         testDeliveryRequeueUnheld,
	"DeliveryClosedWhenTaskEnds":    testDeliveryClosedWhenTaskEnds,
	"DeliveryDueAcrossAgents":       testDeliveryDueAcrossAgents,
	"DeliveryFollowsAModeChange":    testDeliveryFollowsAModeChange,
	"DeliveryModeChangeWhileQueued": testDeliveryModeChangeWhileQueued,
	"DeliveryRetryWaitsUntilDueAt":  testDeliveryRetry,
	"DeliveryClaimConcurrent":       testDeliveryClaimConcurrent,
	"DeliveryLateAck":               testDeliveryLateAck,
	"DeliveryRequeueFreshDeadline":  testDeliveryRequeueFreshDeadline,
	"DeliveryDuePerAgentCap":        testDeliveryDuePerAgentCap,
	"DeliveryDueInDueOrder":         testDeliveryDueInDueOrder,
	"DeliveryCreatedOffered":        testDeliveryCreatedOffered,
	"DeliveryClaimWhileTaskChanges": testDeliveryClaimWhileTaskChanges,
	"DeliveryTraceParent":           testDeliveryTraceParent,
}

// queueTask stores a new task for the agent with a queued delivery of it.
func queueTask(t *testing.T, s Store, g *switchboard.Agent, messageID string, at time.Time) (*switchboard.Task, *switchboard.Delivery) {
	t.Helper()
	task := newTask(g, "bob", "c", messageID, at)
	change := withQueuedDelivery(task, at)
	_, err := s.CreateTask(context.Background(), task, change)
	must(t, err)
	return task, change.NewDeliveries[0]
}

// withQueuedDelivery returns task's creation change (created) with a
// delivery of the task, queued at at.
func withQueuedDelivery(task *switchboard.Task, at time.Time) *switchboard.TaskChange {
	change := created(task, nil)
	change.NewDeliveries = []*switchboard.Delivery{{
		ID: switchboard.NewID(), TaskID: task.ID(), AgentID: task.AgentID, Kind: switchboard.DeliverTask,
		MessageID: change.MessageID, State: switchboard.DeliveryQueued, Deadline: at.Add(time.Hour), NextAttemptAt: at, CreatedAt: at,
	}}
	return change
}

// followUp queues a follow-up message delivery on task.
func followUp(t *testing.T, s Store, task *switchboard.Task, kind switchboard.DeliveryKind, at time.Time) *switchboard.Delivery {
	t.Helper()
	d := &switchboard.Delivery{
		ID: switchboard.NewID(), TaskID: task.ID(), AgentID: task.AgentID, Kind: kind, MessageID: "f-" + switchboard.NewID(),
		State: switchboard.DeliveryQueued, Deadline: at.Add(time.Hour), NextAttemptAt: at, CreatedAt: at,
	}
	_, _, err := s.ModifyTask(context.Background(), task.ID(), func(*switchboard.Task) (*switchboard.TaskChange, error) {
		return &switchboard.TaskChange{NewDeliveries: []*switchboard.Delivery{d}}, nil
	})
	must(t, err)
	return d
}

func ids(ds []*switchboard.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}

func testDeliveryClaimAckRelease(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	now := time.Now().Add(-time.Minute)
	_, d1 := queueTask(t, s, g, "m1", now)
	_, d2 := queueTask(t, s, g, "m2", now.Add(time.Second))

	got, err := s.ClaimDeliveries(ctx, g.ID, "conn-a", 10, time.Minute)
	must(t, err)
	if len(got) != 2 || got[0].ID != d1.ID || got[1].ID != d2.ID {
		t.Fatalf("claimed %v, want oldest first", ids(got))
	}
	if got[0].State != switchboard.DeliveryOffered || got[0].Attempts != 1 || got[0].Holder != "conn-a" {
		t.Fatalf("claimed delivery %+v", got[0])
	}
	// What the claim returns is what it stored.
	stored, err := s.FindDeliveries(ctx, switchboard.DeliveryFilter{AgentID: &g.ID})
	must(t, err)
	for i, d := range stored {
		c := got[i]
		if d.ID != c.ID || d.State != c.State || d.Holder != c.Holder || d.Attempts != c.Attempts ||
			d.OfferedAt == nil || !d.OfferedAt.Equal(*c.OfferedAt) || !d.NextAttemptAt.Equal(c.NextAttemptAt) ||
			!c.NextAttemptAt.Equal(c.OfferedAt.Add(time.Minute)) {
			t.Fatalf("claimed delivery %d stored as %+v, returned as %+v", i, d, c)
		}
	}
	task, err := s.FindTaskByID(ctx, d1.TaskID)
	must(t, err)
	if !task.Offered {
		t.Fatal("task not marked offered")
	}
	if again, _ := s.ClaimDeliveries(ctx, g.ID, "conn-b", 10, time.Minute); len(again) != 0 {
		t.Fatalf("offered deliveries claimed twice: %v", ids(again))
	}

	ok, err := s.AckDelivery(ctx, d1.ID, "conn-a")
	must(t, err)
	if !ok {
		t.Fatal("ack of an offered delivery reported false")
	}
	if ok, _ := s.AckDelivery(ctx, d1.ID, "conn-a"); ok {
		t.Fatal("second ack reported true")
	}
	agents, err := s.ReleaseDeliveries(ctx, []string{"conn-x", "conn-a"})
	must(t, err)
	if len(agents) != 1 || agents[0] != g.ID {
		t.Fatalf("released offers for agents %v, want only %s (the unacknowledged one)", agents, g.ID)
	}
	if agents, err := s.ReleaseDeliveries(ctx, []string{"conn-a"}); err != nil || len(agents) != 0 {
		t.Fatalf("released again: %v %v", agents, err)
	}
	got, err = s.ClaimDeliveries(ctx, g.ID, "conn-b", 10, time.Minute)
	must(t, err)
	if len(got) != 1 || got[0].ID != d2.ID || got[0].Attempts != 2 {
		t.Fatalf("after release: %+v", got)
	}
	open, err := s.FindDeliveries(ctx, switchboard.DeliveryFilter{AgentID: &g.ID, States: []switchboard.DeliveryState{switchboard.DeliveryAcked}})
	must(t, err)
	if len(open) != 1 || open[0].ID != d1.ID {
		t.Fatalf("acked: %v", ids(open))
	}
}

func testDeliveryFollowUpAfterTask(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	now := time.Now().Add(-time.Minute)
	task, d := queueTask(t, s, g, "m1", now)
	f := followUp(t, s, task, switchboard.DeliverMessage, now.Add(time.Second))
	// The follow-up waits until the task itself has been offered.
	got, err := s.ClaimDeliveries(ctx, g.ID, "c", 10, time.Minute)
	must(t, err)
	if len(got) != 1 || got[0].ID != d.ID {
		t.Fatalf("first claim %v, want only the task", ids(got))
	}
	got, err = s.ClaimDeliveries(ctx, g.ID, "c", 10, time.Minute)
	must(t, err)
	if len(got) != 1 || got[0].ID != f.ID {
		t.Fatalf("second claim %v, want the follow-up", ids(got))
	}
}

// testDeliveryNewTasksHeldBack checks that a claim reads accepts_tasks as
// stored: right after the owner turns it off, no new task is offered, while
// a cancel of a task the agent took still is.
func testDeliveryNewTasksHeldBack(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	now := time.Now().Add(-time.Minute)
	old, _ := queueTask(t, s, g, "m1", now)
	got, err := s.ClaimDeliveries(ctx, g.ID, "c", 10, time.Minute)
	must(t, err)
	must(t, ackAll(s, got))
	fresh, _ := queueTask(t, s, g, "m2", now)
	cancel := followUp(t, s, old, switchboard.DeliverCancel, now)
	setAcceptsTasks(t, s, g, false)
	got, err = s.ClaimDeliveries(ctx, g.ID, "c", 10, time.Minute)
	must(t, err)
	if len(got) != 1 || got[0].ID != cancel.ID {
		t.Fatalf("not accepting tasks: claimed %v, want only the cancel %s", ids(got), cancel.ID)
	}
	setAcceptsTasks(t, s, g, true)
	got, err = s.ClaimDeliveries(ctx, g.ID, "c", 10, time.Minute)
	must(t, err)
	if len(got) != 1 || got[0].TaskID != fresh.ID() {
		t.Fatalf("accepting again: claimed %v", ids(got))
	}
}

func setAcceptsTasks(t *testing.T, s Store, g *switchboard.Agent, accepts bool) {
	t.Helper()
	_, err := s.UpdateAgent(context.Background(), g.ID, switchboard.AgentUpdate{AcceptsTasks: &accepts})
	must(t, err)
}

func ackAll(s Store, ds []*switchboard.Delivery) error {
	for _, d := range ds {
		if _, err := s.AckDelivery(context.Background(), d.ID, d.Holder); err != nil {
			return err
		}
	}
	return nil
}

func testDeliveryLeaseAndExpiry(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	now := time.Now()
	_, d := queueTask(t, s, g, "m1", now.Add(-2*time.Hour)) // deadline an hour ago
	_, live := queueTask(t, s, g, "m2", now.Add(-time.Minute))

	expired, err := s.FindExpiredDeliveries(ctx, now, 10)
	must(t, err)
	if len(expired) != 1 || expired[0].ID != d.ID {
		t.Fatalf("expired %v, want %s", ids(expired), d.ID)
	}
	got, err := s.ClaimDeliveries(ctx, g.ID, "c", 10, -time.Second) // a lease that has already ended
	must(t, err)
	if len(got) != 2 {
		t.Fatalf("claimed %d", len(got))
	}
	agents, err := s.RequeueStaleOffers(ctx, time.Now())
	must(t, err)
	if len(agents) != 1 || agents[0] != g.ID {
		t.Fatalf("stale offers of agents %v", agents)
	}
	again, err := s.ClaimDeliveries(ctx, g.ID, "c2", 10, time.Minute)
	must(t, err)
	if len(again) != 2 {
		t.Fatalf("requeued offers not claimable: %v", ids(again))
	}
	// An offered delivery does not expire: it is acknowledged or requeued.
	expired, err = s.FindExpiredDeliveries(ctx, now, 10)
	must(t, err)
	if len(expired) != 0 {
		t.Fatalf("offered deliveries expired: %v", ids(expired))
	}
	_ = live
}

func testDeliveryRequeueUnheld(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	now := time.Now().Add(-time.Minute)
	held, _ := queueTask(t, s, g, "m1", now)
	lost, _ := queueTask(t, s, g, "m2", now)
	waiting, _ := queueTask(t, s, g, "m3", now)
	got, err := s.ClaimDeliveries(ctx, g.ID, "c", 10, time.Minute)
	must(t, err)
	must(t, ackAll(s, got))
	// The lost task got a follow-up the agent also acknowledged: only the
	// latest delivery is its current turn.
	f := followUp(t, s, lost, switchboard.DeliverMessage, now.Add(time.Second))
	got, err = s.ClaimDeliveries(ctx, g.ID, "c", 10, time.Minute)
	must(t, err)
	must(t, ackAll(s, got))
	// The waiting task waits for its peer: the agent owes it nothing.
	_, _, err = s.ModifyTask(ctx, waiting.ID(), func(tk *switchboard.Task) (*switchboard.TaskChange, error) {
		tk.A2A.Status.State = a2a.TaskStateInputRequired
		return &switchboard.TaskChange{}, nil
	})
	must(t, err)

	n, err := s.RequeueUnheld(ctx, g.ID, []a2a.TaskID{held.ID()}, time.Now().Add(time.Hour))
	must(t, err)
	if n != 1 {
		t.Fatalf("requeued %d, want 1", n)
	}
	got, err = s.ClaimDeliveries(ctx, g.ID, "c2", 10, time.Minute)
	must(t, err)
	if len(got) != 1 || got[0].ID != f.ID {
		t.Fatalf("requeued %v, want the lost task's latest delivery %s", ids(got), f.ID)
	}
}

func testDeliveryClosedWhenTaskEnds(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	now := time.Now().Add(-time.Minute)
	task, d := queueTask(t, s, g, "m1", now)
	cancel := &switchboard.Delivery{ID: switchboard.NewID(), TaskID: task.ID(), AgentID: g.ID, Kind: switchboard.DeliverCancel,
		State: switchboard.DeliveryQueued, Deadline: now.Add(time.Hour), NextAttemptAt: now, CreatedAt: now}
	_, _, err := s.ModifyTask(ctx, task.ID(), func(tk *switchboard.Task) (*switchboard.TaskChange, error) {
		tk.A2A.Status.State = a2a.TaskStateCanceled
		return &switchboard.TaskChange{NewDeliveries: []*switchboard.Delivery{cancel}}, nil
	})
	must(t, err)
	taskID := task.ID()
	all, err := s.FindDeliveries(ctx, switchboard.DeliveryFilter{TaskID: &taskID})
	must(t, err)
	states := map[string]switchboard.DeliveryState{}
	for _, x := range all {
		states[x.ID] = x.State
	}
	if states[d.ID] != switchboard.DeliveryFailed || states[cancel.ID] != switchboard.DeliveryQueued {
		t.Fatalf("after the task ended: %v", states)
	}
	_, _, err = s.ModifyTask(ctx, task.ID(), func(*switchboard.Task) (*switchboard.TaskChange, error) {
		return &switchboard.TaskChange{CloseDeliveries: []string{cancel.ID}}, nil
	})
	must(t, err)
	open, err := s.FindDeliveries(ctx, switchboard.DeliveryFilter{TaskID: &taskID, States: []switchboard.DeliveryState{switchboard.DeliveryQueued}})
	must(t, err)
	if len(open) != 0 {
		t.Fatalf("closed delivery still queued: %v", ids(open))
	}
}

func testDeliveryDueAcrossAgents(t *testing.T, s Store) {
	ctx := context.Background()
	acct := newAccount(t, s, "alice")
	a, b := newAgent(t, s, acct, "hook-a"), newAgent(t, s, acct, "hook-b")
	other := newAgent(t, s, acct, "connector")
	for _, g := range []*switchboard.Agent{a, b} {
		mode := switchboard.ModeWebhook
		_, err := s.UpdateAgent(ctx, g.ID, switchboard.AgentUpdate{Mode: &mode})
		must(t, err)
	}
	no := false
	_, err := s.UpdateAgent(ctx, b.ID, switchboard.AgentUpdate{AcceptsTasks: &no})
	must(t, err)
	now := time.Now().Add(-time.Minute)
	_, da := queueTask(t, s, a, "m1", now)
	queueTask(t, s, b, "m2", now)
	queueTask(t, s, other, "m3", now)
	got, err := s.ClaimDueDeliveries(ctx, switchboard.ModeWebhook, "dispatch", 10, 4, time.Minute)
	must(t, err)
	if len(got) != 1 || got[0].ID != da.ID {
		t.Fatalf("claimed %v, want only hook-a's task", ids(got))
	}
}

// testDeliveryFollowsAModeChange: work queued while an agent was a
// connector is the webhook dispatcher's once the agent becomes a webhook
// agent, and no longer once it is a connector again.
func testDeliveryFollowsAModeChange(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "shifter")
	_, d := queueTask(t, s, g, "m1", time.Now().Add(-time.Minute))
	setMode := func(m switchboard.DeliveryMode) {
		t.Helper()
		_, err := s.UpdateAgent(ctx, g.ID, switchboard.AgentUpdate{Mode: &m})
		must(t, err)
	}
	claimWebhook := func() []*switchboard.Delivery {
		t.Helper()
		got, err := s.ClaimDueDeliveries(ctx, switchboard.ModeWebhook, "dispatch", 10, 4, time.Minute)
		must(t, err)
		return got
	}
	if got := claimWebhook(); len(got) != 0 {
		t.Fatalf("a connector's work claimed by the webhook dispatcher: %v", ids(got))
	}
	setMode(switchboard.ModeWebhook)
	setMode(switchboard.ModeConnector)
	if got := claimWebhook(); len(got) != 0 {
		t.Fatalf("work claimed by the webhook dispatcher after the agent became a connector again: %v", ids(got))
	}
	setMode(switchboard.ModeWebhook)
	if got := claimWebhook(); len(got) != 1 || got[0].ID != d.ID {
		t.Fatalf("after the change to webhook, claimed %v, want %s", ids(got), d.ID)
	}
}

// testDeliveryModeChangeWhileQueued queues work for an agent while its
// mode flips between connector and webhook, all at once (on PostgreSQL,
// in concurrent transactions): once the flipping stops, every delivery
// follows the mode the agent was left in. A delivery written with the mode
// read before a change committed, and committed after it, would be lost to
// the webhook dispatcher.
func testDeliveryModeChangeWhileQueued(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "flipper")
	const writers, perWriter = 4, 50
	at := time.Now().Add(-time.Minute)
	var queuing sync.WaitGroup
	for w := range writers {
		queuing.Go(func() {
			for i := range perWriter {
				task := newTask(g, "bob", "c", fmt.Sprint("m", w, "-", i), at)
				if _, err := s.CreateTask(ctx, task, withQueuedDelivery(task, at)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	done := make(chan struct{})
	flipped := make(chan error)
	go func() {
		modes := []switchboard.DeliveryMode{switchboard.ModeWebhook, switchboard.ModeConnector}
		for i := range 100_000 { // bounded; flips for as long as the writers write
			select {
			case <-done:
				flipped <- nil
				return
			default:
			}
			if _, err := s.UpdateAgent(ctx, g.ID, switchboard.AgentUpdate{Mode: &modes[i%2]}); err != nil {
				flipped <- err
				return
			}
		}
		flipped <- nil
	}()
	queuing.Wait()
	close(done)
	must(t, <-flipped)
	if t.Failed() {
		return
	}
	webhook := switchboard.ModeWebhook
	_, err := s.UpdateAgent(ctx, g.ID, switchboard.AgentUpdate{Mode: &webhook})
	must(t, err)
	claimed := 0
	for range writers * perWriter { // bounded: each round claims at least one or stops
		got, err := s.ClaimDueDeliveries(ctx, switchboard.ModeWebhook, "dispatch", 100, writers*perWriter, time.Minute)
		must(t, err)
		if len(got) == 0 {
			break
		}
		claimed += len(got)
	}
	if claimed != writers*perWriter {
		t.Fatalf("the webhook dispatcher claimed %d of the agent's %d deliveries", claimed, writers*perWriter)
	}
}

func testDeliveryRetry(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	_, d := queueTask(t, s, g, "m1", time.Now().Add(-time.Minute))
	_, err := s.ClaimDeliveries(ctx, g.ID, "c", 1, time.Minute)
	must(t, err)
	must(t, s.RetryDelivery(ctx, d.ID, time.Now().Add(time.Hour), "HTTP 503"))
	if got, _ := s.ClaimDeliveries(ctx, g.ID, "c", 1, time.Minute); len(got) != 0 {
		t.Fatal("a delivery held back for an hour was claimed")
	}
	all, err := s.FindDeliveries(ctx, switchboard.DeliveryFilter{AgentID: &g.ID})
	must(t, err)
	if all[0].LastError != "HTTP 503" || all[0].State != switchboard.DeliveryQueued {
		t.Fatalf("after retry: %+v", all[0])
	}
}

// testDeliveryClaimConcurrent has eight holders (as on several instances)
// claim one agent's queue at once, webhook-dispatcher style and connection
// style: every delivery is claimed by exactly one of them.
func testDeliveryClaimConcurrent(t *testing.T, s Store) {
	ctx := context.Background()
	acct := newAccount(t, s, "alice")
	g := newAgent(t, s, acct, "helper")
	now := time.Now().Add(-time.Minute)
	const n = 60
	want := map[string]bool{}
	for i := range n {
		_, d := queueTask(t, s, g, fmt.Sprint("m", i), now.Add(time.Duration(i)*time.Millisecond))
		want[d.ID] = true
	}
	var mu sync.Mutex
	claimedBy := map[string]string{}
	var wg sync.WaitGroup
	for h := range 8 {
		holder := fmt.Sprint("holder-", h)
		wg.Go(func() {
			for range n { // bounded: each round claims at least one or stops
				var ds []*switchboard.Delivery
				var err error
				if h%2 == 0 {
					ds, err = s.ClaimDeliveries(ctx, g.ID, holder, 3, time.Minute)
				} else {
					ds, err = s.ClaimDueDeliveries(ctx, g.Mode, holder, 3, n, time.Minute)
				}
				if err != nil {
					t.Errorf("%s: %v", holder, err)
					return
				}
				if len(ds) == 0 {
					return
				}
				mu.Lock()
				for _, d := range ds {
					if prev, dup := claimedBy[d.ID]; dup {
						t.Errorf("delivery %s claimed by %s and %s", d.ID, prev, holder)
					}
					claimedBy[d.ID] = holder
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(claimedBy) != n {
		t.Fatalf("claimed %d of %d deliveries", len(claimedBy), n)
	}
	for id := range want {
		if claimedBy[id] == "" {
			t.Fatalf("delivery %s never claimed", id)
		}
	}
}

// testDeliveryLateAck checks that an acknowledgement that comes after the
// offer went back to the queue still counts, as long as no one offered the
// delivery since; otherwise it would be offered again (a duplicate) or, with
// new tasks held back, expire and fail a task the agent is working on.
func testDeliveryLateAck(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	now := time.Now().Add(-time.Minute)
	state := func(d *switchboard.Delivery) switchboard.DeliveryState {
		t.Helper()
		id := d.TaskID
		ds, err := s.FindDeliveries(ctx, switchboard.DeliveryFilter{TaskID: &id})
		must(t, err)
		return ds[0].State
	}
	ack := func(d *switchboard.Delivery, holder string, want bool) {
		t.Helper()
		ok, err := s.AckDelivery(ctx, d.ID, holder)
		must(t, err)
		if ok != want {
			t.Fatalf("ack of %s by %s reported %v, want %v", d.ID, holder, ok, want)
		}
	}
	claim := func(holder string, lease time.Duration) *switchboard.Delivery {
		t.Helper()
		got, err := s.ClaimDeliveries(ctx, g.ID, holder, 1, lease)
		must(t, err)
		if len(got) != 1 {
			t.Fatalf("%s claimed %v, want one delivery", holder, ids(got))
		}
		return got[0]
	}

	// The lease ended: the offer is queued again, then acknowledged late.
	var held []a2a.TaskID
	task, d := queueTask(t, s, g, "m1", now)
	held = append(held, task.ID())
	claim("conn-a", -time.Second)
	_, err := s.RequeueStaleOffers(ctx, time.Now())
	must(t, err)
	ack(d, "", false)
	ack(d, "conn-b", false)
	ack(d, "conn-a", true)
	if got := state(d); got != switchboard.DeliveryAcked {
		t.Fatalf("after a late ack: %s", got)
	}
	if got, _ := s.ClaimDeliveries(ctx, g.ID, "conn-b", 10, time.Minute); len(got) != 0 {
		t.Fatalf("acknowledged delivery offered again: %v", ids(got))
	}
	if expired, _ := s.FindExpiredDeliveries(ctx, time.Now().Add(24*time.Hour), 10); len(expired) != 0 {
		t.Fatalf("acknowledged delivery expires: %v", ids(expired))
	}

	// The connection closed before its acknowledgement was recorded.
	task, d = queueTask(t, s, g, "m2", now)
	held = append(held, task.ID())
	claim("conn-a", time.Minute)
	_, err = s.ReleaseDeliveries(ctx, []string{"conn-a"})
	must(t, err)
	ack(d, "conn-a", true)

	// Offered again since: the old holder's acknowledgement no longer
	// stands for the new offer, whose holder acknowledges it.
	task, d = queueTask(t, s, g, "m3", now)
	held = append(held, task.ID())
	claim("conn-a", -time.Second)
	_, err = s.RequeueStaleOffers(ctx, time.Now())
	must(t, err)
	claim("conn-b", time.Minute)
	ack(d, "conn-a", false)
	if got := state(d); got != switchboard.DeliveryOffered {
		t.Fatalf("offer of conn-b after conn-a's late ack: %s", got)
	}
	ack(d, "conn-b", true)

	// Work the agent acknowledged and then lost is queued again: a stale
	// acknowledgement of the old offer does not count for it.
	task, d = queueTask(t, s, g, "m4", now)
	claim("conn-a", time.Minute)
	ack(d, "conn-a", true)
	n, err := s.RequeueUnheld(ctx, g.ID, held, time.Now().Add(time.Hour))
	must(t, err)
	if n != 1 {
		t.Fatalf("requeued %d, want 1", n)
	}
	ack(d, "conn-a", false)
	if got := claim("conn-b", time.Minute); got.TaskID != task.ID() {
		t.Fatalf("claimed %s, want the lost task's delivery", got.ID)
	}
}

// testDeliveryRequeueFreshDeadline checks that work the agent took and lost
// gets the deadline it is requeued with: a task older than the delivery
// deadline that the agent was working on must not fail as soon as it is
// queued again (or on the next dropped offer before its acknowledgement).
func testDeliveryRequeueFreshDeadline(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	now := time.Now()
	_, d := queueTask(t, s, g, "m1", now.Add(-2*time.Hour)) // its deadline passed an hour ago
	got, err := s.ClaimDeliveries(ctx, g.ID, "conn-a", 10, time.Minute)
	must(t, err)
	must(t, ackAll(s, got))
	deadline := now.Add(time.Hour)
	n, err := s.RequeueUnheld(ctx, g.ID, nil, deadline)
	must(t, err)
	if n != 1 {
		t.Fatalf("requeued %d, want 1", n)
	}
	if expired, _ := s.FindExpiredDeliveries(ctx, now, 10); len(expired) != 0 {
		t.Fatalf("requeued work expired at once: %v", ids(expired))
	}
	// Offered on the next connection, which drops before acknowledging it.
	got, err = s.ClaimDeliveries(ctx, g.ID, "conn-b", 10, time.Minute)
	must(t, err)
	if len(got) != 1 || got[0].ID != d.ID || !got[0].Deadline.Equal(deadline) {
		t.Fatalf("claimed %+v, want %s with deadline %s", got, d.ID, deadline.UTC())
	}
	_, err = s.ReleaseDeliveries(ctx, []string{"conn-b"})
	must(t, err)
	if expired, _ := s.FindExpiredDeliveries(ctx, now.Add(time.Minute), 10); len(expired) != 0 {
		t.Fatalf("requeued work expired after a dropped offer: %v", ids(expired))
	}
	if expired, _ := s.FindExpiredDeliveries(ctx, deadline.Add(time.Second), 10); len(expired) != 1 {
		t.Fatalf("requeued work past its new deadline: expired %v, want %s", ids(expired), d.ID)
	}
}

// webhookAgent creates an agent in webhook mode.
func webhookAgent(t *testing.T, s Store, acct *switchboard.Account, handle string) *switchboard.Agent {
	t.Helper()
	g := newAgent(t, s, acct, handle)
	mode := switchboard.ModeWebhook
	g, err := s.UpdateAgent(context.Background(), g.ID, switchboard.AgentUpdate{Mode: &mode})
	must(t, err)
	return g
}

// testDeliveryDuePerAgentCap checks that due claims give no agent more than
// perAgent deliveries in flight, counting the offers it already has, so that
// one agent's backlog cannot take every dispatcher slot.
func testDeliveryDuePerAgentCap(t *testing.T, s Store) {
	ctx := context.Background()
	acct := newAccount(t, s, "alice")
	slow, fast := webhookAgent(t, s, acct, "slow"), webhookAgent(t, s, acct, "fast")
	now := time.Now().Add(-time.Minute)
	var backlog []*switchboard.Delivery
	for i := range 6 {
		_, d := queueTask(t, s, slow, fmt.Sprint("s", i), now.Add(time.Duration(i)*time.Millisecond))
		backlog = append(backlog, d)
	}
	_, df := queueTask(t, s, fast, "f1", now.Add(time.Second)) // the newest of all
	claim := func(holder string) []*switchboard.Delivery {
		t.Helper()
		got, err := s.ClaimDueDeliveries(ctx, switchboard.ModeWebhook, holder, 10, 4, time.Minute)
		must(t, err)
		return got
	}
	got := claim("dispatch-1")
	want := []string{backlog[0].ID, backlog[1].ID, backlog[2].ID, backlog[3].ID, df.ID}
	if fmt.Sprint(ids(got)) != fmt.Sprint(want) {
		t.Fatalf("claimed %v, want the slow agent's four oldest and the fast agent's one %v", ids(got), want)
	}
	// The offers in flight count, whoever holds them.
	if got := claim("dispatch-2"); len(got) != 0 {
		t.Fatalf("claimed %v with the slow agent at its cap", ids(got))
	}
	ok, err := s.AckDelivery(ctx, backlog[0].ID, "dispatch-1")
	must(t, err)
	if !ok {
		t.Fatal("ack reported false")
	}
	if got := claim("dispatch-2"); len(got) != 1 || got[0].ID != backlog[4].ID {
		t.Fatalf("after one ack: claimed %v, want %s", ids(got), backlog[4].ID)
	}
}

// testDeliveryDueInDueOrder checks that due claims go by the time a delivery
// became due, not by its age: a retry waits behind work that became due
// before it.
func testDeliveryDueInDueOrder(t *testing.T, s Store) {
	ctx := context.Background()
	g := webhookAgent(t, s, newAccount(t, s, "alice"), "hook")
	t0 := time.Now().Add(-time.Minute)
	_, d1 := queueTask(t, s, g, "m1", t0)
	_, d2 := queueTask(t, s, g, "m2", t0.Add(time.Second))
	claim := func() []*switchboard.Delivery {
		t.Helper()
		got, err := s.ClaimDueDeliveries(ctx, switchboard.ModeWebhook, "dispatch", 1, 4, time.Minute)
		must(t, err)
		return got
	}
	if got := claim(); len(got) != 1 || got[0].ID != d1.ID {
		t.Fatalf("first claim %v, want %s", ids(got), d1.ID)
	}
	// The attempt failed; the retry is due ten seconds after d2 was.
	must(t, s.RetryDelivery(ctx, d1.ID, t0.Add(10*time.Second), "503 Service Unavailable"))
	if got := claim(); len(got) != 1 || got[0].ID != d2.ID {
		t.Fatalf("second claim %v, want %s, due before the retry", ids(got), d2.ID)
	}
	if got := claim(); len(got) != 1 || got[0].ID != d1.ID {
		t.Fatalf("third claim %v, want the retry %s", ids(got), d1.ID)
	}
}

// testModifyTaskAck: a TaskChange's Ack acknowledges the delivery in the
// task's transaction, says whether it was the first acknowledgement, and a
// change holding only an Ack leaves the task as it was.
func testModifyTaskAck(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	now := time.Now().UTC().Truncate(time.Millisecond)
	task, d := queueTask(t, s, g, "m1", now.Add(-time.Second))
	claimed, err := s.ClaimDeliveries(ctx, g.ID, "conn-1", 10, time.Minute)
	must(t, err)
	if len(claimed) != 1 {
		t.Fatalf("claimed %d", len(claimed))
	}
	before, err := s.FindTaskByID(ctx, task.ID())
	must(t, err)

	ack := &switchboard.DeliveryAck{DeliveryID: d.ID, Holder: "conn-1"}
	_, events, err := s.ModifyTask(ctx, task.ID(), func(*switchboard.Task) (*switchboard.TaskChange, error) {
		return &switchboard.TaskChange{Ack: ack}, nil
	})
	must(t, err)
	if !ack.First || len(events) != 0 {
		t.Fatalf("ack only: First %v, %d events", ack.First, len(events))
	}
	after, err := s.FindTaskByID(ctx, task.ID())
	must(t, err)
	if after.Seq != before.Seq || after.State() != before.State() {
		t.Fatalf("an ack-only change changed the task: seq %d → %d, %s → %s", before.Seq, after.Seq, before.State(), after.State())
	}
	ds, err := s.FindDeliveries(ctx, switchboard.DeliveryFilter{AgentID: &g.ID})
	must(t, err)
	if len(ds) != 1 || ds[0].State != switchboard.DeliveryAcked {
		t.Fatalf("delivery after the ack: %+v", ds)
	}

	again := &switchboard.DeliveryAck{DeliveryID: d.ID, Holder: "conn-1"}
	_, events, err = s.ModifyTask(ctx, task.ID(), func(t *switchboard.Task) (*switchboard.TaskChange, error) {
		t.A2A.Status = a2a.TaskStatus{State: a2a.TaskStateWorking}
		return &switchboard.TaskChange{Ack: again, Events: []a2a.Event{
			&a2a.TaskStatusUpdateEvent{TaskID: t.ID(), ContextID: t.A2A.ContextID, Status: t.A2A.Status}}}, nil
	})
	must(t, err)
	if again.First || len(events) != 1 {
		t.Fatalf("a second ack with an event: First %v, %d events", again.First, len(events))
	}
	after, err = s.FindTaskByID(ctx, task.ID())
	must(t, err)
	if after.State() != a2a.TaskStateWorking || after.Seq != before.Seq+1 {
		t.Fatalf("the event was not written with the ack: %s seq %d", after.State(), after.Seq)
	}
}

// testTaskFinishedWithAck: a change that finishes a task and acknowledges
// its offer acknowledges that delivery and fails the task's other live
// deliveries (but cancels); when the acknowledgement does not count (not
// the offer's holder), the offer is failed with the others.
func testTaskFinishedWithAck(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	now := time.Now().UTC().Truncate(time.Millisecond)
	for _, holder := range []string{"conn-1", "someone-else"} {
		t.Run(holder, func(t *testing.T) {
			task, d := createOffered(t, s, g, "m-"+holder, "conn-1", now)
			msg := followUp(t, s, task, switchboard.DeliverMessage, now.Add(time.Second))
			cancel := followUp(t, s, task, switchboard.DeliverCancel, now.Add(2*time.Second))
			ack := &switchboard.DeliveryAck{DeliveryID: d.ID, Holder: holder}
			_, _, err := s.ModifyTask(ctx, task.ID(), func(t *switchboard.Task) (*switchboard.TaskChange, error) {
				t.A2A.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted}
				return &switchboard.TaskChange{Ack: ack, Events: []a2a.Event{
					&a2a.TaskStatusUpdateEvent{TaskID: t.ID(), ContextID: t.A2A.ContextID, Status: t.A2A.Status}}}, nil
			})
			must(t, err)
			id := task.ID()
			ds, err := s.FindDeliveries(ctx, switchboard.DeliveryFilter{TaskID: &id})
			must(t, err)
			want := map[string]switchboard.DeliveryState{d.ID: switchboard.DeliveryFailed, msg.ID: switchboard.DeliveryFailed, cancel.ID: switchboard.DeliveryQueued}
			if holder == "conn-1" {
				want[d.ID] = switchboard.DeliveryAcked
			}
			if ack.First != (holder == "conn-1") {
				t.Fatalf("ack by %s: First %v", holder, ack.First)
			}
			if len(ds) != len(want) {
				t.Fatalf("%d deliveries, want %d", len(ds), len(want))
			}
			for _, x := range ds {
				if x.State != want[x.ID] {
					t.Fatalf("delivery %s (%s) is %s, want %s", x.ID, x.Kind, x.State, want[x.ID])
				}
				if x.State == switchboard.DeliveryFailed && x.LastError != "the task finished" {
					t.Fatalf("delivery %s failed with %q", x.ID, x.LastError)
				}
			}
		})
	}
}

// createOffered stores a new task whose delivery comes already offered to
// holder, as a direct offer does, and returns the task and the delivery as
// the store left them.
func createOffered(t *testing.T, s Store, g *switchboard.Agent, messageID, holder string, at time.Time) (*switchboard.Task, *switchboard.Delivery) {
	t.Helper()
	task := newTask(g, "bob", "c", messageID, at)
	d := &switchboard.Delivery{
		ID: switchboard.NewID(), TaskID: task.ID(), AgentID: g.ID, Kind: switchboard.DeliverTask, MessageID: messageID,
		State: switchboard.DeliveryOffered, Holder: holder, Attempts: 1, OfferedAt: &at,
		Deadline: at.Add(time.Hour), NextAttemptAt: at.Add(time.Minute), CreatedAt: at,
	}
	change := created(task, nil)
	change.NewDeliveries = []*switchboard.Delivery{d}
	_, err := s.CreateTask(context.Background(), task, change)
	must(t, err)
	return task, d
}

// testDeliveryCreatedOffered checks a new task's delivery written already
// offered: it stays offered (and its task counts as offered) only while the
// agent accepts tasks and has nothing queued, which goes first.
func testDeliveryCreatedOffered(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	now := time.Now().Add(-time.Minute).UTC()

	task, d := createOffered(t, s, g, "m1", "conn-a", now)
	if d.State != switchboard.DeliveryOffered || d.Holder != "conn-a" {
		t.Fatalf("nothing queued: delivery %s held by %q, want offered to conn-a", d.State, d.Holder)
	}
	stored, err := s.FindTaskByID(ctx, task.ID())
	must(t, err)
	if !stored.Offered {
		t.Fatal("a task created with its delivery offered is not marked offered")
	}
	// A cancel may follow at once: its task has been offered.
	cancel := followUp(t, s, task, switchboard.DeliverCancel, now)
	got, err := s.ClaimDeliveries(ctx, g.ID, "conn-a", 10, time.Minute)
	must(t, err)
	if len(got) != 1 || got[0].ID != cancel.ID {
		t.Fatalf("claimed %v, want only the cancel %s (the task's delivery is held)", ids(got), cancel.ID)
	}
	// The offer is held like a claimed one: acknowledged by its holder,
	// or given back when the holder goes.
	first, err := s.AckDelivery(ctx, d.ID, "conn-a")
	must(t, err)
	if !first {
		t.Fatal("the first acknowledgement of a delivery created offered did not count as first")
	}

	// Older work queued for the agent goes first: the new delivery is
	// queued behind it.
	queued, _ := queueTask(t, s, g, "m2", now)
	later, d2 := createOffered(t, s, g, "m3", "conn-a", now.Add(time.Second))
	if d2.State != switchboard.DeliveryQueued || d2.Holder != "" || d2.Attempts != 0 || d2.OfferedAt != nil {
		t.Fatalf("older work queued: delivery %+v, want it queued", d2)
	}
	if stored, err := s.FindTaskByID(ctx, later.ID()); err != nil || stored.Offered {
		t.Fatalf("a task whose delivery was queued is marked offered (err %v)", err)
	}
	got, err = s.ClaimDeliveries(ctx, g.ID, "conn-a", 10, time.Minute)
	must(t, err)
	if len(got) != 2 || got[0].TaskID != queued.ID() || got[1].ID != d2.ID {
		t.Fatalf("claimed %v, want the older task's delivery, then %s", ids(got), d2.ID)
	}
	must(t, ackAll(s, got))

	// An agent that does not accept tasks, as stored, gets none offered.
	setAcceptsTasks(t, s, g, false)
	_, d3 := createOffered(t, s, g, "m4", "conn-a", now.Add(2*time.Second))
	if d3.State != switchboard.DeliveryQueued {
		t.Fatalf("agent not accepting tasks: delivery %s, want queued", d3.State)
	}
	ds, err := s.FindDeliveries(ctx, switchboard.DeliveryFilter{TaskID: &d3.TaskID})
	must(t, err)
	if len(ds) != 1 || ds[0].State != switchboard.DeliveryQueued || ds[0].Holder != "" {
		t.Fatalf("stored: %+v", ds)
	}
}

// testDeliveryClaimWhileTaskChanges checks that a claim and a change of the
// same task made at the same time both go through. The change holds the
// task, then closes the task's deliveries as it finishes it; a claim that
// took a delivery and then waited for its task (to mark it offered) would
// deadlock with it, and PostgreSQL would fail one of them: an agent's
// answer refused with an internal error while its connector reconnected.
func testDeliveryClaimWhileTaskChanges(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	task, d := queueTask(t, s, g, "m1", time.Now().Add(-time.Minute))
	holding, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	changed := make(chan error, 1)
	go func() {
		_, _, err := s.ModifyTask(ctx, task.ID(), func(tk *switchboard.Task) (*switchboard.TaskChange, error) {
			once.Do(func() { close(holding) })
			<-release
			tk.A2A.Status.State = a2a.TaskStateCompleted
			return &switchboard.TaskChange{}, nil
		})
		changed <- err
	}()
	<-holding
	claimed := make(chan error, 1)
	go func() {
		_, err := s.ClaimDeliveries(ctx, g.ID, "conn-1", 10, time.Minute)
		claimed <- err
	}()
	time.Sleep(200 * time.Millisecond) // the claim takes the delivery, or passes it by
	close(release)
	for name, ch := range map[string]chan error{"change": changed, "claim": claimed} {
		select {
		case err := <-ch:
			if err != nil {
				t.Fatalf("the %s failed: %v", name, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("the %s did not end", name)
		}
	}
	taskID := task.ID()
	all, err := s.FindDeliveries(ctx, switchboard.DeliveryFilter{TaskID: &taskID})
	must(t, err)
	if len(all) != 1 || all[0].ID != d.ID || all[0].State != switchboard.DeliveryFailed {
		t.Fatalf("deliveries after the task finished: %+v", all)
	}
}
