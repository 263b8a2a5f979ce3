package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/jobs"
)

// ErrLoopStopped is the cause of the context of every loop once the
// supervisor stops them.
var ErrLoopStopped = errors.New("server: loops stopped")

// loopBackoff is the wait before a loop that failed runs again: 1 s,
// doubling to a minute. A loop that ran for longer than loopSteady before
// it failed starts again from the shortest wait.
var loopBackoff = jobs.Backoff{Min: time.Second, Max: time.Minute, Jitter: rand.Float64}

// loopSteady is how long a loop must have run for its next failure to
// count as the first again.
const loopSteady = 5 * time.Minute

// supervisor runs the server's background loops (the sweeper, the
// dispatchers, the senders) under one rule for their errors:
//
//   - a loop returns nil when its context ends: it is done;
//   - a loop that returns an error, or returns while its context is
//     alive, is logged at ERROR with its name, and runs again after a
//     backoff (loopBackoff), for ever: a store or bus that is away for a
//     while comes back;
//   - an error that says the process cannot go on (the bus closed for
//     good, switchboard.ErrBusClosed, or an error wrapping errFatal) ends
//     the loops and is reported on Fatal: serve exits non-zero, and its
//     supervisor (systemd) starts it again.
//
// A panic in a loop is not recovered: it ends the process, as anywhere.
type supervisor struct {
	log    *slog.Logger
	ctx    context.Context // the loops' context, ended by stop
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup

	fatalOnce sync.Once
	fatal     chan error // receives the first fatal error; capacity 1

	// wait is how a failed loop waits before it runs again; tests replace it.
	wait func(ctx context.Context, d time.Duration) bool
}

// errFatal marks an error after which the process must end.
var errFatal = errors.New("fatal")

// newSupervisor returns a supervisor whose loops run until stop.
func newSupervisor(log *slog.Logger) *supervisor {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &supervisor{log: log, ctx: ctx, cancel: cancel, fatal: make(chan error, 1), wait: sleepCtx}
}

// Go runs loop under the supervisor's rule, named name in its logs.
func (s *supervisor) Go(name string, loop func(ctx context.Context) error) {
	s.wg.Go(func() { s.supervise(name, loop) })
}

// supervise runs one loop until the supervisor stops or the loop fails
// fatally.
func (s *supervisor) supervise(name string, loop func(ctx context.Context) error) {
	failures := 0
	for {
		started := time.Now()
		err := loop(s.ctx)
		if s.ctx.Err() != nil {
			return // stopped: whatever the loop said, it was told to end
		}
		if err == nil {
			err = errors.New("it returned while the server runs")
		}
		if errors.Is(err, switchboard.ErrBusClosed) || errors.Is(err, errFatal) {
			s.log.Error("background loop cannot go on; the server stops", "loop", name, "err", err)
			s.fail(fmt.Errorf("%s: %w", name, err))
			return
		}
		if time.Since(started) > loopSteady {
			failures = 0
		}
		failures++
		d := loopBackoff.Wait(failures, 0)
		s.log.Error("background loop failed; running it again", "loop", name, "err", err, "failures", failures, "retry_in", d.Round(time.Millisecond))
		if !s.wait(s.ctx, d) {
			return
		}
	}
}

// fail reports the first fatal error on Fatal and stops every loop.
func (s *supervisor) fail(err error) {
	s.fatalOnce.Do(func() {
		s.fatal <- err
		s.cancel(err)
	})
}

// Fatal receives the error of a loop that cannot go on, once.
func (s *supervisor) Fatal() <-chan error { return s.fatal }

// stop ends every loop and waits for them. It is idempotent.
func (s *supervisor) stop() {
	s.cancel(ErrLoopStopped)
	s.wg.Wait()
}

// sleepCtx waits d, and reports false if ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
