package sqlstore_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/storetest"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// MustOpenSQLite opens a store on a new SQLite file in a temporary directory
// and closes it when the test ends.
func MustOpenSQLite(tb testing.TB) *sqlstore.DB {
	tb.Helper()
	db, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(tb.TempDir(), "switchboard.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

func TestSQLiteContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store { return MustOpenSQLite(t) })
}

func TestSQLiteReopenKeepsData(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "switchboard.db")
	db, err := sqlstore.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := storetest.SeedAccount(ctx, db, "alice"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	db, err = sqlstore.OpenSQLite(ctx, path) // migrations run again and change nothing
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	all, err := db.FindAccounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].Name != "alice" {
		t.Fatalf("after reopen: %+v", all)
	}
}
