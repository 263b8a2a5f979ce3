package certs

import (
	"sync"
	"time"
)

// windowLimit allows at most max events in any window of time: the limit
// of certificates asked for on demand. Allow answers at once and exactly
// (certmagic's ring-buffer limiter hands out its tickets from a goroutine,
// so a busy machine can see a refusal while the limit is far off).
type windowLimit struct {
	max    int
	window time.Duration
	now    func() time.Time

	mu     sync.Mutex
	events []time.Time // guarded by mu: the allowed events still in the window, oldest first
}

// newWindowLimit returns a limit of max events per window.
func newWindowLimit(max int, window time.Duration) *windowLimit {
	return &windowLimit{max: max, window: window, now: time.Now}
}

// Allow reports whether one more event fits in the window, and counts it
// when it does.
func (l *windowLimit) Allow() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	drop := 0
	for drop < len(l.events) && now.Sub(l.events[drop]) >= l.window {
		drop++
	}
	l.events = l.events[drop:]
	if len(l.events) >= l.max {
		return false
	}
	l.events = append(l.events, now)
	return true
}
