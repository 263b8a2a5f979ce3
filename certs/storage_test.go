package certs_test

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/caddyserver/certmagic"
	"github.com/switchboard-dev/switchboard/certs"
	"github.com/switchboard-dev/switchboard/internal/pgtest"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/seal"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

var discard = slog.New(slog.DiscardHandler)

func openPG(t *testing.T, dsn string) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.OpenPostgres(context.Background(), dsn, sqlstore.PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// forEngine runs fn on SQLite, and on PostgreSQL when the tests have one,
// with two stores on one database (two instances).
func forEngine(t *testing.T, fn func(t *testing.T, a, b *sqlstore.DB)) {
	t.Run("sqlite", func(t *testing.T) {
		db := sqlitetest.Open(t)
		fn(t, db, db)
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.DSN(t)
		fn(t, openPG(t, dsn), openPG(t, dsn))
	})
}

// TestStorageFiles: the storage keeps files as certmagic expects of a
// Storage (a key is a path; a directory exists while files are under it;
// missing keys are fs.ErrNotExist; a delete takes a directory's files),
// and a private key, the certificate's or the ACME account's, is sealed
// at rest while the rest is kept as it is.
func TestStorageFiles(t *testing.T) {
	forEngine(t, func(t *testing.T, db, _ *sqlstore.DB) {
		keyring, err := seal.NewKeyring(seal.NewKey())
		if err != nil {
			t.Fatal(err)
		}
		db.Secrets = keyring
		ctx := context.Background()
		s := certs.NewStorage(db, discard, 0, 0)
		t.Cleanup(func() { _ = s.Close() })
		files := map[string]string{
			"certificates/ca/a.test/a.test.crt":             "CERT",
			"certificates/ca/a.test/a.test.key":             "KEY",
			"certificates/ca/a.test/a.test.json":            "{}",
			"acme/ca/users/default/default.key":             "ACCOUNT KEY",
			"acme/ca/users/default/default.json":            "{}",
			"certificates/ca/b.test/b.test.key.compromised": "OLD KEY",
		}
		for k, v := range files {
			if err := s.Store(ctx, k, []byte(v)); err != nil {
				t.Fatal(err)
			}
		}
		for k, v := range files {
			got, err := s.Load(ctx, k)
			if err != nil || string(got) != v {
				t.Fatalf("Load %s = %q, %v", k, got, err)
			}
			f, err := db.FindCertFile(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Ext(k) == ".key" || filepath.Ext(k) == ".compromised"; f.Secret != want {
				t.Fatalf("%s kept sealed: %v, want %v", k, f.Secret, want)
			}
		}
		if _, err := s.Load(ctx, "certificates/ca/none.crt"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("Load of a missing key: %v, want fs.ErrNotExist", err)
		}
		if !s.Exists(ctx, "certificates/ca") || !s.Exists(ctx, "certificates/ca/a.test/a.test.crt") || s.Exists(ctx, "certificates/c") {
			t.Fatal("Exists of a directory, a file, a mere prefix")
		}
		list := func(dir string, recursive bool, want ...string) {
			t.Helper()
			got, err := s.List(ctx, dir, recursive)
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("List(%q, %v) = %q, %v; want %q", dir, recursive, got, err, want)
			}
		}
		list("certificates/ca", false, "certificates/ca/a.test", "certificates/ca/b.test")
		list("acme", true, "acme/ca", "acme/ca/users", "acme/ca/users/default", "acme/ca/users/default/default.json", "acme/ca/users/default/default.key")
		// An account half written (its registration, not yet its key) is not
		// listed among the users, where certmagic looks for one to load.
		if err := s.Store(ctx, "acme/ca/users/half/half.json", []byte("{}")); err != nil {
			t.Fatal(err)
		}
		list("acme/ca/users", false, "acme/ca/users/default")
		if err := s.Delete(ctx, "acme/ca/users/default/default.key"); err != nil {
			t.Fatal(err)
		}
		if got, err := s.List(ctx, "acme/ca/users", false); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("List of users with no whole account = %q, %v; want fs.ErrNotExist", got, err)
		}
		if _, err := s.List(ctx, "nothing", false); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("List of nothing: %v", err)
		}
		fi, err := s.Stat(ctx, "certificates/ca/a.test/a.test.crt")
		if err != nil || !fi.IsTerminal || fi.Size != 4 || fi.Modified.IsZero() {
			t.Fatalf("Stat of a file: %+v %v", fi, err)
		}
		if fi, err := s.Stat(ctx, "certificates/ca"); err != nil || fi.IsTerminal {
			t.Fatalf("Stat of a directory: %+v %v", fi, err)
		}
		if _, err := s.Stat(ctx, "certificates/none"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("Stat of nothing: %v", err)
		}
		if err := s.Delete(ctx, "certificates/ca/a.test"); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, "certificates/ca/a.test"); err != nil {
			t.Fatalf("deleting what is gone: %v", err)
		}
		list("certificates/ca", false, "certificates/ca/b.test")
	})
}

// TestStorageLockAcrossInstances: a lock one instance holds is not taken
// by another, which waits (asking again) until it is released; a lock
// held by an instance that died (no one renews it) is taken over once it
// expires.
func TestStorageLockAcrossInstances(t *testing.T) {
	forEngine(t, func(t *testing.T, dbA, dbB *sqlstore.DB) {
		ctx := context.Background()
		a := certs.NewStorage(dbA, discard, 0, 20*time.Millisecond)
		b := certs.NewStorage(dbB, discard, 0, 20*time.Millisecond)
		t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
		if err := a.Lock(ctx, "issue_cert_a.test"); err != nil {
			t.Fatal(err)
		}
		// b asks over and over, in vain: a's lock lives 30 s.
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		err := b.Lock(short, "issue_cert_a.test")
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("b took a's lock: %v", err)
		}
		got := make(chan error, 1)
		go func() { got <- b.Lock(ctx, "issue_cert_a.test") }()
		if err := a.Unlock(ctx, "issue_cert_a.test"); err != nil {
			t.Fatal(err)
		}
		testwait.ForErr(t, "b to take the lock a released", func() error {
			select {
			case err := <-got:
				if err == nil {
					return nil
				}
				t.Fatal(err)
			default:
			}
			return errors.New("b still waits")
		})
		if err := b.Unlock(ctx, "issue_cert_a.test"); err != nil {
			t.Fatal(err)
		}

		// A holder that died: its row stays, and expires.
		if took, err := dbA.TryLockCert(ctx, "issue_cert_b.test", "dead", 200*time.Millisecond); err != nil || !took {
			t.Fatalf("the dead holder's lock: %v %v", took, err)
		}
		if err := b.Lock(ctx, "issue_cert_b.test"); err != nil {
			t.Fatalf("taking over an expired lock: %v", err)
		}
		if took, _ := dbA.TryLockCert(ctx, "issue_cert_b.test", "dead", time.Minute); took {
			t.Fatal("the dead holder took its lock back")
		}
		if err := b.RenewLockLease(ctx, "issue_cert_b.test", time.Hour); err != nil {
			t.Fatalf("renewing a lock held: %v", err)
		}
		if err := a.RenewLockLease(ctx, "issue_cert_b.test", time.Hour); err == nil {
			t.Fatal("a renewed a lock it does not hold")
		}
		// Close releases what an instance holds.
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if err := a.Lock(ctx, "issue_cert_b.test"); err != nil {
			t.Fatalf("after b closed: %v", err)
		}
		if err := b.Store(ctx, "x", nil); err == nil {
			t.Fatal("a closed storage stored")
		}
	})
}

// TestStorageLockKeptAlive: a holder keeps its lock alive for as long as
// it holds it, far past the lock's time to live, and another instance
// does not take it; once the holder stops renewing (it lost the row to a
// takeover), RenewLockLease says so. Run in a bubble, so that minutes of
// waiting take none.
func TestStorageLockKeptAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db, err := sqlstore.OpenSQLite(context.Background(), sqlitetest.Path(t))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		ctx := context.Background()
		a := certs.NewStorage(db, discard, 30*time.Second, time.Second)
		b := certs.NewStorage(db, discard, 30*time.Second, time.Second)
		defer a.Close()
		defer b.Close()
		if err := a.Lock(ctx, "renew_cert_a.test"); err != nil {
			t.Fatal(err)
		}
		long, cancel := context.WithTimeout(ctx, 10*time.Minute)
		err = b.Lock(long, "renew_cert_a.test")
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("b took a lock a kept alive for 10 minutes: %v", err)
		}
		if err := a.RenewLockLease(ctx, "renew_cert_a.test", time.Minute); err != nil {
			t.Fatalf("a's lock after 10 minutes: %v", err)
		}
		if err := a.Unlock(ctx, "renew_cert_a.test"); err != nil {
			t.Fatal(err)
		}
		if err := b.Lock(ctx, "renew_cert_a.test"); err != nil {
			t.Fatal(err)
		}
	})
}

var _ certmagic.Storage = (*certs.Storage)(nil)
