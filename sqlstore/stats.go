package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// Ping reports whether the database answers a query. It reads through the
// pool readers use, so on SQLite it does not wait behind the one writer;
// on PostgreSQL it needs a free connection of the shared pool.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.storageFull(); err != nil {
		return err
	}
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&n); err != nil {
		return fmt.Errorf("ping database: %w", db.formatError(err))
	}
	return nil
}

// unfinishedStates are the states of a task that is not finished, as the
// partial index tasks_unfinished (migration 0005) lists them, and as
// peer_usage (migration 0013, taskUsage) counts them.
const unfinishedStates = `'TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED'`

// CountUnfinishedTasks returns how many tasks of the whole deployment are
// in each unfinished state (submitted, working, input-required,
// auth-required); states without tasks are missing. Finished tasks are
// not counted: they only grow, and counting them would read the whole
// table. The query reads the index of unfinished tasks alone.
func (db *DB) CountUnfinishedTasks(ctx context.Context) (map[a2a.TaskState]int, error) {
	out := make(map[a2a.TaskState]int)
	err := db.countBy(ctx, `SELECT state, COUNT(*) FROM tasks WHERE state IN (`+unfinishedStates+`) GROUP BY state`,
		func(state string, n int) { out[a2a.TaskState(state)] = n })
	return out, err
}

// CountOpenDeliveries returns how many deliveries of the whole deployment
// are queued (waiting to be offered) and offered (waiting for the agent's
// acknowledgement); states without deliveries are missing.
func (db *DB) CountOpenDeliveries(ctx context.Context) (map[switchboard.DeliveryState]int, error) {
	out := make(map[switchboard.DeliveryState]int)
	err := db.countBy(ctx, `SELECT state, COUNT(*) FROM deliveries WHERE state IN ('queued', 'offered') GROUP BY state`,
		func(state string, n int) { out[switchboard.DeliveryState(state)] = n })
	return out, err
}

// CountOpenWakes returns how many wakes of the whole deployment are
// pending (waiting for their time) and sending (claimed by a sender);
// states without wakes are missing. The query reads the index wakes_due.
func (db *DB) CountOpenWakes(ctx context.Context) (map[switchboard.WakeState]int, error) {
	out := make(map[switchboard.WakeState]int)
	err := db.countBy(ctx, `SELECT state, COUNT(*) FROM wakes WHERE state IN ('pending', 'sending') GROUP BY state`,
		func(state string, n int) { out[switchboard.WakeState(state)] = n })
	return out, err
}

// CountOpenPushes returns how many push notifications of the whole
// deployment are queued (waiting for their time) and sending (claimed by
// a sender); states without pushes are missing. The condition is the one
// of the partial index push_deliveries_due.
func (db *DB) CountOpenPushes(ctx context.Context) (map[switchboard.PushState]int, error) {
	out := make(map[switchboard.PushState]int)
	err := db.countBy(ctx, `SELECT state, COUNT(*) FROM push_deliveries WHERE state IN ('queued', 'sending') GROUP BY state`,
		func(state string, n int) { out[switchboard.PushState(state)] = n })
	return out, err
}

// CountLiveSessions returns, per instance id, how many agents hold a
// session on that instance that is live at now (it expires after now):
// the instances the store knows of, and the agents each holds. Instances
// with no live session are missing.
func (db *DB) CountLiveSessions(ctx context.Context, now time.Time) (map[string]int, error) {
	out := make(map[string]int)
	err := db.countBy(ctx, `SELECT instance_id, COUNT(*) FROM agent_sessions WHERE expires_at > $1 GROUP BY instance_id`,
		func(id string, n int) { out[id] = n }, nanos(now))
	return out, err
}

// countBy runs a query of (key, count) rows and hands each row to add.
func (db *DB) countBy(ctx context.Context, query string, add func(string, int), args ...any) error {
	rows, err := db.read.QueryContext(ctx, query, args...)
	if err != nil {
		return db.formatError(err)
	}
	defer rows.Close()
	for rows.Next() {
		var key string
		var n sql.NullInt64
		if err := rows.Scan(&key, &n); err != nil {
			return err
		}
		add(key, int(n.Int64))
	}
	return rows.Err()
}
