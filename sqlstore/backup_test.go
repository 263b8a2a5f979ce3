package sqlstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/storetest"
	"github.com/switchboard-dev/switchboard/seal"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// TestBackupSQLite copies a database that is open and written to, and the
// copy holds what was committed, opens alone, and names the key that
// sealed its secrets.
func TestBackupSQLite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "switchboard.db")
	db, err := sqlstore.OpenSQLite(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	key := seal.NewKey()
	ring, err := seal.NewKeyring(key)
	if err != nil {
		t.Fatal(err)
	}
	db.Secrets = ring
	secretsFixture(t, db)

	dst := filepath.Join(dir, "copy.db")
	info, err := sqlstore.BackupSQLite(ctx, src, dst)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := info.SealedKeyIDs, []string{seal.KeyID(key)}; !slices.Equal(got, want) {
		t.Fatalf("sealed key ids %v, want %v", got, want)
	}
	if len(info.Migrations) == 0 {
		t.Fatal("no migrations recorded")
	}
	if err := storetest.SeedAccount(ctx, db, "after"); err != nil { // the source stays writable
		t.Fatal(err)
	}
	cp, err := sqlstore.OpenSQLite(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	accounts, err := cp.FindAccounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(accounts) != 1 || accounts[0].Name != "owner" {
		t.Fatalf("the copy holds accounts %+v, want the owner alone", accounts)
	}
}

// TestLockSQLiteRefusesOpenDatabase: a database a store has open (idle,
// after writing) cannot be locked; once the store is closed it can, and
// releasing the lock leaves the database whole.
func TestLockSQLiteRefusesOpenDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "switchboard.db")
	db, err := sqlstore.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := storetest.SeedAccount(ctx, db, "alice"); err != nil {
		t.Fatal(err)
	}
	if l, err := sqlstore.LockSQLite(ctx, path); !errors.Is(err, sqlstore.ErrSQLiteInUse) {
		if l != nil {
			_ = l.Close()
		}
		t.Fatalf("lock while open: %v, want ErrSQLiteInUse", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := sqlstore.LockSQLite(ctx, path)
	if err != nil {
		t.Fatalf("lock once closed: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlstore.InspectSQLite(ctx, path); err != nil {
		t.Fatalf("inspect after the lock: %v", err)
	}
}
