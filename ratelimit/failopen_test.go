package ratelimit_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/ratelimit"
)

// brokenCounter is a store that cannot count.
type brokenCounter struct{}

func (brokenCounter) CountRequest(context.Context, string, time.Time) (int, error) {
	return 0, errors.New("database is down")
}
func (brokenCounter) DeleteRateCounts(context.Context, time.Time) error { return nil }

// TestSharedFailsOpen: a limiter whose store fails lets every request
// through, says why, counts each one, and logs at most one line a minute.
func TestSharedFailsOpen(t *testing.T) {
	var logs bytes.Buffer
	l := ratelimit.NewShared(brokenCounter{}, 1, time.Minute)
	l.Log = slog.New(slog.NewTextHandler(&logs, nil))
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	l.Now = func() time.Time { return now }
	for i := range 5 {
		ok, _, err := l.Allow(context.Background(), "peer")
		if !ok || err == nil {
			t.Fatalf("request %d: ok %v, err %v; want let through, with the error", i, ok, err)
		}
	}
	if n := l.Failures(); n != 5 {
		t.Fatalf("Failures() = %d, want 5", n)
	}
	if n := strings.Count(logs.String(), "rate limit not counted"); n != 1 {
		t.Fatalf("%d log lines in the first minute, want 1:\n%s", n, logs.String())
	}
	now = now.Add(time.Minute)
	_, _, _ = l.Allow(context.Background(), "peer")
	if n := strings.Count(logs.String(), "rate limit not counted"); n != 2 || !strings.Contains(logs.String(), "failures=6") {
		t.Fatalf("after a minute: %d lines:\n%s", n, logs.String())
	}
}
