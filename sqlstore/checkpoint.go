package sqlstore

import (
	"context"
	"database/sql"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// SQLite in WAL mode appends every committed page to the WAL, and a
// checkpoint copies them back into the database file so that the WAL can
// start over. By default the connection that commits runs the checkpoint
// itself, whenever the WAL passes 1,000 pages: a pause of milliseconds (two
// fsyncs and the page writes) inside some unlucky caller's commit, with all
// other writes queued behind it. The checkpointer takes that off the write
// path: the writer never checkpoints unless the WAL grows far past what the
// checkpointer lets it reach, and a connection of its own runs a PASSIVE
// checkpoint checkpointEvery after a commit (at most one per
// checkpointEvery), which neither waits for nor blocks the writer and the
// readers. A page written many times between two checkpoints is copied
// once, and a database nobody writes to costs no wake-ups. After a
// checkpoint that copied the whole WAL, the writer starts the WAL over
// while it is idle (groupCommitter.restartWAL), so that no caller's commit
// waits for the new WAL header's sync.

// checkpointEvery is how long the checkpointer gathers commits before it
// checkpoints them. Short, although a longer wait copies a page written
// many times fewer times: measured, the more a checkpoint copies, the
// longer the tail of the requests served while it runs. At 1,000 routed
// tasks a second the 99th percentile of their latency was 18 ms with
// 100 ms, 12 ms with 50 ms, 10 ms with 20 ms and 12 ms with 10 ms, for
// 3-6 % more server CPU at 20 ms than at 100 ms, and the same throughput
// (docs/performance.md). The fsyncs are not the cause: a checkpoint
// without them made the tail longer still.
const checkpointEvery = 20 * time.Millisecond

// writerCheckpointPages is the writer's own wal_autocheckpoint: a backstop
// for a checkpointer that cannot keep up (or long readers that keep it from
// finishing), at 40 MB of WAL.
const writerCheckpointPages = 10000

// checkpointer runs PASSIVE checkpoints on its own connection.
type checkpointer struct {
	db        *sql.DB
	committed <-chan struct{} // signalled after the writer's commits
	copied    chan<- struct{} // signalled after a checkpoint that copied the whole WAL
	runs      atomic.Int64    // checkpoints run, for tests
	stopOnce  sync.Once
	stop      chan struct{}
	done      chan struct{}
}

// startCheckpointer starts checkpointing on db after the commits signalled
// on committed, and signals copied (without blocking) after each
// checkpoint that copied the whole WAL.
func startCheckpointer(db *sql.DB, committed <-chan struct{}, copied chan<- struct{}) *checkpointer {
	db.SetMaxOpenConns(1)
	c := &checkpointer{db: db, committed: committed, copied: copied, stop: make(chan struct{}), done: make(chan struct{})}
	go c.loop()
	return c
}

func (c *checkpointer) loop() {
	defer close(c.done)
	t := time.NewTimer(checkpointEvery)
	t.Stop()
	again := false // the last checkpoint left pages behind (a reader held them)
	for {
		if !again {
			select {
			case <-c.stop:
				return
			case <-c.committed:
			}
		}
		t.Reset(checkpointEvery) // commits meanwhile are copied by the same checkpoint
		select {
		case <-c.stop:
			t.Stop()
			return
		case <-t.C:
		}
		c.runs.Add(1)
		complete, err := c.checkpoint()
		if err != nil {
			slog.Warn("sqlite checkpoint", "err", err)
		}
		again = err == nil && !complete
		if complete {
			select {
			case c.copied <- struct{}{}:
			default:
			}
		}
	}
}

// checkpoint copies what it can of the WAL into the database file, and
// reports whether it copied all of it.
func (c *checkpointer) checkpoint() (complete bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var busy, walPages, copied int
	if err := c.db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &walPages, &copied); err != nil {
		return false, err
	}
	return busy == 0 && copied >= walPages, nil
}

// close stops the checkpointer and closes its connection.
func (c *checkpointer) close() error {
	c.stopOnce.Do(func() { close(c.stop) })
	<-c.done
	return c.db.Close()
}
