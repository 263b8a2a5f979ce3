package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/redact"
)

var _ switchboard.WakeStore = (*DB)(nil)

const wakeConfigColumns = `agent_id, url, wake_key, hmac_secret, preset, debounce_ms, max_per_hour, key_header, key_prefix,
	body_template, openclaw_agent_id, cli_command, created_at, updated_at`

const wakeColumns = `w.id, w.agent_id, w.peer_id, w.context_id, w.kind, w.named_task_id, w.sender, w.preview, w.count, w.state, w.retries,
	w.due_at, w.holder, w.lease_until, w.last_status, w.last_error, w.created_at, w.updated_at, w.trace_parent`

// SaveWakeConfig implements switchboard.WakeStore.
func (db *DB) SaveWakeConfig(ctx context.Context, c *switchboard.WakeConfig) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var found string
		err := tx.QueryRowContext(ctx, `SELECT id FROM agents WHERE id = $1`+db.forShare(""), c.AgentID).Scan(&found)
		if err == sql.ErrNoRows {
			return switchboard.Errorf(switchboard.ENOTFOUND, "agent not found")
		} else if err != nil {
			return err
		}
		key, err := db.seal(purposeWakeKey, c.Key)
		if err != nil {
			return err
		}
		hmacSecret, err := db.seal(purposeWakeHMAC, c.HMACSecret)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO wake_configs (`+wakeConfigColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
			ON CONFLICT (agent_id) DO UPDATE SET url = excluded.url, wake_key = excluded.wake_key,
				hmac_secret = excluded.hmac_secret, preset = excluded.preset, debounce_ms = excluded.debounce_ms,
				max_per_hour = excluded.max_per_hour, key_header = excluded.key_header, key_prefix = excluded.key_prefix,
				body_template = excluded.body_template, openclaw_agent_id = excluded.openclaw_agent_id,
				cli_command = excluded.cli_command, updated_at = excluded.updated_at`,
			c.AgentID, c.URL, key, hmacSecret, string(c.Preset), c.Debounce.Milliseconds(), c.MaxPerHour,
			c.KeyHeader, c.KeyPrefix, c.BodyTemplate, c.OpenClawAgentID, c.CLICommand, nanos(c.CreatedAt), nanos(c.UpdatedAt))
		return err
	})
}

// FindWakeConfig implements switchboard.WakeStore.
func (db *DB) FindWakeConfig(ctx context.Context, agentID string) (*switchboard.WakeConfig, error) {
	var c switchboard.WakeConfig
	var preset string
	var debounce, created, updated int64
	err := db.read.QueryRowContext(ctx, `SELECT `+wakeConfigColumns+` FROM wake_configs WHERE agent_id = $1`, agentID).Scan(
		&c.AgentID, &c.URL, &c.Key, &c.HMACSecret, &preset, &debounce, &c.MaxPerHour, &c.KeyHeader, &c.KeyPrefix,
		&c.BodyTemplate, &c.OpenClawAgentID, &c.CLICommand, &created, &updated)
	if err == sql.ErrNoRows {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "no wake configuration")
	} else if err != nil {
		return nil, db.formatError(err)
	}
	c.Preset, c.Debounce = switchboard.WakePreset(preset), time.Duration(debounce)*time.Millisecond
	c.CreatedAt, c.UpdatedAt = fromNanos(created), fromNanos(updated)
	if c.Key, err = db.open(purposeWakeKey, c.Key); err != nil {
		return nil, err
	}
	if c.HMACSecret, err = db.open(purposeWakeHMAC, c.HMACSecret); err != nil {
		return nil, err
	}
	return &c, nil
}

// DeleteWakeConfig implements switchboard.WakeStore.
func (db *DB) DeleteWakeConfig(ctx context.Context, agentID string) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM wake_configs WHERE agent_id = $1`, agentID)
		if err != nil {
			return err
		}
		if err := changedRow(res, switchboard.Errorf(switchboard.ENOTFOUND, "no wake configuration")); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE wakes SET state = 'dropped', last_error = 'the wake configuration was removed',
			updated_at = $1 WHERE agent_id = $2 AND state = 'pending'`, nanos(db.Now()), agentID)
		return err
	})
}

// EnqueueWake implements switchboard.WakeStore.
func (db *DB) EnqueueWake(ctx context.Context, r *switchboard.WakeRequest) (bool, error) {
	var queued bool
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		queued, err = db.enqueueWake(ctx, tx, r)
		return err
	})
	return queued, err
}

// enqueueWake is EnqueueWake within tx; CreateTask and ModifyTask call it
// for TaskChange.Wake, and so may any other change that should wake an
// agent in its own transaction. The pending wake of the same agent,
// conversation and kind, if any, takes the request (the partial unique
// index wakes_pending settles concurrent requests); otherwise a new wake
// is due after the configuration's debounce (a pairing request's at once).
func (db *DB) enqueueWake(ctx context.Context, tx *sql.Tx, r *switchboard.WakeRequest) (bool, error) {
	var debounceMS int64
	err := tx.QueryRowContext(ctx, `SELECT debounce_ms FROM wake_configs WHERE agent_id = $1`, r.AgentID).Scan(&debounceMS)
	if err == sql.ErrNoRows {
		return false, nil
	} else if err != nil {
		return false, err
	}
	now := db.Now().UTC()
	due := now.Add(time.Duration(debounceMS) * time.Millisecond)
	if r.Kind == switchboard.WakePairingRequest {
		due = now // a human waits for the code to be approved
	}
	var id string
	err = tx.QueryRowContext(ctx, `INSERT INTO wakes (id, agent_id, peer_id, context_id, kind, named_task_id, sender, preview, count, state,
			due_at, created_at, updated_at, trace_parent)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 1, 'pending', $9, $10, $10, $11)
		ON CONFLICT (agent_id, peer_id, context_id, kind) WHERE state = 'pending' DO UPDATE SET named_task_id = excluded.named_task_id,
			sender = excluded.sender, preview = excluded.preview, count = wakes.count + 1, updated_at = excluded.updated_at,
			trace_parent = excluded.trace_parent
		RETURNING id`,
		switchboard.NewID(), r.AgentID, r.PeerID, r.ContextID, string(r.Kind), string(r.TaskID), r.From, storedPreview(r), nanos(due), nanos(now),
		r.TraceParent).Scan(&id)
	if err != nil {
		return false, fmt.Errorf("queue wake: %w", err)
	}
	if r.TaskID != "" {
		// At most switchboard.MaxWakeTaskIDs: peers choose how many tasks
		// one conversation gets, and every id goes into the wake's body.
		if _, err := tx.ExecContext(ctx, `INSERT INTO wake_tasks (wake_id, named_task_id, added_at) SELECT $1, $2, $3
			WHERE (SELECT COUNT(*) FROM wake_tasks WHERE wake_id = $1) < `+strconv.Itoa(switchboard.MaxWakeTaskIDs)+`
			ON CONFLICT DO NOTHING`, id, string(r.TaskID), nanos(now)); err != nil {
			return false, err
		}
	}
	return true, nil
}

// ClaimWakes implements switchboard.WakeStore.
func (db *DB) ClaimWakes(ctx context.Context, holder string, max int, lease time.Duration) ([]*switchboard.Wake, error) {
	now := db.Now().UTC()
	query := `SELECT ` + wakeColumns + ` FROM wakes w
		WHERE (w.state = 'pending' AND w.due_at <= $1) OR (w.state = 'sending' AND w.lease_until < $1)
		ORDER BY w.due_at, w.id LIMIT ` + fmt.Sprint(max) + db.forClaim("w")
	if !db.dialect.rowLocks {
		// SQLite: look with a reader first, so that an empty queue (the
		// usual case at each poll) takes no write lock.
		rows, err := db.read.QueryContext(ctx, query, nanos(now))
		if err != nil {
			return nil, db.formatError(err)
		}
		found := rows.Next()
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, err
		}
		if !found {
			return nil, nil
		}
	}
	var out []*switchboard.Wake
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		out = nil
		rows, err := tx.QueryContext(ctx, query, nanos(now))
		if err != nil {
			return err
		}
		due, err := scanWakes(rows)
		if err != nil {
			return err
		}
		for _, w := range due {
			ok, err := db.claimWake(ctx, tx, w, holder, now, lease)
			if err != nil {
				return err
			}
			if ok {
				out = append(out, w)
			}
		}
		return db.loadWakeTasks(ctx, tx, out)
	})
	if err != nil {
		return nil, err // rolled back: nothing is held
	}
	return out, nil
}

// claimWake hands one due wake to holder unless its configuration is gone
// (it is dropped) or its agent's hourly cap is used up (it waits for the
// next hour).
func (db *DB) claimWake(ctx context.Context, tx *sql.Tx, w *switchboard.Wake, holder string, now time.Time, lease time.Duration) (bool, error) {
	var perHour int
	err := tx.QueryRowContext(ctx, `SELECT max_per_hour FROM wake_configs WHERE agent_id = $1`, w.AgentID).Scan(&perHour)
	if err == sql.ErrNoRows {
		_, err = tx.ExecContext(ctx, `UPDATE wakes SET state = 'dropped', holder = '', last_error = 'no wake configuration',
			updated_at = $1 WHERE id = $2`, nanos(now), w.ID)
		return false, err
	} else if err != nil {
		return false, err
	}
	// A sending wake whose lease ended lost its sender mid-attempt: that
	// counts as a retry, so a wake whose sending kills the sender every
	// time is given up like one answered 503 every time.
	expired := w.State == switchboard.WakeSending
	if expired && w.Retries >= switchboard.WakeMaxRetries {
		w.State = switchboard.WakeDropped
		_, err = tx.ExecContext(ctx, `UPDATE wakes SET state = 'dropped', holder = '', last_error = $1, updated_at = $2 WHERE id = $3`,
			truncateError(fmt.Sprintf("its sender stopped without an outcome %d times", w.Retries+1)), nanos(now), w.ID)
		return false, err
	}
	if perHour > 0 {
		hour := now.Unix() / 3600
		if _, err := tx.ExecContext(ctx, `INSERT INTO wake_budget (agent_id, hour, count) VALUES ($1, $2, 0)
			ON CONFLICT DO NOTHING`, w.AgentID, hour); err != nil {
			return false, err
		}
		res, err := tx.ExecContext(ctx, `UPDATE wake_budget SET count = count + 1 WHERE agent_id = $1 AND hour = $2 AND count < $3`,
			w.AgentID, hour, perHour)
		if err != nil {
			return false, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return false, err
		} else if n == 0 {
			// Over the cap: wait for the next hour. A sending wake whose
			// lease ended keeps its state (a pending wake of the same
			// conversation may exist) and waits through its lease.
			next := nanos(time.Unix((hour+1)*3600, 0))
			_, err = tx.ExecContext(ctx, `UPDATE wakes SET due_at = $1, lease_until = CASE WHEN state = 'sending' THEN $1 ELSE lease_until END,
				last_error = 'the hourly cap is used up', updated_at = $2 WHERE id = $3`, next, nanos(now), w.ID)
			return false, err
		}
	}
	if expired {
		w.Retries++
	}
	w.State, w.Holder, w.LeaseUntil, w.UpdatedAt = switchboard.WakeSending, holder, now.Add(lease), now
	_, err = tx.ExecContext(ctx, `UPDATE wakes SET state = 'sending', holder = $1, lease_until = $2, retries = $3, updated_at = $4 WHERE id = $5`,
		holder, nanos(w.LeaseUntil), w.Retries, nanos(now), w.ID)
	return err == nil, err
}

// FinishWake implements switchboard.WakeStore.
func (db *DB) FinishWake(ctx context.Context, id, holder string, state switchboard.WakeState, status int, lastErr string) (bool, error) {
	switch state {
	case switchboard.WakeSent, switchboard.WakeFailed, switchboard.WakeDropped:
	default:
		return false, fmt.Errorf("finish wake %s: %q is not a final state", id, state)
	}
	var n int64
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE wakes SET state = $1, last_status = $2, last_error = $3, holder = '', updated_at = $4
			WHERE id = $5 AND holder = $6 AND state = 'sending'`, string(state), status, truncateError(lastErr), nanos(db.Now()), id, holder)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n > 0, err
}

// RetryWake implements switchboard.WakeStore.
func (db *DB) RetryWake(ctx context.Context, id, holder string, due time.Time, retried bool, status int, lastErr string) (bool, error) {
	var ok bool
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var w retriedWake
		err := tx.QueryRowContext(ctx, `SELECT agent_id, peer_id, context_id, kind, retries, count FROM wakes
			WHERE id = $1 AND holder = $2 AND state = 'sending'`+db.forUpdate(""), id, holder).Scan(&w.agentID, &w.peerID, &w.contextID, &w.kind, &w.retries, &w.count)
		if err == sql.ErrNoRows {
			return nil
		} else if err != nil {
			return err
		}
		ok = true
		if retried {
			w.retries++
		}
		w.id, w.due, w.status, w.lastErr, w.now = id, nanos(due), status, truncateError(lastErr), nanos(db.Now())
		// On PostgreSQL a message may queue a new pending wake of the same
		// conversation after the look for one and before this one is made
		// pending again: the unique index wakes_pending then refuses it once
		// that message commits. Look again and merge; the second look sees
		// the committed wake.
		for attempt := 1; ; attempt++ {
			if err := db.retryWake(ctx, tx, &w); !errors.Is(err, errPendingRace) || attempt == 3 {
				return err
			}
		}
	})
	return ok, err
}

// retriedWake is a claimed wake that RetryWake returns to pending.
type retriedWake struct {
	id, agentID, peerID, contextID, kind string
	retries, count, status               int
	due, now                             int64
	lastErr                              string
}

// errPendingRace says that another pending wake of the same agent,
// conversation and kind was committed while RetryWake made one pending.
var errPendingRace = errors.New("a pending wake of the conversation appeared meanwhile")

// retryWake makes w pending again, or, if another wake of its agent,
// conversation and kind is pending, merges w into it (that wake takes w's
// tasks, and its wait and retry count if they are larger) and deletes w.
func (db *DB) retryWake(ctx context.Context, tx *sql.Tx, w *retriedWake) error {
	var other string
	var otherDue int64
	var otherRetries int
	err := tx.QueryRowContext(ctx, `SELECT id, due_at, retries FROM wakes
		WHERE agent_id = $1 AND peer_id = $2 AND context_id = $3 AND kind = $4 AND state = 'pending'`+db.forUpdate(""),
		w.agentID, w.peerID, w.contextID, w.kind).Scan(&other, &otherDue, &otherRetries)
	if err == sql.ErrNoRows {
		const pending = `UPDATE wakes SET state = 'pending', holder = '', due_at = $1, retries = $2,
			last_status = $3, last_error = $4, updated_at = $5 WHERE id = $6`
		args := []any{w.due, w.retries, w.status, w.lastErr, w.now, w.id}
		if !db.dialect.rowLocks {
			// SQLite: the transaction holds the database; nothing can
			// have become pending since the look.
			_, err = tx.ExecContext(ctx, pending, args...)
			return err
		}
		if _, err := tx.ExecContext(ctx, `SAVEPOINT retry_wake`); err != nil {
			return err
		}
		if _, err = tx.ExecContext(ctx, pending, args...); err != nil {
			if _, rerr := tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT retry_wake`); rerr != nil {
				return errors.Join(err, rerr)
			}
			if db.dialect.uniqueViolation(err) {
				return errPendingRace
			}
			return err
		}
		_, err = tx.ExecContext(ctx, `RELEASE SAVEPOINT retry_wake`)
		return err
	} else if err != nil {
		return err
	}
	// A newer message made a pending wake meanwhile: it takes this one's
	// tasks, and the retry's wait and count.
	if _, err := tx.ExecContext(ctx, `INSERT INTO wake_tasks (wake_id, named_task_id, added_at)
		SELECT $1, named_task_id, added_at FROM wake_tasks WHERE wake_id = $2 ON CONFLICT DO NOTHING`, other, w.id); err != nil {
		return err
	}
	// The two may name more than a wake keeps: the first ones stay.
	if _, err := tx.ExecContext(ctx, `DELETE FROM wake_tasks WHERE wake_id = $1 AND named_task_id NOT IN (
		SELECT named_task_id FROM wake_tasks WHERE wake_id = $1 ORDER BY added_at, named_task_id LIMIT `+strconv.Itoa(switchboard.MaxWakeTaskIDs)+`)`, other); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE wakes SET due_at = $1, retries = $2, count = count + $3, last_status = $4,
		last_error = $5, updated_at = $6 WHERE id = $7`,
		max(otherDue, w.due), max(otherRetries, w.retries), w.count, w.status, w.lastErr, w.now, other)
	if err != nil {
		return err
	}
	for _, q := range []string{`DELETE FROM wake_tasks WHERE wake_id = $1`, `DELETE FROM wakes WHERE id = $1`} {
		if _, err := tx.ExecContext(ctx, q, w.id); err != nil {
			return err
		}
	}
	return nil
}

// FindWakes implements switchboard.WakeStore.
func (db *DB) FindWakes(ctx context.Context, agentID string, limit int) ([]*switchboard.Wake, error) {
	if limit <= 0 {
		limit = 20
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+wakeColumns+` FROM wakes w WHERE w.agent_id = $1
		ORDER BY w.created_at DESC, w.id DESC LIMIT `+fmt.Sprint(limit), agentID)
	if err != nil {
		return nil, db.formatError(err)
	}
	out, err := scanWakes(rows)
	if err != nil {
		return nil, err
	}
	return out, db.loadWakeTasks(ctx, db.read, out)
}

// PruneWakes implements switchboard.WakeStore.
func (db *DB) PruneWakes(ctx context.Context, before time.Time) (int, error) {
	var n int64
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		const finished = `SELECT id FROM wakes WHERE state IN ('sent', 'failed', 'dropped') AND updated_at < $1`
		if _, err := tx.ExecContext(ctx, `DELETE FROM wake_tasks WHERE wake_id IN (`+finished+`)`, nanos(before)); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM wakes WHERE id IN (`+finished+`)`, nanos(before))
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM wake_budget WHERE hour < $1`, before.Unix()/3600)
		return err
	})
	return int(n), err
}

// loadWakeTasks fills in the task ids of each wake, in the order they came.
func (db *DB) loadWakeTasks(ctx context.Context, q interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}, wakes []*switchboard.Wake) error {
	for _, w := range wakes {
		rows, err := q.QueryContext(ctx, `SELECT named_task_id FROM wake_tasks WHERE wake_id = $1 ORDER BY added_at, named_task_id`, w.ID)
		if err != nil {
			return err
		}
		w.TaskIDs = nil
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			w.TaskIDs = append(w.TaskIDs, a2a.TaskID(id))
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
	}
	return nil
}

func scanWakes(rows *sql.Rows) ([]*switchboard.Wake, error) {
	defer rows.Close()
	var out []*switchboard.Wake
	for rows.Next() {
		var w switchboard.Wake
		var kind, task, state string
		var due, lease, created, updated int64
		if err := rows.Scan(&w.ID, &w.AgentID, &w.PeerID, &w.ContextID, &kind, &task, &w.From, &w.Preview, &w.Count, &state, &w.Retries,
			&due, &w.Holder, &lease, &w.LastStatus, &w.LastError, &created, &updated, &w.TraceParent); err != nil {
			return nil, err
		}
		w.Kind, w.TaskID, w.State = switchboard.WakeKind(kind), a2a.TaskID(task), switchboard.WakeState(state)
		w.DueAt, w.LeaseUntil, w.CreatedAt, w.UpdatedAt = fromNanos(due), fromNanos(lease), fromNanos(created), fromNanos(updated)
		out = append(out, &w)
	}
	return out, rows.Err()
}

// storedPreview returns the preview of a wake request as it is stored:
// its Preview, or else the preview of its Message's text.
func storedPreview(r *switchboard.WakeRequest) string {
	if r.Preview == "" && r.Message != nil {
		return redact.Preview(switchboard.MessageText(r.Message))
	}
	return r.Preview
}
