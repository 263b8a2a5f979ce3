package sqlstore

import (
	"context"
	"database/sql"
	"time"
)

// CountRequest implements ratelimit.Counter: it adds one request for key
// to the window that starts at window and returns the window's count, as
// every instance on the database sees it.
// On PostgreSQL it is one statement, committed on its own, on an
// unlogged table: one round trip and no flush of the log.
func (db *DB) CountRequest(ctx context.Context, key string, window time.Time) (int, error) {
	const count = `INSERT INTO rate_counts (key, window_start, count) VALUES ($1, $2, 1)
		ON CONFLICT (key, window_start) DO UPDATE SET count = rate_counts.count + 1 RETURNING count`
	var n int
	if db.group == nil {
		err := db.write.QueryRowContext(ctx, count, key, nanos(window)).Scan(&n)
		return n, db.formatError(err)
	}
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, count, key, nanos(window)).Scan(&n)
	})
	return n, err
}

// DeleteRateCounts implements ratelimit.Counter: it forgets the windows
// that started before t.
func (db *DB) DeleteRateCounts(ctx context.Context, before time.Time) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM rate_counts WHERE window_start < $1`, nanos(before))
		return err
	})
}
