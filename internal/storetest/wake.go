package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/wake"
)

// Clock is a settable clock for the wake contract: the store reads the time
// from Now.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock forward by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// RunWakes runs the contract of switchboard.WakeStore. open returns a new,
// empty store that reads the time from now, and arranges for it to be
// closed.
func RunWakes(t *testing.T, open func(t *testing.T, now func() time.Time) Store) {
	tests := map[string]func(*testing.T, Store, *Clock){
		"WakeConfigSaveFindDelete":    testWakeConfig,
		"WakeQueuedWithTheMessage":    testWakeWithMessage,
		"WakeClaimLeaseFinish":        testWakeClaim,
		"WakeHourlyCap":               testWakeCap,
		"WakeRetryMergesWithPending":  testWakeRetryMerge,
		"WakeClaimConcurrent":         testWakeClaimConcurrent,
		"WakeLeaseEndsCountRetries":   testWakeLeaseRetries,
		"WakeRetryRacesAMessage":      testWakeRetryRace,
		"WakeGoneWithItsAgent":        testWakeAgentDelete,
		"WakePrune":                   testWakePrune,
		"WakeNamesAtMostSoManyTasks":  testWakeTaskIDsBounded,
		"WakeConversationsArePerPeer": testWakePerPeer,
		"WakeTraceParent":             testWakeTraceParent,
	}
	for name, fn := range tests {
		t.Run(name, func(t *testing.T) {
			// A time in the middle of an hour, so that the hourly cap's
			// window does not turn during a test by accident.
			c := NewClock(time.Date(2026, 3, 1, 10, 20, 0, 0, time.UTC))
			fn(t, open(t, c.Now), c)
		})
	}
}

func wakeConfig(g *switchboard.Agent, debounce time.Duration, perHour int, now time.Time) *switchboard.WakeConfig {
	return &switchboard.WakeConfig{AgentID: g.ID, URL: "https://wake.example/hook", Key: "k", Preset: wake.PresetGeneric,
		Debounce: debounce, MaxPerHour: perHour, KeyHeader: "Authorization", KeyPrefix: "Bearer ",
		OpenClawAgentID: "main", CLICommand: "switchboard", CreatedAt: now, UpdatedAt: now}
}

// inbound creates a task in context ctxID whose change queues a wake.
func inbound(t *testing.T, s Store, g *switchboard.Agent, ctxID, messageID string, now time.Time) *switchboard.Task {
	t.Helper()
	task := newTask(g, "bob", ctxID, messageID, now)
	change := created(task, nil)
	change.Wake = &switchboard.WakeRequest{AgentID: g.ID, ContextID: ctxID, TaskID: task.ID(), Kind: switchboard.WakeInbound,
		From: "bob", Preview: "hello " + messageID}
	_, err := s.CreateTask(context.Background(), task, change)
	must(t, err)
	return task
}

// claimWakes claims every due wake for holder.
func claimWakes(t *testing.T, s Store, holder string) []*switchboard.Wake {
	t.Helper()
	ws, err := s.ClaimWakes(context.Background(), holder, 100, time.Minute)
	must(t, err)
	return ws
}

func testWakeConfig(t *testing.T, s Store, c *Clock) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "sleeper")
	_, err := s.FindWakeConfig(ctx, g.ID)
	wantCode(t, err, switchboard.ENOTFOUND)
	wantCode(t, s.SaveWakeConfig(ctx, wakeConfig(&switchboard.Agent{ID: switchboard.NewID()}, 0, 0, c.Now())), switchboard.ENOTFOUND)

	cfg := wakeConfig(g, 10*time.Second, 25, c.Now())
	cfg.Preset, cfg.HMACSecret, cfg.KeyPrefix, cfg.BodyTemplate = wake.PresetHermes, "s3cret", "", `{"a":"{{taskId}}"}`
	must(t, s.SaveWakeConfig(ctx, cfg))
	got, err := s.FindWakeConfig(ctx, g.ID)
	must(t, err)
	if *got != *cfg {
		t.Fatalf("found %+v\nwant  %+v", got, cfg)
	}
	cfg.URL, cfg.Debounce = "https://other.example/", 0
	must(t, s.SaveWakeConfig(ctx, cfg))
	if got, _ = s.FindWakeConfig(ctx, g.ID); got.URL != cfg.URL || got.Debounce != 0 {
		t.Fatalf("replaced config = %+v", got)
	}

	// Removing the configuration drops what was pending.
	cfg.Debounce = time.Minute
	must(t, s.SaveWakeConfig(ctx, cfg))
	inbound(t, s, g, "c1", "m1", c.Now())
	must(t, s.DeleteWakeConfig(ctx, g.ID))
	wantCode(t, s.DeleteWakeConfig(ctx, g.ID), switchboard.ENOTFOUND)
	ws, err := s.FindWakes(ctx, g.ID, 10)
	must(t, err)
	if len(ws) != 1 || ws[0].State != switchboard.WakeDropped {
		t.Fatalf("wakes after unset = %+v", ws)
	}
	c.Add(time.Hour)
	if got := claimWakes(t, s, "h"); len(got) != 0 {
		t.Fatalf("claimed %d wakes of a removed configuration", len(got))
	}
}

func testWakeWithMessage(t *testing.T, s Store, c *Clock) {
	ctx := context.Background()
	alice := newAccount(t, s, "alice")
	g, quiet := newAgent(t, s, alice, "sleeper"), newAgent(t, s, alice, "quiet")
	must(t, s.SaveWakeConfig(ctx, wakeConfig(g, 10*time.Second, 0, c.Now())))

	// No configuration, no wake.
	inbound(t, s, quiet, "c1", "q1", c.Now())
	queued, err := s.EnqueueWake(ctx, &switchboard.WakeRequest{AgentID: quiet.ID, ContextID: "c1", Kind: switchboard.WakeOutboundUpdate})
	must(t, err)
	if ws, _ := s.FindWakes(ctx, quiet.ID, 10); queued || len(ws) != 0 {
		t.Fatalf("an agent without a configuration got wakes: %v %+v", queued, ws)
	}

	// A burst in one conversation is one wake; another conversation is
	// another; a follow-up on a task merges too.
	t0 := c.Now()
	first := inbound(t, s, g, "c1", "m1", c.Now())
	c.Add(3 * time.Second)
	second := inbound(t, s, g, "c1", "m2", c.Now())
	other := inbound(t, s, g, "c2", "m3", c.Now())
	_, _, err = s.ModifyTask(ctx, first.ID(), func(*switchboard.Task) (*switchboard.TaskChange, error) {
		return &switchboard.TaskChange{Wake: &switchboard.WakeRequest{AgentID: g.ID, ContextID: "c1", TaskID: first.ID(),
			Kind: switchboard.WakeInbound, From: "carol", Preview: "again"}}, nil
	})
	must(t, err)
	// An outbound update of the same conversation is a wake of its own kind.
	queued, err = s.EnqueueWake(ctx, &switchboard.WakeRequest{AgentID: g.ID, ContextID: "c1", TaskID: "remote-1",
		Kind: switchboard.WakeOutboundUpdate, From: "remote", Preview: "[update] done"})
	must(t, err)
	if !queued {
		t.Fatal("EnqueueWake reported nothing queued")
	}

	ws, err := s.FindWakes(ctx, g.ID, 10)
	must(t, err)
	if len(ws) != 3 {
		t.Fatalf("%d wakes, want 3: %+v", len(ws), ws)
	}
	var burst *switchboard.Wake
	for _, w := range ws {
		if w.ContextID == "c1" && w.Kind == switchboard.WakeInbound {
			burst = w
		}
	}
	if burst == nil || burst.Count != 3 || burst.State != switchboard.WakePending || burst.From != "carol" || burst.Preview != "again" ||
		!slices.Equal(burst.TaskIDs, []a2a.TaskID{first.ID(), second.ID()}) || !burst.DueAt.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("burst wake = %+v (tasks %v, %v)", burst, first.ID(), second.ID())
	}
	_ = other

	// A message whose task cannot be written queues no wake.
	dup := newTask(g, "bob", "c9", "m1", c.Now())
	change := created(dup, nil)
	change.Wake = &switchboard.WakeRequest{AgentID: g.ID, ContextID: "c9", TaskID: dup.ID(), Kind: switchboard.WakeInbound}
	_, err = s.CreateTask(ctx, dup, change)
	if err == nil {
		t.Fatal("duplicate message accepted")
	}
	if ws, _ := s.FindWakes(ctx, g.ID, 10); len(ws) != 3 {
		t.Fatalf("a failed task change queued a wake: %d wakes", len(ws))
	}
}

func testWakeClaim(t *testing.T, s Store, c *Clock) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "sleeper")
	must(t, s.SaveWakeConfig(ctx, wakeConfig(g, 10*time.Second, 0, c.Now())))
	a := inbound(t, s, g, "c1", "m1", c.Now())
	c.Add(9 * time.Second)
	if got := claimWakes(t, s, "h1"); len(got) != 0 {
		t.Fatalf("claimed %d wakes inside the debounce window", len(got))
	}
	b := inbound(t, s, g, "c1", "m2", c.Now())
	c.Add(time.Second)
	got := claimWakes(t, s, "h1")
	if len(got) != 1 || got[0].State != switchboard.WakeSending || got[0].Holder != "h1" ||
		!slices.Equal(got[0].TaskIDs, []a2a.TaskID{a.ID(), b.ID()}) || got[0].TaskID != b.ID() {
		t.Fatalf("claimed %+v", got)
	}
	w := got[0]
	if again := claimWakes(t, s, "h2"); len(again) != 0 {
		t.Fatal("a claimed wake was claimed again within its lease")
	}
	// A message while the wake is being sent starts a new one.
	inbound(t, s, g, "c1", "m3", c.Now())

	// The lease ends without an outcome (the sender died): sent again,
	// before the newer wake, which became due meanwhile.
	c.Add(time.Minute + time.Second)
	got = claimWakes(t, s, "h2")
	if len(got) != 2 || got[0].ID != w.ID || got[0].Holder != "h2" || got[1].ID == w.ID {
		t.Fatalf("after the lease: %+v", got)
	}
	if ok, err := s.FinishWake(ctx, w.ID, "h1", switchboard.WakeSent, 200, ""); err != nil || ok {
		t.Fatalf("the old holder finished the wake: %v %v", ok, err)
	}
	if ok, err := s.FinishWake(ctx, w.ID, "h2", switchboard.WakeSent, 200, ""); err != nil || !ok {
		t.Fatalf("finish: %v %v", ok, err)
	}
	if _, err := s.FinishWake(ctx, w.ID, "h2", switchboard.WakePending, 0, ""); err == nil {
		t.Fatal("FinishWake accepted a state that is not final")
	}
	ws, _ := s.FindWakes(ctx, g.ID, 10)
	if len(ws) != 2 || ws[1].ID != w.ID || ws[1].State != switchboard.WakeSent || ws[1].LastStatus != 200 || ws[0].State != switchboard.WakeSending {
		t.Fatalf("wakes = %+v", ws)
	}
}

func testWakeCap(t *testing.T, s Store, c *Clock) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "sleeper")
	must(t, s.SaveWakeConfig(ctx, wakeConfig(g, 0, 2, c.Now())))
	for i := range 3 {
		inbound(t, s, g, fmt.Sprintf("c%d", i), fmt.Sprintf("m%d", i), c.Now())
	}
	first := claimWakes(t, s, "h")
	if len(first) != 2 {
		t.Fatalf("claimed %d wakes under a cap of 2", len(first))
	}
	for _, w := range first {
		_, err := s.FinishWake(ctx, w.ID, "h", switchboard.WakeSent, 200, "")
		must(t, err)
	}
	c.Add(time.Minute)
	if got := claimWakes(t, s, "h"); len(got) != 0 {
		t.Fatalf("claimed %d more wakes within the hour", len(got))
	}
	ws, _ := s.FindWakes(ctx, g.ID, 10)
	next := time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC)
	waiting := 0
	for _, w := range ws {
		if w.State == switchboard.WakePending {
			waiting++
			if !w.DueAt.Equal(next) {
				t.Fatalf("the wake over the cap is due at %v, want %v", w.DueAt, next)
			}
		}
	}
	if waiting != 1 {
		t.Fatalf("%d wakes wait for the next hour, want 1", waiting)
	}
	c.Add(40 * time.Minute) // 11:01
	if got := claimWakes(t, s, "h"); len(got) != 1 {
		t.Fatalf("claimed %d wakes in the next hour, want 1", len(got))
	}
}

func testWakeRetryMerge(t *testing.T, s Store, c *Clock) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "sleeper")
	must(t, s.SaveWakeConfig(ctx, wakeConfig(g, 10*time.Second, 0, c.Now())))
	a := inbound(t, s, g, "c1", "m1", c.Now())
	c.Add(10 * time.Second)
	w := claimWakes(t, s, "h")[0]

	// A 429: back to pending, due after Retry-After, one retry counted.
	ok, err := s.RetryWake(ctx, w.ID, "h", c.Now().Add(time.Minute), true, 429, "HTTP 429")
	if err != nil || !ok {
		t.Fatalf("retry: %v %v", ok, err)
	}
	if ok, _ := s.RetryWake(ctx, w.ID, "h", c.Now(), true, 429, ""); ok {
		t.Fatal("a pending wake was retried by a holder that no longer holds it")
	}
	c.Add(59 * time.Second)
	if got := claimWakes(t, s, "h"); len(got) != 0 {
		t.Fatal("claimed before Retry-After")
	}
	c.Add(time.Second)
	w = claimWakes(t, s, "h")[0]
	if w.Retries != 1 || w.LastStatus != 429 {
		t.Fatalf("after one retry: %+v", w)
	}

	// While it is sent again, a new message opens a pending wake; the
	// second 429 merges the two: one wake, both tasks, the later due time.
	b := inbound(t, s, g, "c1", "m2", c.Now())
	ok, err = s.RetryWake(ctx, w.ID, "h", c.Now().Add(2*time.Minute), true, 503, "HTTP 503")
	if err != nil || !ok {
		t.Fatalf("retry: %v %v", ok, err)
	}
	ws, _ := s.FindWakes(ctx, g.ID, 10)
	if len(ws) != 1 || ws[0].Retries != 2 || ws[0].Count != 2 || !slices.Equal(ws[0].TaskIDs, []a2a.TaskID{a.ID(), b.ID()}) ||
		!ws[0].DueAt.Equal(c.Now().Add(2*time.Minute)) {
		t.Fatalf("merged wakes = %+v", ws)
	}

	// A shutdown gives a wake back without counting a retry.
	c.Add(2 * time.Minute)
	w = claimWakes(t, s, "h")[0]
	_, err = s.RetryWake(ctx, w.ID, "h", c.Now(), false, 0, "")
	must(t, err)
	if w = claimWakes(t, s, "h")[0]; w.Retries != 2 {
		t.Fatalf("a give-back counted as a retry: %+v", w)
	}
}

// testWakeLeaseRetries: a wake whose sender dies mid-attempt every time
// (its lease ends without an outcome) is claimed again WakeMaxRetries
// times, each counted as a retry, and then dropped, not claimed forever.
func testWakeLeaseRetries(t *testing.T, s Store, c *Clock) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "sleeper")
	must(t, s.SaveWakeConfig(ctx, wakeConfig(g, 0, 0, c.Now())))
	inbound(t, s, g, "c1", "m1", c.Now())
	w := claimWakes(t, s, "h0")[0]
	if w.Retries != 0 {
		t.Fatalf("a first claim counted a retry: %+v", w)
	}
	for i := 1; i <= switchboard.WakeMaxRetries; i++ {
		c.Add(time.Minute + time.Second) // the lease of claimWakes ends
		got := claimWakes(t, s, fmt.Sprintf("h%d", i))
		if len(got) != 1 || got[0].ID != w.ID || got[0].Retries != i {
			t.Fatalf("claim %d after the lease ended: %+v", i, got)
		}
		if ws, _ := s.FindWakes(ctx, g.ID, 10); ws[0].Retries != i {
			t.Fatalf("stored retries after claim %d = %d", i, ws[0].Retries)
		}
	}
	c.Add(time.Minute + time.Second)
	if got := claimWakes(t, s, "last"); len(got) != 0 {
		t.Fatalf("claimed past the retry limit: %+v", got)
	}
	ws, _ := s.FindWakes(ctx, g.ID, 10)
	if len(ws) != 1 || ws[0].State != switchboard.WakeDropped || ws[0].Holder != "" || ws[0].LastError == "" {
		t.Fatalf("wake past the retry limit = %+v", ws[0])
	}
	c.Add(time.Hour)
	if got := claimWakes(t, s, "later"); len(got) != 0 {
		t.Fatalf("a dropped wake was claimed: %+v", got)
	}
	// A wake given back (a sender shutting down) counts no retry.
	inbound(t, s, g, "c2", "m2", c.Now())
	w = claimWakes(t, s, "h")[0]
	_, err := s.RetryWake(ctx, w.ID, "h", c.Now(), false, 0, "")
	must(t, err)
	if w = claimWakes(t, s, "h")[0]; w.Retries != 0 {
		t.Fatalf("a given-back wake counted a retry: %+v", w)
	}
}

// testWakeRetryRace retries a claimed wake while a new message of its
// conversation queues a pending wake, both at once, many times: whatever
// their order (on PostgreSQL the message may commit between RetryWake's
// look for a pending wake and its own return to pending), the retry
// succeeds and the conversation is left with one pending wake naming both
// tasks, with the retry counted and its wait kept.
func testWakeRetryRace(t *testing.T, s Store, c *Clock) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "sleeper")
	must(t, s.SaveWakeConfig(ctx, wakeConfig(g, 0, 0, c.Now())))
	const rounds = 40
	for i := range rounds {
		ctxID := fmt.Sprintf("c%d", i)
		a := inbound(t, s, g, ctxID, fmt.Sprintf("a%d", i), c.Now())
		ws := claimWakes(t, s, "h")
		if len(ws) != 1 {
			t.Fatalf("round %d: claimed %d wakes", i, len(ws))
		}
		b := newTask(g, "bob", ctxID, fmt.Sprintf("b%d", i), c.Now())
		change := created(b, nil)
		change.Wake = &switchboard.WakeRequest{AgentID: g.ID, ContextID: ctxID, TaskID: b.ID(), Kind: switchboard.WakeInbound, From: "bob"}
		due := c.Now().Add(time.Minute)
		var wg sync.WaitGroup
		var createErr, retryErr error
		var retried bool
		wg.Go(func() { _, createErr = s.CreateTask(ctx, b, change) })
		wg.Go(func() { retried, retryErr = s.RetryWake(ctx, ws[0].ID, "h", due, true, 429, "HTTP 429") })
		wg.Wait()
		if createErr != nil || retryErr != nil || !retried {
			t.Fatalf("round %d: message: %v; retry: %v %v", i, createErr, retried, retryErr)
		}
		all, err := s.FindWakes(ctx, g.ID, 3)
		must(t, err)
		var left []*switchboard.Wake
		for _, w := range all {
			if w.ContextID == ctxID {
				left = append(left, w)
			}
		}
		if len(left) != 1 || left[0].State != switchboard.WakePending || left[0].Retries != 1 || left[0].Count != 2 ||
			!left[0].DueAt.Equal(due) || !sameTasks(left[0].TaskIDs, a.ID(), b.ID()) {
			t.Fatalf("round %d: wakes of the conversation = %s", i, describeWakes(left))
		}
		// Finish it, so that the next round claims only its own.
		c.Add(time.Minute)
		for _, w := range claimWakes(t, s, "h") {
			_, err := s.FinishWake(ctx, w.ID, "h", switchboard.WakeSent, 200, "")
			must(t, err)
		}
	}
}

func testWakeClaimConcurrent(t *testing.T, s Store, c *Clock) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "sleeper")
	must(t, s.SaveWakeConfig(ctx, wakeConfig(g, 0, 0, c.Now())))
	const n = 20
	for i := range n {
		inbound(t, s, g, fmt.Sprintf("c%d", i), fmt.Sprintf("m%d", i), c.Now())
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for {
				ws, err := s.ClaimWakes(ctx, fmt.Sprintf("h%d", i), 3, time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				if len(ws) == 0 {
					return
				}
				mu.Lock()
				for _, w := range ws {
					seen[w.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("claimed %d distinct wakes, want %d", len(seen), n)
	}
	for id, k := range seen {
		if k != 1 {
			t.Fatalf("wake %s claimed %d times", id, k)
		}
	}
}

func testWakeAgentDelete(t *testing.T, s Store, c *Clock) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "sleeper")
	must(t, s.SaveWakeConfig(ctx, wakeConfig(g, 0, 5, c.Now())))
	inbound(t, s, g, "c1", "m1", c.Now())
	claimWakes(t, s, "h")
	inbound(t, s, g, "c2", "m2", c.Now())
	must(t, s.DeleteAgent(ctx, g.ID))
	_, err := s.FindWakeConfig(ctx, g.ID)
	wantCode(t, err, switchboard.ENOTFOUND)
	if ws, _ := s.FindWakes(ctx, g.ID, 10); len(ws) != 0 {
		t.Fatalf("wakes survive their agent: %+v", ws)
	}
	c.Add(time.Hour)
	if got := claimWakes(t, s, "h"); len(got) != 0 {
		t.Fatalf("claimed %d wakes of a deleted agent", len(got))
	}
}

func testWakePrune(t *testing.T, s Store, c *Clock) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "sleeper")
	must(t, s.SaveWakeConfig(ctx, wakeConfig(g, 0, 0, c.Now())))
	inbound(t, s, g, "c1", "m1", c.Now())
	w := claimWakes(t, s, "h")[0]
	_, err := s.FinishWake(ctx, w.ID, "h", switchboard.WakeSent, 204, "")
	must(t, err)
	c.Add(time.Hour)
	inbound(t, s, g, "c2", "m2", c.Now()) // pending: kept
	n, err := s.PruneWakes(ctx, c.Now().Add(-time.Minute))
	must(t, err)
	ws, _ := s.FindWakes(ctx, g.ID, 10)
	if n != 1 || len(ws) != 1 || ws[0].ContextID != "c2" {
		t.Fatalf("pruned %d, left %+v", n, ws)
	}
}

// sameTasks reports whether got holds the tasks want, in any order (tasks
// added at the same clock time come in id order).
func sameTasks(got []a2a.TaskID, want ...a2a.TaskID) bool {
	return slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want)))
}

// describeWakes shows wakes for a failure message.
func describeWakes(ws []*switchboard.Wake) string {
	out := ""
	for _, w := range ws {
		out += fmt.Sprintf("\n%+v", *w)
	}
	return out
}

// testWakeTaskIDsBounded: a conversation that many peers write into while
// its wake waits gets one wake naming its first MaxWakeTaskIDs tasks and
// counting every message.
func testWakeTaskIDsBounded(t *testing.T, s Store, c *Clock) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "sleeper")
	must(t, s.SaveWakeConfig(ctx, wakeConfig(g, time.Minute, 0, c.Now())))
	n := switchboard.MaxWakeTaskIDs + 5
	var first []a2a.TaskID
	for i := range n {
		c.Add(time.Millisecond)
		task := inbound(t, s, g, "busy", fmt.Sprint("m", i), c.Now())
		if len(first) < switchboard.MaxWakeTaskIDs {
			first = append(first, task.ID())
		}
	}
	ws, err := s.FindWakes(ctx, g.ID, 10)
	must(t, err)
	if len(ws) != 1 {
		t.Fatalf("%d wakes, want 1", len(ws))
	}
	if ws[0].Count != n || !slices.Equal(ws[0].TaskIDs, first) {
		t.Fatalf("count %d, want %d; %d task ids, want the first %d", ws[0].Count, n, len(ws[0].TaskIDs), len(first))
	}
}

// testWakePerPeer: two peers that send the same contextId to an agent are
// two conversations: each gets a pending wake of its own, naming only its
// own tasks and sender, and a retry of one never merges into the other.
func testWakePerPeer(t *testing.T, s Store, c *Clock) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "sleeper")
	must(t, s.SaveWakeConfig(ctx, wakeConfig(g, 10*time.Second, 0, c.Now())))
	send := func(peer, messageID string) *switchboard.Task {
		t.Helper()
		c.Add(time.Millisecond) // a wake lists its tasks in the order they came
		task := newTask(g, peer, "project-x", messageID, c.Now())
		change := created(task, nil)
		change.Wake = &switchboard.WakeRequest{AgentID: g.ID, PeerID: task.PeerID, ContextID: "project-x", TaskID: task.ID(),
			Kind: switchboard.WakeInbound, From: peer, Preview: "from " + peer}
		_, err := s.CreateTask(ctx, task, change)
		must(t, err)
		return task
	}
	bob1, eve, bob2 := send("bob", "m1"), send("eve", "m2"), send("bob", "m3")
	byPeer := func() map[string]*switchboard.Wake {
		t.Helper()
		ws, err := s.FindWakes(ctx, g.ID, 10)
		must(t, err)
		m := map[string]*switchboard.Wake{}
		for _, w := range ws {
			if m[w.PeerID] != nil {
				t.Fatalf("two wakes for peer %s: %+v", w.PeerID, ws)
			}
			m[w.PeerID] = w
		}
		return m
	}
	ws := byPeer()
	b, e := ws[bob1.PeerID], ws[eve.PeerID]
	if len(ws) != 2 || b == nil || e == nil {
		t.Fatalf("wakes by peer: %+v", ws)
	}
	if b.From != "bob" || b.Count != 2 || !slices.Equal(b.TaskIDs, []a2a.TaskID{bob1.ID(), bob2.ID()}) {
		t.Fatalf("bob's wake = %+v", b)
	}
	if e.From != "eve" || e.Count != 1 || !slices.Equal(e.TaskIDs, []a2a.TaskID{eve.ID()}) {
		t.Fatalf("eve's wake = %+v", e)
	}

	// Bob's wake is sent and answered 429 while eve writes again: eve's
	// message merges into her own pending wake, and bob's retry does not
	// merge into it.
	c.Add(10 * time.Second)
	claimed := claimWakes(t, s, "h")
	if len(claimed) != 2 {
		t.Fatalf("claimed %d wakes, want 2", len(claimed))
	}
	for _, w := range claimed {
		if w.PeerID == eve.PeerID {
			ok, err := s.FinishWake(ctx, w.ID, "h", switchboard.WakeSent, 200, "")
			if err != nil || !ok {
				t.Fatalf("finish: %v %v", ok, err)
			}
		}
	}
	eve2 := send("eve", "m4")
	for _, w := range claimed {
		if w.PeerID == bob1.PeerID {
			ok, err := s.RetryWake(ctx, w.ID, "h", c.Now().Add(time.Minute), true, 429, "HTTP 429")
			if err != nil || !ok {
				t.Fatalf("retry: %v %v", ok, err)
			}
		}
	}
	var pending []*switchboard.Wake
	all, err := s.FindWakes(ctx, g.ID, 10)
	must(t, err)
	for _, w := range all {
		if w.State == switchboard.WakePending {
			pending = append(pending, w)
		}
	}
	if len(pending) != 2 {
		t.Fatalf("%d pending wakes, want bob's retry and eve's new one: %+v", len(pending), all)
	}
	for _, w := range pending {
		switch w.PeerID {
		case bob1.PeerID:
			if w.Retries != 1 || !slices.Equal(w.TaskIDs, []a2a.TaskID{bob1.ID(), bob2.ID()}) {
				t.Fatalf("bob's retried wake = %+v", w)
			}
		case eve.PeerID:
			if w.Retries != 0 || !slices.Equal(w.TaskIDs, []a2a.TaskID{eve2.ID()}) {
				t.Fatalf("eve's new wake = %+v", w)
			}
		default:
			t.Fatalf("a wake of peer %q", w.PeerID)
		}
	}
}
