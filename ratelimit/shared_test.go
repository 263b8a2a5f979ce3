package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/pgtest"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/ratelimit"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// TestSharedAcrossInstances: three limiters on one PostgreSQL database,
// as on three instances, give a peer its limit once in all.
func TestSharedAcrossInstances(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 10, 0, 15, 0, time.UTC)
	var limiters []*ratelimit.Shared
	for range 3 {
		db, err := sqlstore.OpenPostgres(ctx, dsn, sqlstore.PostgresOptions{MaxConns: 2})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		l := ratelimit.NewShared(db, 5, time.Minute)
		l.Now = func() time.Time { return now }
		limiters = append(limiters, l)
	}
	allowed := 0
	for i := range 15 {
		ok, retry, err := limiters[i%3].Allow(ctx, "peer-a")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			allowed++
		} else if retry != 45*time.Second {
			t.Fatalf("retry after %v, want 45s", retry)
		}
	}
	if allowed != 5 {
		t.Fatalf("allowed %d of 15 requests spread over three instances, want 5", allowed)
	}
	if ok, _, _ := limiters[0].Allow(ctx, "peer-b"); !ok {
		t.Fatal("another peer was refused")
	}
	now = now.Add(time.Minute)
	if ok, _, _ := limiters[1].Allow(ctx, "peer-a"); !ok {
		t.Fatal("refused in the next window")
	}
}

// TestSharedOnSQLite: the same limiter on the single-instance store, and
// old windows are deleted.
func TestSharedOnSQLite(t *testing.T) {
	ctx := context.Background()
	db, err := sqlstore.OpenSQLite(ctx, sqlitetest.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	l := ratelimit.NewShared(db, 2, time.Minute)
	l.Now = func() time.Time { return now }
	for i, want := range []bool{true, true, false, false} {
		if ok, _, err := l.Allow(ctx, "k"); err != nil || ok != want {
			t.Fatalf("request %d: ok=%v err=%v, want %v", i+1, ok, err, want)
		}
	}
	if ok, _, _ := ratelimit.NewShared(db, 0, time.Minute).Allow(ctx, "k"); !ok {
		t.Fatal("limit 0 refused")
	}
	now = now.Add(3 * time.Minute)
	if ok, _, _ := l.Allow(ctx, "k"); !ok {
		t.Fatal("refused three windows later")
	}
	if n, err := db.CountRequest(ctx, "k", now.Add(-3*time.Minute).Truncate(time.Minute)); err != nil || n != 1 {
		t.Fatalf("the window three minutes back was not deleted: count %d, %v", n, err)
	}
}
