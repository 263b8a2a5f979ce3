package ratelimit

import (
	"context"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard"
)

var _ switchboard.RateLimiter = (*Memory)(nil)

// Memory counts requests per key in fixed windows aligned to the clock (for
// a one-minute window: per calendar minute), in this process only. It
// suits a single instance; several instances need a shared limiter.
type Memory struct {
	limit  int
	window time.Duration
	// Now returns the current time; tests may replace it before first use.
	Now func() time.Time

	mu     sync.Mutex
	start  time.Time      // guarded by mu: start of the current window
	counts map[string]int // guarded by mu: requests per key in the current window
}

// NewMemory returns a limiter that allows limit requests per key per
// window. A limit of 0 or less allows everything.
func NewMemory(limit int, window time.Duration) *Memory {
	return &Memory{limit: limit, window: window, Now: time.Now, counts: make(map[string]int)}
}

// Allow implements switchboard.RateLimiter.
func (m *Memory) Allow(_ context.Context, key string) (bool, time.Duration, error) {
	if m.limit <= 0 {
		return true, 0, nil
	}
	now := m.Now()
	start := now.Truncate(m.window)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !start.Equal(m.start) {
		// A new window: every count restarts. A new map, rather than
		// clearing the old one, gives back the memory of a busy window.
		m.start = start
		m.counts = make(map[string]int, len(m.counts)/2)
	}
	if m.counts[key] >= m.limit {
		return false, start.Add(m.window).Sub(now), nil
	}
	m.counts[key]++
	return true, 0, nil
}
