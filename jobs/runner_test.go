package jobs_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/jobs"
	"github.com/switchboard-dev/switchboard/membus"
)

// queue is a store of jobs in memory: Claim hands each out once.
type queue struct {
	mu     sync.Mutex
	due    []int
	claims int
}

func (q *queue) add(js ...int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.due = append(q.due, js...)
}

func (q *queue) claim(_ context.Context, max int) ([]int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.claims++
	n := min(max, len(q.due))
	out := append([]int(nil), q.due[:n]...)
	q.due = q.due[n:]
	return out, nil
}

func newRunner(bus switchboard.Bus, q *queue, concurrency int, do func(context.Context, int)) *jobs.Runner[int] {
	return &jobs.Runner[int]{Name: "test", Bus: bus, Subject: "test", Concurrency: concurrency, Poll: time.Hour,
		Claim: q.claim, Do: do, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

// TestRunnerBoundsConcurrency runs 20 jobs with 3 slots: never more than 3
// run at once, and every job runs once, with no hint and no poll: a
// finished job makes the runner claim again.
func TestRunnerBoundsConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bus := membus.New()
		defer bus.Close()
		q := &queue{}
		for i := range 20 {
			q.add(i)
		}
		var running, most atomic.Int32
		var mu sync.Mutex
		seen := map[int]int{}
		r := newRunner(bus, q, 3, func(_ context.Context, j int) {
			n := running.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(time.Second) // the bubble's clock: work that takes a while
			running.Add(-1)
			mu.Lock()
			seen[j]++
			mu.Unlock()
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- r.Run(ctx) }()
		synctest.Wait()
		for range 20 {
			testwait.Advance(time.Second)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if most.Load() != 3 {
			t.Fatalf("at most %d jobs ran at once, want 3", most.Load())
		}
		if len(seen) != 20 {
			t.Fatalf("%d jobs ran, want 20", len(seen))
		}
		for j, n := range seen {
			if n != 1 {
				t.Fatalf("job %d ran %d times", j, n)
			}
		}
	})
}

// TestRunnerClaimsOnHintAndPoll: work that comes with a hint is claimed at
// once; work that comes without one waits for the poll, not longer.
func TestRunnerClaimsOnHintAndPoll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bus := membus.New()
		defer bus.Close()
		q := &queue{}
		ran := make(chan int, 10)
		r := newRunner(bus, q, 2, func(_ context.Context, j int) { ran <- j })
		r.Poll = time.Minute
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go r.Run(ctx)
		synctest.Wait()

		q.add(1)
		if err := bus.Notify(ctx, "test"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if len(ran) != 1 {
			t.Fatalf("%d jobs ran after a hint, want 1", len(ran))
		}
		<-ran

		start := time.Now()
		q.add(2)
		if got := <-ran; got != 2 {
			t.Fatalf("ran %d", got)
		}
		if waited := time.Since(start); waited > time.Minute {
			t.Fatalf("a job without a hint waited %s, longer than the poll", waited)
		}
		if time.Since(start) == 0 {
			t.Fatal("a job without a hint ran before the poll: nothing told the runner")
		}
	})
}

// TestRunnerShutdown: ending ctx cuts the jobs in flight short (Do sees
// the end and gives them back) and Run returns only after they have
// finished; jobs claimed as ctx ended are handed to Do all the same.
func TestRunnerShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bus := membus.New()
		defer bus.Close()
		q := &queue{}
		q.add(1, 2)
		var gaveBack atomic.Int32
		r := newRunner(bus, q, 4, func(ctx context.Context, j int) {
			<-ctx.Done()
			time.Sleep(time.Second) // recording the give-back takes a while
			gaveBack.Add(1)
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- r.Run(ctx) }()
		synctest.Wait()
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if gaveBack.Load() != 2 {
			t.Fatalf("Run returned with %d of 2 jobs finished", gaveBack.Load())
		}
	})
}

// TestRunnerBusClosed: a runner whose bus closes stops with ErrBusClosed.
func TestRunnerBusClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bus := membus.New()
		r := newRunner(bus, &queue{}, 1, func(context.Context, int) {})
		done := make(chan error)
		go func() { done <- r.Run(context.Background()) }()
		synctest.Wait()
		bus.Close()
		if err := <-done; !errors.Is(err, switchboard.ErrBusClosed) {
			t.Fatalf("Run = %v, want ErrBusClosed", err)
		}
	})
}

// TestRunOnce claims what is due, up to the concurrency, runs it and
// returns once it has finished.
func TestRunOnce(t *testing.T) {
	q := &queue{}
	q.add(1, 2, 3, 4, 5)
	var ran atomic.Int32
	r := newRunner(nil, q, 3, func(context.Context, int) { ran.Add(1) })
	n, err := r.RunOnce(context.Background())
	if err != nil || n != 3 || ran.Load() != 3 {
		t.Fatalf("RunOnce = %d, %v; %d ran", n, err, ran.Load())
	}
}

// TestFailedClaimRunsNothing: a claim that fails holds none of the jobs
// it read (its transaction rolled back), so none of them is run, by
// RunOnce or by Run.
func TestFailedClaimRunsNothing(t *testing.T) {
	var ran atomic.Int32
	r := &jobs.Runner[int]{Name: "t", Concurrency: 2, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Claim: func(context.Context, int) ([]int, error) { return []int{1}, errors.New("commit failed") },
		Do:    func(context.Context, int) { ran.Add(1) }}
	if _, err := r.RunOnce(context.Background()); err == nil || ran.Load() != 0 {
		t.Fatalf("RunOnce: %v, %d jobs ran", err, ran.Load())
	}
	synctest.Test(t, func(t *testing.T) {
		bus := membus.New()
		defer bus.Close()
		r.Bus, r.Subject, r.Poll = bus, "jobs.t", time.Second
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		testwait.Advance(10 * time.Second) // polls, each claim failing
		cancel()
		<-done
		if n := ran.Load(); n != 0 {
			t.Fatalf("%d jobs of failed claims ran", n)
		}
	})
}
