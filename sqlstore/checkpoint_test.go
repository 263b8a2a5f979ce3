package sqlstore

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestCheckpointerCopiesTheWAL checks that what the writer commits reaches
// the database file without the writer checkpointing (its own threshold is
// far above what this test writes). It runs in a synctest bubble, the
// database opened in it: once checkpointEvery has passed on the bubble's
// clock and everything has settled, the copy is done, exactly.
func TestCheckpointerCopiesTheWAL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ckpt.db")
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		db, err := OpenSQLite(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		time.Sleep(time.Second) // the migrations' commits are checkpointed
		synctest.Wait()
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
		synctest.Wait()
		if got := fileSize(t, path); got >= before+rows*size {
			t.Fatalf("database file %d bytes right after the commit (was %d): the writer checkpointed", got, before)
		}
		time.Sleep(checkpointEvery)
		synctest.Wait()
		if got := fileSize(t, path); got < before+rows*size {
			t.Fatalf("database file %d bytes %v after the commit (was %d): the WAL was not checkpointed", got, checkpointEvery, before)
		}
		// The copy is whole: the writer's next commit may start the WAL over.
		var busy, walPages, copied int
		if err := db.read.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &walPages, &copied); err != nil {
			t.Fatal(err)
		}
		if busy != 0 || copied != walPages {
			t.Fatalf("after the checkpointer: busy %d, %d of %d WAL pages copied", busy, copied, walPages)
		}
	})
}

// TestCheckpointerRestsWhileNothingIsWritten checks that an idle database
// costs no checkpoints, and that a write after a rest is checkpointed
// checkpointEvery after it. It runs in a synctest bubble, the database
// opened in it: the rest is an hour on the bubble's clock, and the counts
// are exact.
func TestCheckpointerRestsWhileNothingIsWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rest.db")
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		db, err := OpenSQLite(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		time.Sleep(time.Second) // the migrations' commits are checkpointed
		synctest.Wait()
		before := db.checkpoints.runs.Load()
		time.Sleep(time.Hour)
		synctest.Wait()
		if n := db.checkpoints.runs.Load() - before; n != 0 {
			t.Fatalf("%d checkpoints in an hour while nothing was written", n)
		}
		if err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `CREATE TABLE rest (k INTEGER PRIMARY KEY)`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(checkpointEvery - time.Nanosecond)
		synctest.Wait()
		if n := db.checkpoints.runs.Load() - before; n != 0 {
			t.Fatalf("%d checkpoints before checkpointEvery (%v) had passed since the write", n, checkpointEvery)
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if n := db.checkpoints.runs.Load() - before; n != 1 {
			t.Fatalf("%d checkpoints once checkpointEvery (%v) had passed since the write, want 1", n, checkpointEvery)
		}
	})
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
