package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/a2ajson"
)

var _ switchboard.PushStore = (*DB)(nil)

const pushDeliveryColumns = `p.id, p.task_id, p.config_id, p.seq, p.task_state, p.state, p.attempts, p.next_attempt_at,
	p.last_error, p.last_status, p.created_at, p.done_at, p.trace_parent`

// queuePushes writes, within tx, a push of t as it stands for each of its
// push configurations, if the change's events are pushed
// (switchboard.PushedChange), and returns how many it wrote.
func (db *DB) queuePushes(ctx context.Context, tx *sql.Tx, t *switchboard.Task, events []a2a.Event, traceparent string) (int, error) {
	if !switchboard.PushedChange(events) {
		return 0, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT id FROM push_configs WHERE task_id = $1 ORDER BY created_at, id`, string(t.ID()))
	if err != nil {
		return 0, err
	}
	var configs []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		configs = append(configs, id)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil || len(configs) == 0 {
		return 0, err
	}
	data, err := a2ajson.AppendTask(nil, &t.A2A)
	if err != nil {
		return 0, fmt.Errorf("encode task %s: %w", t.ID(), err)
	}
	now := nanos(db.Now())
	for _, c := range configs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO push_deliveries (id, task_id, config_id, seq, task_state, state,
			next_attempt_at, created_at, data, trace_parent) VALUES ($1, $2, $3, $4, $5, 'queued', $6, $7, $8, $9)`,
			switchboard.NewID(), string(t.ID()), c, t.Seq, string(t.State()), now, now, string(data), traceparent); err != nil {
			return 0, err
		}
	}
	return len(configs), nil
}

// cancelPushes cancels, within tx, the unsent pushes of one configuration.
func (db *DB) cancelPushes(ctx context.Context, tx *sql.Tx, taskID a2a.TaskID, configID string) error {
	_, err := tx.ExecContext(ctx, `UPDATE push_deliveries SET state = 'canceled', holder = '', data = '', done_at = $1,
		last_error = 'the push notification config was deleted'
		WHERE task_id = $2 AND config_id = $3 AND state IN ('queued', 'sending')`, nanos(db.Now()), string(taskID), configID)
	return err
}

// ClaimPushes implements switchboard.PushStore.
func (db *DB) ClaimPushes(ctx context.Context, holder string, now time.Time, max int, lease time.Duration, limits switchboard.PushLimits) ([]*switchboard.PushDelivery, error) {
	query := `SELECT ` + pushDeliveryColumns + `, c.protocol, c.created_at, c.data, p.data
		FROM push_deliveries p JOIN push_configs c ON c.task_id = p.task_id AND c.id = p.config_id
		WHERE p.state IN ('queued', 'sending') AND p.next_attempt_at <= $1
		AND NOT EXISTS (SELECT 1 FROM push_deliveries q WHERE q.task_id = p.task_id AND q.config_id = p.config_id
			AND q.state IN ('queued', 'sending') AND q.seq < p.seq)
		ORDER BY p.next_attempt_at, p.created_at, p.id` + fmt.Sprintf(` LIMIT %d`, max) + db.forClaim("p")
	at := nanos(now)
	if !db.dialect.rowLocks {
		// SQLite: look with a reader first, so that a claim that finds
		// nothing (the usual case) takes no write lock.
		rows, err := db.read.QueryContext(ctx, query, at)
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
	var out []*switchboard.PushDelivery
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, query, at)
		if err != nil {
			return err
		}
		claimed, unreadable, err := db.scanClaimedPushes(rows)
		if err != nil {
			return err
		}
		for id, why := range unreadable {
			// Sending it cannot succeed, and failing the claim would stop
			// every push behind it: it fails alone.
			msg := truncateError("its push configuration or task cannot be read: " + why)
			if _, err := tx.ExecContext(ctx, `UPDATE push_deliveries SET state = 'failed', holder = '', last_error = $1,
				last_status = 0, done_at = $2, data = '' WHERE id = $3`, msg, at, id); err != nil {
				return err
			}
		}
		out = out[:0]
		until := nanos(now.Add(lease))
		for _, p := range claimed {
			if p.State == switchboard.PushSending {
				// Its sender's lease ended without an outcome: it stopped.
				// The lost attempt counts; past the limits the push is
				// given up rather than tried once more.
				const interrupted = "interrupted: no outcome was recorded (the sender stopped)"
				if why := limits.Exceeded(p.Attempts, p.CreatedAt, now); why != "" {
					msg := interrupted + " (" + why + ")"
					if _, err := tx.ExecContext(ctx, `INSERT INTO push_attempts (push_id, task_id, at, status_code, error)
						VALUES ($1, $2, $3, 0, $4)`, p.ID, string(p.TaskID), at, msg); err != nil {
						return err
					}
					if _, err := tx.ExecContext(ctx, `UPDATE push_deliveries SET state = 'failed', holder = '', last_error = $1,
						last_status = 0, done_at = $2, data = '' WHERE id = $3`, msg, at, p.ID); err != nil {
						return err
					}
					continue
				}
				if _, err := tx.ExecContext(ctx, `INSERT INTO push_attempts (push_id, task_id, at, status_code, error, next_attempt_at)
					VALUES ($1, $2, $3, 0, $4, $3)`, p.ID, string(p.TaskID), at, interrupted); err != nil {
					return err
				}
			}
			out = append(out, p)
			p.State, p.Attempts, p.NextAttemptAt = switchboard.PushSending, p.Attempts+1, fromNanos(until)
			if _, err := tx.ExecContext(ctx, `UPDATE push_deliveries SET state = 'sending', holder = $1, attempts = $2,
				next_attempt_at = $3 WHERE id = $4`, holder, p.Attempts, until, p.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err // rolled back: nothing is held
	}
	return out, nil
}

// RecordPushAttempt implements switchboard.PushStore.
func (db *DB) RecordPushAttempt(ctx context.Context, id, holder string, a *switchboard.PushAttempt, state switchboard.PushState) (bool, error) {
	var next sql.NullInt64
	if a.NextAttemptAt != nil {
		next = sql.NullInt64{Int64: nanos(*a.NextAttemptAt), Valid: true}
	}
	var held bool
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO push_attempts (push_id, task_id, at, status_code, error, next_attempt_at)
			SELECT id, task_id, $1, $2, $3, $4 FROM push_deliveries WHERE id = $5`,
			nanos(a.At), a.StatusCode, truncateError(a.Error), next, id); err != nil {
			return err
		}
		var res sql.Result
		var err error
		switch state {
		case switchboard.PushQueued:
			if !next.Valid {
				return fmt.Errorf("push %s: a retry needs its time", id)
			}
			res, err = tx.ExecContext(ctx, `UPDATE push_deliveries SET state = 'queued', holder = '', next_attempt_at = $1,
				last_error = $2, last_status = $3 WHERE id = $4 AND holder = $5 AND state = 'sending'`,
				next.Int64, truncateError(a.Error), a.StatusCode, id, holder)
		case switchboard.PushSent, switchboard.PushFailed:
			res, err = tx.ExecContext(ctx, `UPDATE push_deliveries SET state = $1, holder = '', last_error = $2, last_status = $3,
				done_at = $4, data = '' WHERE id = $5 AND holder = $6 AND state = 'sending'`,
				string(state), truncateError(a.Error), a.StatusCode, nanos(a.At), id, holder)
		default:
			return fmt.Errorf("push %s: an attempt cannot leave it %s", id, state)
		}
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		held = n > 0
		return err
	})
	return held, err
}

// FindPushes implements switchboard.PushStore.
func (db *DB) FindPushes(ctx context.Context, taskID a2a.TaskID) ([]*switchboard.PushDelivery, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+pushDeliveryColumns+` FROM push_deliveries p WHERE p.task_id = $1
		ORDER BY p.seq, p.created_at, p.config_id`, string(taskID))
	if err != nil {
		return nil, db.formatError(err)
	}
	defer rows.Close()
	var out []*switchboard.PushDelivery
	for rows.Next() {
		p, err := scanPush(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// FindPushAttempts implements switchboard.PushStore.
func (db *DB) FindPushAttempts(ctx context.Context, taskID a2a.TaskID) ([]*switchboard.PushAttempt, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT push_id, at, status_code, error, next_attempt_at FROM push_attempts
		WHERE task_id = $1 ORDER BY at, push_id`, string(taskID))
	if err != nil {
		return nil, db.formatError(err)
	}
	defer rows.Close()
	var out []*switchboard.PushAttempt
	for rows.Next() {
		var a switchboard.PushAttempt
		var at int64
		var next sql.NullInt64
		if err := rows.Scan(&a.PushID, &at, &a.StatusCode, &a.Error, &next); err != nil {
			return nil, err
		}
		a.At, a.NextAttemptAt = fromNanos(at), nullNanos(next)
		out = append(out, &a)
	}
	return out, rows.Err()
}

func scanPush(s scanner, extra ...any) (*switchboard.PushDelivery, error) {
	var p switchboard.PushDelivery
	var task, taskState, state string
	var next, created int64
	var done sql.NullInt64
	dest := append([]any{&p.ID, &task, &p.ConfigID, &p.Seq, &taskState, &state, &p.Attempts, &next,
		&p.LastError, &p.LastStatus, &created, &done, &p.TraceParent}, extra...)
	if err := s.Scan(dest...); err != nil {
		return nil, err
	}
	p.TaskID, p.TaskState, p.State = a2a.TaskID(task), a2a.TaskState(taskState), switchboard.PushState(state)
	p.NextAttemptAt, p.CreatedAt, p.DoneAt = fromNanos(next), fromNanos(created), nullNanos(done)
	return &p, nil
}

// scanClaimedPushes reads pushes with their configuration and task
// snapshot; those whose configuration does not open or decode, or whose
// task does not decode, it returns apart, by id, with why.
func (db *DB) scanClaimedPushes(rows *sql.Rows) (out []*switchboard.PushDelivery, unreadable map[string]string, err error) {
	defer rows.Close()
	for rows.Next() {
		var proto, config, task string
		var configCreated int64
		p, err := scanPush(rows, &proto, &configCreated, &config, &task)
		if err != nil {
			return nil, nil, err
		}
		p.Config = &switchboard.PushConfig{Protocol: switchboard.ProtocolVersion(proto), CreatedAt: fromNanos(configCreated)}
		p.Task = new(a2a.Task)
		if config, err = db.open(purposePushConfig, config); err == nil {
			if err = json.Unmarshal([]byte(config), &p.Config.Config); err == nil {
				err = a2ajson.UnmarshalTask([]byte(task), p.Task)
			}
		}
		if err != nil {
			if unreadable == nil {
				unreadable = make(map[string]string)
			}
			unreadable[p.ID] = err.Error()
			continue
		}
		out = append(out, p)
	}
	return out, unreadable, rows.Err()
}
