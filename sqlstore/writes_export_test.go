package sqlstore

import (
	"context"
	"database/sql"
)

// StopCheckpoints stops db's checkpointer (SQLite), so that the WAL only
// grows until the caller checkpoints it: BenchmarkTaskWrites counts the
// frames a task appends.
func StopCheckpoints(db *DB) {
	if c := db.checkpoints; c != nil {
		c.stopOnce.Do(func() { close(c.stop) })
		<-c.done
	}
}

// WriteInTx runs fn in one of db's write transactions, grouped with others
// as every write is (BenchmarkInboxWriteFloor).
func WriteInTx(ctx context.Context, db *DB, fn func(*sql.Tx) error) error {
	return db.inTx(ctx, func(_ context.Context, tx *sql.Tx) error { return fn(tx) })
}
