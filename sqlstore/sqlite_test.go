package sqlstore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/internal/storetest"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// MustOpenSQLite opens a store on a new SQLite file in a temporary directory
// and closes it when the test ends.
func init() { sqlstore.MigratedPath = sqlitetest.Path }

func MustOpenSQLite(tb testing.TB) *sqlstore.DB {
	tb.Helper()
	db, err := sqlstore.OpenSQLite(context.Background(), sqlitetest.Path(tb))
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

func TestSQLiteOddPathsAndPermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "we#ird?dir with space")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "sb.db")
	db, err := sqlstore.OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := storetest.SeedAccount(context.Background(), db, "x"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatalf("the database is not where it was asked to be: %v", err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Fatalf("database mode %o, want 600", perm)
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) != 1 {
		t.Fatalf("files appeared beside the data directory: %v", entries)
	}
	db, err = sqlstore.OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if all, err := db.FindAccounts(context.Background()); err != nil || len(all) != 1 {
		t.Fatalf("data not kept at the odd path: %v %v", all, err)
	}
	if _, err := sqlstore.OpenSQLite(context.Background(), ":memory:"); err == nil {
		t.Fatal(":memory: accepted")
	}
}

func TestSQLiteWakeContract(t *testing.T) {
	storetest.RunWakes(t, func(t *testing.T, now func() time.Time) storetest.Store {
		db := MustOpenSQLite(t)
		db.Now = now
		return db
	})
}
