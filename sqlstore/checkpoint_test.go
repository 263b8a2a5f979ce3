package sqlstore

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCheckpointerCopiesTheWAL checks that what the writer commits reaches
// the database file without the writer checkpointing (its own threshold is
// far above what this test writes).
func TestCheckpointerCopiesTheWAL(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ckpt.db")
	db, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	before := fileSize(t, path)
	const rows, size = 64, 8192 // 512 KiB: about 130 pages, far below writerCheckpointPages
	if err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE ck (k INTEGER PRIMARY KEY, v TEXT)`); err != nil {
			return err
		}
		for i := range rows {
			if _, err := tx.ExecContext(ctx, `INSERT INTO ck (k, v) VALUES ($1, $2)`, i, strings.Repeat("x", size)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for fileSize(t, path) < before+rows*size {
		if time.Now().After(deadline) {
			t.Fatalf("database file %d bytes after 10 s (was %d): the WAL was not checkpointed", fileSize(t, path), before)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The copy is whole: the writer's next commit may start the WAL over.
	// (A checkpoint here finds the checkpointer's own busy at times.)
	for {
		var busy, walPages, copied int
		if err := db.read.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &walPages, &copied); err != nil {
			t.Fatal(err)
		}
		if busy == 0 && copied == walPages {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the checkpointer: busy %d, %d of %d WAL pages copied", busy, copied, walPages)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCheckpointerRestsWhileNothingIsWritten checks that an idle database
// costs no checkpoints, and that a write after a rest is checkpointed.
func TestCheckpointerRestsWhileNothingIsWritten(t *testing.T) {
	ctx := context.Background()
	db, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "rest.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Once the migrations' commits are checkpointed, no checkpoint runs:
	// give that a few tries on a slow machine.
	var before int64
	for try := 0; ; try++ {
		before = db.checkpoints.runs.Load()
		time.Sleep(5 * checkpointEvery)
		n := db.checkpoints.runs.Load() - before
		if n == 0 {
			break
		}
		if try == 5 {
			t.Fatalf("still %d checkpoints in %v while nothing was written", n, 5*checkpointEvery)
		}
	}
	if err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE rest (k INTEGER PRIMARY KEY)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); db.checkpoints.runs.Load() == before; time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatal("no checkpoint within 5 s of a write")
		}
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
