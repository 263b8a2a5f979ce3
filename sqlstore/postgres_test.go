package sqlstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/pgtest"
	"github.com/switchboard-dev/switchboard/internal/storetest"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// MustOpenPostgres opens a store in a new schema of the test database and
// closes it when the test ends.
func MustOpenPostgres(tb testing.TB) *sqlstore.DB {
	tb.Helper()
	db, err := sqlstore.OpenPostgres(context.Background(), pgtest.DSN(tb), sqlstore.PostgresOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

func TestPostgresContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store { return MustOpenPostgres(t) })
}

// TestPostgresConcurrentMigrations starts several instances on one empty
// schema at once: the advisory lock lets one migrate and the others find
// the work done.
func TestPostgresConcurrentMigrations(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	for i := range 5 {
		wg.Go(func() {
			db, err := sqlstore.OpenPostgres(ctx, dsn, sqlstore.PostgresOptions{MaxConns: 2})
			if err == nil {
				err = storetest.SeedAccount(ctx, db, fmt.Sprint("acct-", i))
				db.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestPostgresBadDSN(t *testing.T) {
	_, err := sqlstore.OpenPostgres(context.Background(), "postgres://u:secret@127.0.0.1:1/x?connect_timeout=1", sqlstore.PostgresOptions{})
	if err == nil {
		t.Fatal("connected to nothing")
	}
	if strings.Contains(err.Error(), "secret") {
		t.Fatalf("the error shows the password: %v", err)
	}
	if _, err := sqlstore.OpenPostgres(context.Background(), "postgres://[bad", sqlstore.PostgresOptions{}); err == nil {
		t.Fatal("a broken URL was accepted")
	}
}

func TestPostgresWakeContract(t *testing.T) {
	storetest.RunWakes(t, func(t *testing.T, now func() time.Time) storetest.Store {
		db := MustOpenPostgres(t)
		db.Now = now
		return db
	})
}
