package jobs

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// Runner runs one kind of job: it claims due jobs, runs up to Concurrency
// of them at once, and claims again on a bus hint, when a job finishes, or
// every Poll. Set its fields, then call Run (or RunOnce); they must not
// change afterwards.
type Runner[J any] struct {
	// Name says what the runner runs, in its log lines ("push", "wake").
	Name string
	// Bus and Subject: a Notify of Subject makes the runner claim at once.
	Bus     switchboard.Bus
	Subject string
	// Concurrency is how many jobs run at once (at least 1).
	Concurrency int
	// Poll is how often the runner claims without a hint: the most that a
	// lost hint, or a retry coming due, waits.
	Poll time.Duration
	// Claim hands out up to max jobs due now, each to this runner alone
	// (none when it returns an error, whatever else it returns),
	// under a lease that outlasts one attempt.
	Claim func(ctx context.Context, max int) ([]J, error)
	// Do runs one job and records its outcome. It is called for every job
	// Claim returned, also when ctx ended meanwhile: Do then gives the job
	// back (queued again, due at once), since the receiver is not at fault.
	// What Do records it must record even once ctx has ended (with a
	// context of its own): a job left claimed waits out its lease.
	Do func(ctx context.Context, j J)
	// Log receives the claims that fail.
	Log *slog.Logger
}

// Run claims and runs jobs until ctx ends, then waits for the jobs in
// flight (which ending ctx cuts short) and returns nil. It returns
// switchboard.ErrBusClosed if the bus closes first, and the error of a
// watch that cannot start.
func (r *Runner[J]) Run(ctx context.Context) error {
	w, err := r.Bus.Watch(ctx, r.Subject)
	if err != nil {
		return err
	}
	defer w.Close()
	poll := time.NewTicker(r.Poll)
	defer poll.Stop()

	slots := make(chan struct{}, max(r.Concurrency, 1))
	again := make(chan struct{}, 1) // a job finished: a slot is free, and more may be due
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		if free := cap(slots) - len(slots); free > 0 {
			for _, j := range r.claim(ctx, free) {
				slots <- struct{}{}
				wg.Go(func() {
					defer func() { <-slots }()
					r.Do(ctx, j)
					select {
					case again <- struct{}{}:
					default:
					}
				})
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-w.C():
			if !ok {
				return switchboard.ErrBusClosed
			}
		case <-again:
		case <-poll.C:
		}
	}
}

// RunOnce claims the jobs due now, up to Concurrency, runs them at once
// and returns, once they have finished, how many it claimed.
func (r *Runner[J]) RunOnce(ctx context.Context) (int, error) {
	js, err := r.Claim(ctx, max(r.Concurrency, 1))
	if err != nil {
		js = nil // a claim that failed holds nothing, whatever it read
	}
	var wg sync.WaitGroup
	for _, j := range js {
		wg.Go(func() { r.Do(ctx, j) })
	}
	wg.Wait()
	return len(js), err
}

// claim claims up to max jobs and logs a failure that is not the end of
// ctx. A claim that failed holds nothing, whatever jobs it read (its
// transaction rolled back): they are not run.
func (r *Runner[J]) claim(ctx context.Context, max int) []J {
	js, err := r.Claim(ctx, max)
	if err != nil {
		if ctx.Err() == nil {
			r.Log.Warn("claim jobs", "jobs", r.Name, "err", err)
		}
		return nil
	}
	return js
}
