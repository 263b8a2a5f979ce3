package connector

import (
	"math/rand/v2"
	"time"
)

// Reconnection timing (docs/connector-protocol.md, "Close codes").
const (
	// BackoffMin is the nominal wait before the first reconnection attempt.
	// Each wait is jittered to between half and one and a half times its
	// nominal value, so the first reconnection typically happens within
	// 0.25–0.75 s and the second within about 2 s.
	BackoffMin = 500 * time.Millisecond
	// BackoffMax caps the wait between attempts.
	BackoffMax = 30 * time.Second
	// StableAfter is how long a connection must have lasted (after hello)
	// for the backoff to start again from BackoffMin.
	StableAfter = 10 * time.Second
	// ReplacedPauseMin and ReplacedPauseMax bound the pause after the server
	// closed the connection because a newer connection of the same agent
	// took over (close code 4001): two connectors for one agent would
	// otherwise replace each other in a loop.
	ReplacedPauseMin = 30 * time.Second
	ReplacedPauseMax = 60 * time.Second
)

// backoff computes the waits between connection attempts: exponential from
// BackoffMin, doubling, capped at BackoffMax, each jittered.
type backoff struct {
	attempt int // attempts since the last reset
}

// next returns the wait before the next attempt.
func (b *backoff) next() time.Duration {
	d := BackoffMin
	for i := 0; i < b.attempt && d < BackoffMax; i++ {
		d *= 2
	}
	b.attempt++
	return min(jitter(d), BackoffMax)
}

// reset starts the sequence again, after a connection that lasted.
func (b *backoff) reset() { b.attempt = 0 }

// jitter returns d scaled by a random factor in [0.5, 1.5).
func jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.5 + rand.Float64()))
}

// replacedPause returns a random pause in [ReplacedPauseMin, ReplacedPauseMax).
func replacedPause() time.Duration {
	return ReplacedPauseMin + rand.N(ReplacedPauseMax-ReplacedPauseMin)
}
