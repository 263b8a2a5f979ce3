package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/ratelimit"
)

func TestMemoryFixedWindow(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 10, 0, 15, 0, time.UTC)
	m := ratelimit.NewMemory(3, time.Minute)
	m.Now = func() time.Time { return now }
	for i := range 3 {
		if ok, _, _ := m.Allow(ctx, "a"); !ok {
			t.Fatalf("request %d refused", i+1)
		}
	}
	ok, retry, err := m.Allow(ctx, "a")
	if err != nil || ok {
		t.Fatalf("fourth request: ok=%v err=%v", ok, err)
	}
	if got, want := retry, 45*time.Second; got != want {
		t.Fatalf("retry after %v, want %v", got, want)
	}
	if ok, _, _ := m.Allow(ctx, "b"); !ok {
		t.Fatal("another key is limited too")
	}
	now = now.Add(45 * time.Second) // the next minute
	if ok, _, _ := m.Allow(ctx, "a"); !ok {
		t.Fatal("new window still refuses")
	}
}

func TestMemoryUnlimited(t *testing.T) {
	m := ratelimit.NewMemory(0, time.Minute)
	for range 1000 {
		if ok, _, _ := m.Allow(context.Background(), "a"); !ok {
			t.Fatal("limit 0 refused a request")
		}
	}
}
