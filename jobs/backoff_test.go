package jobs_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/jobs"
)

func TestBackoffWait(t *testing.T) {
	b := jobs.Backoff{Min: time.Second, Max: 10 * time.Second}
	for n, want := range map[int]time.Duration{0: time.Second, 1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second,
		4: 8 * time.Second, 5: 10 * time.Second, 1000: 10 * time.Second} {
		if got := b.Wait(n, 0); got != want {
			t.Errorf("Wait(%d) = %s, want %s", n, got, want)
		}
	}
	// A longer Retry-After wins, up to Max; a shorter one does not.
	if got := b.Wait(3, 5*time.Second); got != 5*time.Second {
		t.Errorf("Retry-After 5 s at 4 s: %s", got)
	}
	if got := b.Wait(3, time.Second); got != 4*time.Second {
		t.Errorf("Retry-After 1 s at 4 s: %s", got)
	}
	if got := b.Wait(1, time.Hour); got != 10*time.Second {
		t.Errorf("Retry-After 1 h: %s", got)
	}
	// Jitter places the wait between its half and its whole.
	b.Jitter = func() float64 { return 0 }
	if got := b.Wait(3, 0); got != 2*time.Second {
		t.Errorf("jitter 0: %s", got)
	}
	b.Jitter = func() float64 { return 0.999999 }
	if got := b.Wait(3, 0); got < 3990*time.Millisecond || got > 4*time.Second {
		t.Errorf("jitter 1: %s", got)
	}
	// A Max below Min is Min.
	if got := (jobs.Backoff{Min: time.Minute, Max: time.Second}).Wait(5, 0); got != time.Minute {
		t.Errorf("Max below Min: %s", got)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for in, want := range map[string]struct {
		d  time.Duration
		ok bool
	}{
		"": {0, false}, "junk": {0, false}, "-5": {0, false}, "1e9": {0, false},
		"0": {0, true}, "45": {45 * time.Second, true}, " 30 ": {30 * time.Second, true},
		"99999999999999":       {7 * 24 * time.Hour, true},
		"99999999999999999999": {0, false},
		now.Add(10 * time.Minute).Format(http.TimeFormat): {10 * time.Minute, true},
		now.Add(-time.Hour).Format(http.TimeFormat):       {-time.Hour, true},
	} {
		if d, ok := jobs.ParseRetryAfter(in, now); d != want.d || ok != want.ok {
			t.Errorf("ParseRetryAfter(%q) = %s, %v; want %s, %v", in, d, ok, want.d, want.ok)
		}
	}
}

// FuzzParseRetryAfter checks that whatever a receiver sends, the wait is
// at most a week, and a wait read as seconds is never negative.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"", "0", "30", "3601", "-1", "1e9", "Sun, 01 Mar 2026 10:10:00 GMT", "99999999999999999999"} {
		f.Add(s)
	}
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, h string) {
		d, ok := jobs.ParseRetryAfter(h, now)
		if d > 7*24*time.Hour || (!ok && d != 0) {
			t.Fatalf("ParseRetryAfter(%q) = %s, %v", h, d, ok)
		}
		if _, err := http.ParseTime(strings.TrimSpace(h)); err != nil && d < 0 {
			t.Fatalf("ParseRetryAfter(%q) = %s: negative without a date", h, d)
		}
	})
}
