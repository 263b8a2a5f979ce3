package peers_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/peers"
)

type touches map[string]int

func (t touches) TouchToken(_ context.Context, hash string, _ time.Time) error {
	t[hash]++
	return nil
}

func TestUsageWritesOnceAMinute(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	written := touches{}
	u := peers.NewUsage(written, slog.New(slog.DiscardHandler), func() time.Time { return now })
	ctx := context.Background()
	for range 5 {
		u.Touch(ctx, "a")
	}
	u.Touch(ctx, "b")
	now = now.Add(peers.TouchEvery - time.Second)
	u.Touch(ctx, "a")
	if written["a"] != 1 || written["b"] != 1 {
		t.Fatalf("written %v, want one each within the minute", written)
	}
	now = now.Add(time.Second)
	u.Touch(ctx, "a")
	if written["a"] != 2 {
		t.Fatalf("written %v, want a second write of a after a minute", written)
	}
}
