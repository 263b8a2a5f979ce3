package ratelimit

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-dev/switchboard"
)

var _ switchboard.RateLimiter = (*Shared)(nil)

// Counter counts requests per key and window where every instance of a
// deployment sees the same counts (sqlstore on PostgreSQL).
type Counter interface {
	// CountRequest adds one request for key to the window starting at
	// window and returns the window's count.
	CountRequest(ctx context.Context, key string, window time.Time) (int, error)
	// DeleteRateCounts forgets the windows that started before t.
	DeleteRateCounts(ctx context.Context, before time.Time) error
}

// Shared is a fixed-window limiter whose counts live in a Counter, so that
// a peer gets its limit once across all instances, not once per instance.
// Each request costs one write.
type Shared struct {
	counter Counter
	limit   int
	window  time.Duration
	// Now returns the current time; tests may replace it before first use.
	Now func() time.Time

	// Log receives the counter's failures, at most one line a minute; nil:
	// not logged. Set it before first use.
	Log *slog.Logger

	failures atomic.Int64 // requests let through because the counter failed

	mu       sync.Mutex
	pruned   time.Time // guarded by mu: the window whose predecessors were last deleted
	reported time.Time // guarded by mu: when a failure was last logged
}

// NewShared returns a limiter that allows limit requests per key per
// window, counted in c. A limit of 0 or less allows everything.
func NewShared(c Counter, limit int, window time.Duration) *Shared {
	return &Shared{counter: c, limit: limit, window: window, Now: time.Now}
}

// Allow implements switchboard.RateLimiter. Requests refused still count,
// so a client that ignores Retry-After stays refused for the window. When
// the counter fails, the request is allowed (fail open) and the failure
// counted (Failures) and logged.
func (s *Shared) Allow(ctx context.Context, key string) (bool, time.Duration, error) {
	if s.limit <= 0 {
		return true, 0, nil
	}
	now := s.Now()
	start := now.Truncate(s.window)
	s.prune(ctx, start)
	n, err := s.counter.CountRequest(ctx, key, start)
	if err != nil {
		s.failed(now, err)
		return true, 0, err
	}
	if n > s.limit {
		return false, start.Add(s.window).Sub(now), nil
	}
	return true, 0, nil
}

// prune deletes the counts of windows before the previous one, once per
// window on each instance.
func (s *Shared) prune(ctx context.Context, start time.Time) {
	s.mu.Lock()
	due := !start.Equal(s.pruned)
	s.pruned = start
	s.mu.Unlock()
	if due {
		_ = s.counter.DeleteRateCounts(ctx, start.Add(-s.window))
	}
}

// Failures returns how many requests were let through because the counter
// failed.
func (s *Shared) Failures() int64 { return s.failures.Load() }

// failed counts a failure of the counter and logs it, at most once a
// minute, with how many requests it let through so far.
func (s *Shared) failed(now time.Time, err error) {
	n := s.failures.Add(1)
	s.mu.Lock()
	report := now.Sub(s.reported) >= time.Minute
	if report {
		s.reported = now
	}
	s.mu.Unlock()
	if report && s.Log != nil {
		s.Log.Warn("rate limit not counted: letting requests through", "err", err, "failures", n)
	}
}
