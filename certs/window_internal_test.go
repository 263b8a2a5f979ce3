package certs

import (
	"testing"
	"time"
)

// TestWindowLimit: at most max events in any window, counted at once,
// and room again as the oldest leave the window.
func TestWindowLimit(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	l := newWindowLimit(2, time.Hour)
	l.now = func() time.Time { return now }
	for i, want := range []bool{true, true, false} {
		if got := l.Allow(); got != want {
			t.Fatalf("event %d: %v, want %v", i, got, want)
		}
	}
	now = now.Add(time.Hour - time.Nanosecond)
	if l.Allow() {
		t.Fatal("allowed before the first event left the window")
	}
	now = now.Add(time.Nanosecond)
	for i, want := range []bool{true, true, false} {
		if got := l.Allow(); got != want {
			t.Fatalf("after the window, event %d: %v, want %v (the two first left together)", i, got, want)
		}
	}
}
