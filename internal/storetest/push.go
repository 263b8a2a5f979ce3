package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// pushTests are the contract of switchboard.PushStore, and of the pushes
// TaskStore writes with a task change.
var pushTests = map[string]func(*testing.T, Store){
	"PushQueuedWithChange":        testPushQueuedWithChange,
	"PushOneAtATimePerConfig":     testPushOneAtATimePerConfig,
	"PushLeaseEndsInterrupted":    testPushLeaseEnds,
	"PushLeaseEndsPastLimits":     testPushLeaseEndsPastLimits,
	"PushDeleteConfigCancels":     testPushDeleteConfigCancels,
	"PushClaimConcurrent":         testPushClaimConcurrent,
	"PushAgentDeleteRemovesAll":   testPushAgentDelete,
	"PushRetryWaitsForItsTime":    testPushRetryWaits,
	"PushConfigReplacedUsesNew":   testPushConfigReplaced,
	"PushCreateTaskPushesNothing": testPushCreateTaskPushesNothing,
	"PushTraceParent":             testPushTraceParent,
}

// pushTask stores a submitted task with push configurations of the given
// ids (the first inline with the task, the others saved after).
func pushTask(t *testing.T, s Store, g *switchboard.Agent, messageID string, configs ...string) *switchboard.Task {
	t.Helper()
	ctx := context.Background()
	task := newTask(g, "bob", "c", messageID, time.Now())
	var inline *switchboard.PushConfig
	for i, id := range configs {
		c := &switchboard.PushConfig{Config: a2a.PushConfig{TaskID: task.ID(), ID: id, URL: "https://example.com/" + id, Token: "tok-" + id},
			Protocol: switchboard.ProtocolV1, CreatedAt: time.Now().Add(time.Duration(i) * time.Millisecond)}
		if i == 0 {
			inline = c
			_, err := s.CreateTask(ctx, task, created(task, c))
			must(t, err)
			continue
		}
		must(t, s.SavePushConfig(ctx, c))
	}
	if inline == nil {
		_, err := s.CreateTask(ctx, task, created(task, nil))
		must(t, err)
	}
	return task
}

// setState moves the task to state with a status event (and optionally an
// artifact event first) and returns the events written.
func setState(t *testing.T, s Store, id a2a.TaskID, state a2a.TaskState, artifact string) []*switchboard.TaskEvent {
	t.Helper()
	_, evs, err := s.ModifyTask(context.Background(), id, func(task *switchboard.Task) (*switchboard.TaskChange, error) {
		var events []a2a.Event
		if artifact != "" {
			a := &a2a.Artifact{ID: a2a.ArtifactID(artifact), Parts: a2a.ContentParts{a2a.NewTextPart(artifact)}}
			task.A2A.Artifacts = append(task.A2A.Artifacts, a)
			events = append(events, &a2a.TaskArtifactUpdateEvent{TaskID: id, ContextID: task.A2A.ContextID, Artifact: a})
		}
		if state != a2a.TaskStateUnspecified {
			now := time.Now().UTC()
			task.A2A.Status = a2a.TaskStatus{State: state, Timestamp: &now}
			events = append(events, &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: task.A2A.ContextID, Status: task.A2A.Status})
		}
		return &switchboard.TaskChange{Events: events}, nil
	})
	must(t, err)
	return evs
}

// claimAll claims every due push at now for holder.
func claimAll(t *testing.T, s Store, holder string, now time.Time) []*switchboard.PushDelivery {
	t.Helper()
	ps, err := s.ClaimPushes(context.Background(), holder, now, 100, time.Minute, switchboard.PushLimits{})
	must(t, err)
	return ps
}

// record records an attempt of holder that leaves p in state (a retry due
// at next).
func record(t *testing.T, s Store, p *switchboard.PushDelivery, holder string, state switchboard.PushState, next *time.Time) bool {
	t.Helper()
	a := &switchboard.PushAttempt{PushID: p.ID, At: time.Now().UTC(), NextAttemptAt: next}
	if state != switchboard.PushSent {
		a.StatusCode, a.Error = 503, "503 Service Unavailable"
	} else {
		a.StatusCode = 200
	}
	held, err := s.RecordPushAttempt(context.Background(), p.ID, holder, a, state)
	must(t, err)
	return held
}

func testPushQueuedWithChange(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	task := pushTask(t, s, g, "m1", "a", "b")
	plain := pushTask(t, s, g, "m2")
	if ps := claimAll(t, s, "h", time.Now().Add(time.Second)); len(ps) != 0 {
		t.Fatalf("a new task queued %d pushes", len(ps))
	}

	if evs := setState(t, s, task.ID(), a2a.TaskStateUnspecified, "art1"); evs[len(evs)-1].Pushes != 0 {
		t.Fatal("an artifact alone was pushed")
	}
	if evs := setState(t, s, task.ID(), a2a.TaskStateSubmitted, ""); evs[0].Pushes != 0 {
		t.Fatal("submitted was pushed")
	}
	evs := setState(t, s, task.ID(), a2a.TaskStateWorking, "art2")
	if evs[0].Pushes != 0 || evs[1].Pushes != 2 {
		t.Fatalf("pushes on the events: %d, %d; want 0, 2 (on the change's last event)", evs[0].Pushes, evs[1].Pushes)
	}
	setState(t, s, plain.ID(), a2a.TaskStateWorking, "")
	setState(t, s, task.ID(), a2a.TaskStateCompleted, "") // the snapshot of working must not change

	ps := claimAll(t, s, "h", time.Now().Add(time.Second))
	if len(ps) != 2 {
		t.Fatalf("claimed %d pushes, want one per config", len(ps))
	}
	seen := map[string]bool{}
	for _, p := range ps {
		seen[p.ConfigID] = true
		if p.TaskID != task.ID() || p.TaskState != a2a.TaskStateWorking || p.Seq != evs[1].Seq || p.State != switchboard.PushSending || p.Attempts != 1 {
			t.Fatalf("push %+v", p)
		}
		if p.Task == nil || p.Task.Status.State != a2a.TaskStateWorking || len(p.Task.Artifacts) != 2 || len(p.Task.History) != 1 {
			t.Fatalf("snapshot %+v", p.Task)
		}
		if p.Config == nil || p.Config.Config.ID != p.ConfigID || p.Config.Config.Token != "tok-"+p.ConfigID || p.Config.Protocol != switchboard.ProtocolV1 {
			t.Fatalf("config %+v", p.Config)
		}
	}
	if !seen["a"] || !seen["b"] {
		t.Fatalf("configs %v", seen)
	}
	all, err := s.FindPushes(ctx, task.ID())
	must(t, err)
	if len(all) != 4 || all[0].Task != nil {
		t.Fatalf("find pushes: %d", len(all))
	}
	if all[2].TaskState != a2a.TaskStateCompleted || all[2].State != switchboard.PushQueued {
		t.Fatalf("third push %+v", all[2])
	}
}

func testPushOneAtATimePerConfig(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	task := pushTask(t, s, g, "m1", "a")
	other := pushTask(t, s, g, "m2", "a")
	for _, st := range []a2a.TaskState{a2a.TaskStateWorking, a2a.TaskStateInputRequired, a2a.TaskStateCompleted} {
		setState(t, s, task.ID(), st, "")
	}
	setState(t, s, other.ID(), a2a.TaskStateWorking, "")

	later := time.Now().Add(time.Second)
	ps := claimAll(t, s, "h", later)
	if len(ps) != 2 {
		t.Fatalf("claimed %d; want the first push of each config", len(ps))
	}
	first, second := ps[0], ps[1]
	if first.TaskID != task.ID() {
		first, second = second, first
	}
	record(t, s, second, "h", switchboard.PushSent, nil)
	if first.TaskState != a2a.TaskStateWorking {
		t.Fatalf("first push reports %s", first.TaskState)
	}
	if got := claimAll(t, s, "h2", later); len(got) != 0 {
		t.Fatalf("claimed %d while the first is sending", len(got))
	}
	// A retry in the future holds the next back.
	next := later.Add(time.Hour)
	if !record(t, s, first, "h", switchboard.PushQueued, &next) {
		t.Fatal("the holder lost its push")
	}
	if got := claimAll(t, s, "h", later); len(got) != 0 {
		t.Fatalf("claimed %d while the first waits for its retry", len(got))
	}
	got := claimAll(t, s, "h", next)
	if len(got) != 1 || got[0].ID != first.ID || got[0].Attempts != 2 {
		t.Fatalf("retry: %+v", got)
	}
	record(t, s, got[0], "h", switchboard.PushFailed, nil) // given up: the next goes
	got = claimAll(t, s, "h", next)
	if len(got) != 1 || got[0].TaskState != a2a.TaskStateInputRequired {
		t.Fatalf("after give-up: %+v", got)
	}
	record(t, s, got[0], "h", switchboard.PushSent, nil)
	got = claimAll(t, s, "h", next)
	if len(got) != 1 || got[0].TaskState != a2a.TaskStateCompleted {
		t.Fatalf("after sent: %+v", got)
	}
	record(t, s, got[0], "h", switchboard.PushSent, nil)

	all, err := s.FindPushes(ctx, task.ID())
	must(t, err)
	want := []switchboard.PushState{switchboard.PushFailed, switchboard.PushSent, switchboard.PushSent}
	for i, p := range all {
		if p.State != want[i] || p.DoneAt == nil {
			t.Fatalf("push %d: %s (done %v), want %s", i, p.State, p.DoneAt, want[i])
		}
	}
	attempts, err := s.FindPushAttempts(ctx, task.ID())
	must(t, err)
	if len(attempts) != 4 || attempts[0].NextAttemptAt == nil || !attempts[0].NextAttemptAt.Equal(next) ||
		attempts[0].StatusCode != 503 || attempts[3].Error != "" || attempts[3].NextAttemptAt != nil {
		t.Fatalf("attempts %+v", attempts)
	}
}

func testPushLeaseEnds(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	task := pushTask(t, s, g, "m1", "a")
	setState(t, s, task.ID(), a2a.TaskStateWorking, "")
	now := time.Now().Add(time.Second)
	ps, err := s.ClaimPushes(ctx, "dead", now, 10, time.Minute, switchboard.PushLimits{})
	must(t, err)
	if len(ps) != 1 {
		t.Fatalf("claimed %d", len(ps))
	}
	if got := claimAll(t, s, "h", now.Add(59*time.Second)); len(got) != 0 {
		t.Fatal("claimed within the lease")
	}
	got := claimAll(t, s, "h", now.Add(61*time.Second))
	if len(got) != 1 || got[0].ID != ps[0].ID || got[0].Attempts != 2 {
		t.Fatalf("after the lease: %+v", got)
	}
	if record(t, s, ps[0], "dead", switchboard.PushSent, nil) {
		t.Fatal("a holder whose lease ended still held the push")
	}
	if !record(t, s, got[0], "h", switchboard.PushSent, nil) {
		t.Fatal("the new holder lost the push")
	}
	attempts, err := s.FindPushAttempts(ctx, task.ID())
	must(t, err)
	interrupted := 0
	for _, a := range attempts {
		if a.StatusCode == 0 && a.Error != "" {
			interrupted++
		}
	}
	if len(attempts) != 3 || interrupted != 1 {
		t.Fatalf("%d attempts, %d interrupted: want the lost one as interrupted, and both outcomes", len(attempts), interrupted)
	}
}

// testPushLeaseEndsPastLimits: a push whose sender dies at each attempt
// counts the lost attempts and is given up when claimed past the limits
// (attempts, or age), with an attempt saying why; the configuration's next
// push is then handed out.
func testPushLeaseEndsPastLimits(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	task := pushTask(t, s, g, "m1", "a")
	setState(t, s, task.ID(), a2a.TaskStateWorking, "")
	setState(t, s, task.ID(), a2a.TaskStateCompleted, "")
	limits := switchboard.PushLimits{MaxAttempts: 2, MaxAge: time.Hour}
	claim := func(holder string, now time.Time) []*switchboard.PushDelivery {
		t.Helper()
		ps, err := s.ClaimPushes(ctx, holder, now, 10, time.Minute, limits)
		must(t, err)
		return ps
	}
	now := time.Now().Add(time.Second)
	first := claim("dead-1", now)
	if len(first) != 1 || first[0].Attempts != 1 || first[0].TaskState != a2a.TaskStateWorking {
		t.Fatalf("first claim: %+v", first)
	}
	// The lease ends: the second attempt (within the limit) is handed out.
	now = now.Add(61 * time.Second)
	again := claim("dead-2", now)
	if len(again) != 1 || again[0].ID != first[0].ID || again[0].Attempts != 2 {
		t.Fatalf("second claim: %+v", again)
	}
	// Its sender dies too: two attempts made, the push is given up.
	now = now.Add(61 * time.Second)
	if got := claim("h", now); len(got) != 0 {
		t.Fatalf("a push past its attempts was handed out: %+v", got)
	}
	all, err := s.FindPushes(ctx, task.ID())
	must(t, err)
	if all[0].ID != first[0].ID || all[0].State != switchboard.PushFailed || all[0].DoneAt == nil ||
		!strings.Contains(all[0].LastError, "gave up after 2 attempts") {
		t.Fatalf("given up push: %+v", all[0])
	}
	attempts, err := s.FindPushAttempts(ctx, task.ID())
	must(t, err)
	if len(attempts) != 2 || !strings.Contains(attempts[1].Error, "interrupted") || !strings.Contains(attempts[1].Error, "gave up after 2 attempts") ||
		attempts[1].NextAttemptAt != nil {
		t.Fatalf("attempts: %+v", attempts)
	}
	if record(t, s, again[0], "dead-2", switchboard.PushSent, nil) {
		t.Fatal("a dead holder's late outcome changed a given up push")
	}
	// The configuration's next push goes now; its sender dies, and the
	// push is given up once older than MaxAge.
	next := claim("dead-3", now)
	if len(next) != 1 || next[0].TaskState != a2a.TaskStateCompleted {
		t.Fatalf("next push: %+v", next)
	}
	if got := claim("h", next[0].CreatedAt.Add(time.Hour)); len(got) != 0 {
		t.Fatalf("a push past its age was handed out: %+v", got)
	}
	all, err = s.FindPushes(ctx, task.ID())
	must(t, err)
	if all[1].State != switchboard.PushFailed || !strings.Contains(all[1].LastError, "older than 1h0m0s") {
		t.Fatalf("push past its age: %+v", all[1])
	}
}

func testPushDeleteConfigCancels(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	task := pushTask(t, s, g, "m1", "a", "b")
	setState(t, s, task.ID(), a2a.TaskStateWorking, "")
	setState(t, s, task.ID(), a2a.TaskStateCompleted, "")
	ps := claimAll(t, s, "h", time.Now().Add(time.Second))
	if len(ps) != 2 {
		t.Fatalf("claimed %d", len(ps))
	}
	must(t, s.DeletePushConfig(ctx, task.ID(), "a"))
	for _, p := range ps {
		held := record(t, s, p, "h", switchboard.PushSent, nil)
		if held != (p.ConfigID == "b") {
			t.Fatalf("push of config %s held: %v", p.ConfigID, held)
		}
	}
	got := claimAll(t, s, "h", time.Now().Add(time.Second))
	if len(got) != 1 || got[0].ConfigID != "b" || got[0].TaskState != a2a.TaskStateCompleted {
		t.Fatalf("after delete: %+v", got)
	}
	all, err := s.FindPushes(ctx, task.ID())
	must(t, err)
	canceled := 0
	for _, p := range all {
		if p.ConfigID == "a" {
			if p.State != switchboard.PushCanceled {
				t.Fatalf("push of the deleted config is %s", p.State)
			}
			canceled++
		}
	}
	if canceled != 2 {
		t.Fatalf("canceled %d", canceled)
	}
}

func testPushClaimConcurrent(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	const n = 30
	for i := range n {
		task := pushTask(t, s, g, fmt.Sprint("m", i), "a")
		setState(t, s, task.ID(), a2a.TaskStateWorking, "")
		setState(t, s, task.ID(), a2a.TaskStateCompleted, "")
	}
	now := time.Now().Add(time.Second)
	var mu sync.Mutex
	claimedBy := map[string]string{}
	perConfig := map[a2a.TaskID]int{}
	var wg sync.WaitGroup
	for h := range 6 {
		holder := fmt.Sprint("holder-", h)
		wg.Go(func() {
			for range n {
				ps, err := s.ClaimPushes(ctx, holder, now, 3, time.Minute, switchboard.PushLimits{})
				if err != nil {
					t.Errorf("%s: %v", holder, err)
					return
				}
				if len(ps) == 0 {
					return
				}
				mu.Lock()
				for _, p := range ps {
					if prev, dup := claimedBy[p.ID]; dup {
						t.Errorf("push %s claimed by %s and %s", p.ID, prev, holder)
					}
					claimedBy[p.ID] = holder
					perConfig[p.TaskID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(claimedBy) != n {
		t.Fatalf("claimed %d pushes, want the first of each of %d configs", len(claimedBy), n)
	}
	for id, k := range perConfig {
		if k != 1 {
			t.Fatalf("task %s: %d pushes of one config claimed at once", id, k)
		}
	}
}

func testPushAgentDelete(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	task := pushTask(t, s, g, "m1", "a")
	setState(t, s, task.ID(), a2a.TaskStateWorking, "")
	ps := claimAll(t, s, "h", time.Now().Add(time.Second))
	record(t, s, ps[0], "h", switchboard.PushSent, nil)
	setState(t, s, task.ID(), a2a.TaskStateCompleted, "")
	must(t, s.DeleteAgent(ctx, g.ID))
	if got := claimAll(t, s, "h", time.Now().Add(time.Hour)); len(got) != 0 {
		t.Fatalf("claimed %d pushes of a deleted task", len(got))
	}
	all, err := s.FindPushes(ctx, task.ID())
	must(t, err)
	attempts, err := s.FindPushAttempts(ctx, task.ID())
	must(t, err)
	if len(all) != 0 || len(attempts) != 0 {
		t.Fatalf("pushes %d and attempts %d survive the agent", len(all), len(attempts))
	}
}

func testPushRetryWaits(t *testing.T, s Store) {
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	task := pushTask(t, s, g, "m1", "a")
	setState(t, s, task.ID(), a2a.TaskStateWorking, "")
	now := time.Now().Add(time.Second)
	p := claimAll(t, s, "h", now)[0]
	next := now.Add(10 * time.Second)
	record(t, s, p, "h", switchboard.PushQueued, &next)
	if got := claimAll(t, s, "h", next.Add(-time.Millisecond)); len(got) != 0 {
		t.Fatal("claimed before its retry time")
	}
	if got := claimAll(t, s, "h", next); len(got) != 1 || got[0].LastStatus != 503 || got[0].LastError == "" {
		t.Fatalf("retry: %+v", got)
	}
	_, err := s.RecordPushAttempt(context.Background(), p.ID, "h", &switchboard.PushAttempt{PushID: p.ID, At: now}, switchboard.PushQueued)
	if err == nil {
		t.Fatal("a retry without its time was recorded")
	}
}

func testPushConfigReplaced(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	task := pushTask(t, s, g, "m1", "a")
	setState(t, s, task.ID(), a2a.TaskStateWorking, "")
	must(t, s.SavePushConfig(ctx, &switchboard.PushConfig{
		Config:   a2a.PushConfig{TaskID: task.ID(), ID: "a", URL: "https://example.org/new"},
		Protocol: switchboard.ProtocolV03, CreatedAt: time.Now(),
	}))
	ps := claimAll(t, s, "h", time.Now().Add(time.Second))
	if len(ps) != 1 || ps[0].Config.Config.URL != "https://example.org/new" || ps[0].Config.Protocol != switchboard.ProtocolV03 {
		t.Fatalf("a replaced config: %+v", ps[0].Config)
	}
}

func testPushCreateTaskPushesNothing(t *testing.T, s Store) {
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	task := newTask(g, "bob", "c", "m1", time.Now())
	task.A2A.Status.State = a2a.TaskStateWorking // even a task created in another state
	push := &switchboard.PushConfig{Config: a2a.PushConfig{TaskID: task.ID(), ID: "a", URL: "https://example.com"}, CreatedAt: time.Now()}
	ev, err := s.CreateTask(context.Background(), task, created(task, push))
	must(t, err)
	if ev.Pushes != 0 {
		t.Fatal("the first event says it was pushed")
	}
	if got := claimAll(t, s, "h", time.Now().Add(time.Second)); len(got) != 0 {
		t.Fatalf("a new task queued %d pushes", len(got))
	}
}
