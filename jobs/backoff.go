package jobs

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Backoff is the wait before a failed job is tried again: Min after the
// first failure, doubling with each failure after it, at most Max. With
// Jitter, each wait is drawn between its half and its whole, so that jobs
// that failed together do not come back together.
type Backoff struct {
	Min, Max time.Duration
	// Jitter returns a number in [0, 1) that places a wait between its
	// half and its whole; nil means no jitter.
	Jitter func() float64
}

// Wait returns the wait after the nth failed attempt (1 for the first). A
// longer retryAfter (what the receiver asked for in Retry-After) wins, up
// to Max.
func (b Backoff) Wait(n int, retryAfter time.Duration) time.Duration {
	hi := max(b.Max, b.Min)
	d := b.Min
	for i := 1; i < n && d < hi; i++ {
		d *= 2
	}
	d = min(d, hi)
	if b.Jitter != nil {
		d = d/2 + time.Duration(b.Jitter()*float64(d-d/2))
	}
	if retryAfter > d {
		d = min(retryAfter, hi)
	}
	return d
}

// ParseRetryAfter reads a Retry-After header: a number of seconds, or an
// HTTP date relative to now (negative when it is past). ok is false when
// the header is absent or unreadable. Waits longer than a week are cut to
// a week; callers bound them further.
func ParseRetryAfter(header string, now time.Time) (wait time.Duration, ok bool) {
	header = strings.TrimSpace(header)
	const week = 7 * 24 * time.Hour
	if n, err := strconv.ParseInt(header, 10, 64); err == nil && n >= 0 {
		return time.Duration(min(n, int64(week/time.Second))) * time.Second, true
	}
	if t, err := http.ParseTime(header); err == nil {
		return min(t.Sub(now), week), true
	}
	return 0, false
}
