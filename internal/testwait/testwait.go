package testwait

import (
	"errors"
	"testing"
	"time"
)

// Timeout is how long For and ForErr wait before they fail the test.
const Timeout = 30 * time.Second

// The wait between two polls doubles from pollMin up to pollMax.
const (
	pollMin = 5 * time.Millisecond
	pollMax = 20 * time.Millisecond
)

// errFalse is what For's condition reports while it does not hold.
var errFalse = errors.New("the condition does not hold")

// For calls cond, on the test's goroutine, until it returns true, and fails
// the test with "timed out waiting for <what>" if it still returns false
// after Timeout.
func For(t testing.TB, what string, cond func() bool) {
	t.Helper()
	Within(t, Timeout, what, func() error {
		if !cond() {
			return errFalse
		}
		return nil
	})
}

// ForErr calls check, on the test's goroutine, until it returns nil, and
// fails the test after Timeout with the last error it returned, which
// should say what was seen and what was wanted.
func ForErr(t testing.TB, what string, check func() error) {
	t.Helper()
	Within(t, Timeout, what, check)
}

// Within is ForErr with a bound of its own, for the few waits that need
// more than Timeout (work that must wait out a lease, or move off a killed
// process).
func Within(t testing.TB, d time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for wait := pollMin; ; wait = min(2*wait, pollMax) {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			if err == errFalse {
				t.Fatalf("timed out waiting for %s (%s)", what, d)
			}
			t.Fatalf("timed out waiting for %s (%s): %v", what, d, err)
		}
		time.Sleep(wait)
	}
}
