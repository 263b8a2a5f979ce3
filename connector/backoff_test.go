package connector

import (
	"testing"
)

// TestBackoff checks the reconnection waits: jittered around 0.5 s, 1 s,
// 2 s … capped at 30 s, and back to the start after a reset.
func TestBackoff(t *testing.T) {
	var b backoff
	nominal := BackoffMin
	for i := 0; i < 12; i++ {
		got := b.next()
		lo, hi := nominal/2, min(nominal*3/2, BackoffMax)
		if got < lo || got > hi {
			t.Fatalf("wait %d: got %s, want within [%s, %s]", i, got, lo, hi)
		}
		nominal = min(nominal*2, BackoffMax)
	}
	b.reset()
	if got, want := b.next(), BackoffMin*3/2; got > want {
		t.Fatalf("after a reset: got %s, want at most %s", got, want)
	}
	for i := 0; i < 20; i++ {
		if p := replacedPause(); p < ReplacedPauseMin || p >= ReplacedPauseMax {
			t.Fatalf("replaced pause %s out of [%s, %s)", p, ReplacedPauseMin, ReplacedPauseMax)
		}
	}
}
