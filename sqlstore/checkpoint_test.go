package sqlstore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchboard-dev/switchboard/internal/testwait"
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
		db := openSettled(t, path)
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
		synctest.Wait()
		if got := fileSize(t, path); got >= before+rows*size {
			t.Fatalf("database file %d bytes right after the commit (was %d): the writer checkpointed", got, before)
		}
		testwait.Advance(checkpointEvery)
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
		db := openSettled(t, path)
		defer db.Close()
		before := db.checkpoints.runs.Load()
		testwait.Advance(time.Hour)
		if n := db.checkpoints.runs.Load() - before; n != 0 {
			t.Fatalf("%d checkpoints in an hour while nothing was written", n)
		}
		if err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `CREATE TABLE rest (k INTEGER PRIMARY KEY)`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		testwait.Advance(checkpointEvery - time.Nanosecond)
		if n := db.checkpoints.runs.Load() - before; n != 0 {
			t.Fatalf("%d checkpoints before checkpointEvery (%v) had passed since the write", n, checkpointEvery)
		}
		testwait.Advance(time.Nanosecond)
		if n := db.checkpoints.runs.Load() - before; n != 1 {
			t.Fatalf("%d checkpoints once checkpointEvery (%v) had passed since the write, want 1", n, checkpointEvery)
		}
	})
}

// openSettled opens the database at path in a synctest bubble, and waits
// on the bubble's clock until the migrations' commits are checkpointed.
func openSettled(t *testing.T, path string) *DB {
	t.Helper()
	db, err := OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	testwait.Advance(time.Second)
	return db
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestWriterStartsTheWALOverWhileIdle checks that once the checkpointer
// copied the whole WAL, the writer starts it over by itself, with nothing
// waiting to be written: the WAL's header then counts one more checkpoint,
// and the next commit writes after it without starting the WAL over
// again (it does not wait for the header's sync). Nothing of it makes an
// idle database write or checkpoint again.
func TestWriterStartsTheWALOverWhileIdle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "restart.db")
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		db := openSettled(t, path)
		defer db.Close()
		write := func(n int) {
			t.Helper()
			if err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
				if n == 0 {
					_, err := tx.ExecContext(ctx, `CREATE TABLE re (k INTEGER PRIMARY KEY)`)
					return err
				}
				_, err := tx.ExecContext(ctx, `INSERT INTO re (k) VALUES ($1)`, n)
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		write(0)
		restarts, seq := db.group.restarts.Load(), walCheckpointSeq(t, path)
		testwait.Advance(checkpointEvery)
		if n := db.group.restarts.Load() - restarts; n != 1 {
			t.Fatalf("%d restarts of the WAL after a whole checkpoint, want 1", n)
		}
		if got := walCheckpointSeq(t, path); got != seq+1 {
			t.Fatalf("WAL header checkpoint sequence %d after the restart, want %d", got, seq+1)
		}
		write(1)
		if got := walCheckpointSeq(t, path); got != seq+1 {
			t.Fatalf("the commit after the restart started the WAL over again (sequence %d, want %d)", got, seq+1)
		}
		var k int
		if err := db.read.QueryRowContext(ctx, `SELECT k FROM re`).Scan(&k); err != nil || k != 1 {
			t.Fatalf("read back the commit after the restart: %d, %v", k, err)
		}
		testwait.Advance(checkpointEvery)
		restarts, runs := db.group.restarts.Load(), db.checkpoints.runs.Load()
		testwait.Advance(time.Hour)
		if n := db.group.restarts.Load() - restarts; n != 0 {
			t.Fatalf("%d restarts of the WAL in an idle hour", n)
		}
		if n := db.checkpoints.runs.Load() - runs; n != 0 {
			t.Fatalf("%d checkpoints in an idle hour after a restart", n)
		}
	})
}

// walCheckpointSeq reads the checkpoint sequence number of the WAL's
// header: one more each time the WAL starts over.
func walCheckpointSeq(t *testing.T, path string) uint32 {
	t.Helper()
	b, err := os.ReadFile(path + "-wal")
	if err != nil || len(b) < 32 {
		t.Fatalf("read the WAL header: %d bytes, %v", len(b), err)
	}
	return binary.BigEndian.Uint32(b[12:16])
}
