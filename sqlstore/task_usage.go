package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// A task counts toward its peer's usage of its agent (the table peer_usage,
// migration 0013) while it is unfinished: one open task, and the bytes of
// its JSON as stored. Every write of a task row adds what it changes of
// that to the peer's row, in the write's transaction: CreateTask what the
// new task counts, ModifyTask what the task counts now less what it counted
// when read. A change that carries a TaskChange.Quota is checked against the
// peer's row as the write leaves it, in the same transaction (SQLite: the
// one writer; PostgreSQL: the row is locked from the upsert to the commit),
// so concurrent changes cannot pass a quota together, and the check costs
// no statement of its own. Rows stay when their counts fall to zero (and go
// with their agent): a peer that sent once is likely to send again.
//
// Instances of an older version write tasks without changing the counts
// while a deployment is upgraded, so a count may be off. A change the
// counts would refuse is therefore tried again once the counts have been
// made from the tasks themselves (RecountPeerUsage), unless they were so
// made within recountInterval: only a peer at its quota pays for a count,
// at most once a minute.

// recountInterval is how long counts made from the tasks are trusted to
// refuse a change without counting again.
const recountInterval = time.Minute

// usage is what a task counts toward its peer's usage, or a change of it.
type usage struct{ open, bytes int64 }

// taskUsage returns what a task in state s whose JSON is size bytes counts.
// The states are those of unfinishedStates.
func taskUsage(s a2a.TaskState, size int) usage {
	switch s {
	case a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired:
		return usage{open: 1, bytes: int64(size)}
	}
	return usage{}
}

// minus returns the change from was to u.
func (u usage) minus(was usage) usage {
	return usage{open: u.open - was.open, bytes: u.bytes - was.bytes}
}

// checked reports whether a change of d is checked against q: it adds an
// open task, or bytes, where q bounds them.
func (d usage) checked(q *switchboard.PeerQuota) bool {
	return q != nil && ((d.open > 0 && q.MaxOpenTasks > 0) || (d.bytes > 0 && q.MaxBytes > 0))
}

// passes reports whether counts of open tasks and bytes that include a
// change of d pass q.
func (d usage) passes(q *switchboard.PeerQuota, open, bytes int64) bool {
	return q != nil && ((d.open > 0 && q.MaxOpenTasks > 0 && open+int64(q.HeldOpen) > int64(q.MaxOpenTasks)) ||
		(d.bytes > 0 && q.MaxBytes > 0 && bytes+q.HeldBytes > q.MaxBytes))
}

// overQuota is the error of a write that the kept counts refuse; the
// write's transaction is undone, and CreateTask or ModifyTask settle it
// (settleQuota).
type overQuota struct {
	agentID, peerID string
	quota           switchboard.PeerQuota
	d               usage
}

func (e *overQuota) Error() string {
	return fmt.Sprintf("peer %s of agent %s: over quota %+v", e.peerID, e.agentID, e.quota)
}

// addUsageSQL adds to a peer's row (inserting it if missing) the change
// whose agent, peer, open tasks and bytes are the placeholders given. An
// upsert of nothing locks the row (PostgreSQL) as a change would.
func addUsageSQL(agent, peer, open, bytes string) string {
	return `INSERT INTO peer_usage (agent_id, peer_id, open_tasks, bytes) VALUES (` + agent + `, ` + peer + `, ` + open + `, ` + bytes + `)
		ON CONFLICT (agent_id, peer_id) DO UPDATE SET open_tasks = peer_usage.open_tasks + excluded.open_tasks, bytes = peer_usage.bytes + excluded.bytes`
}

// chargeUsage adds d to the peer's counts in tx and, when d is checked
// against q, returns an *overQuota if the counts then pass it.
func (db *DB) chargeUsage(ctx context.Context, tx *sql.Tx, agentID, peerID string, d usage, q *switchboard.PeerQuota) error {
	return db.chargePeak(ctx, tx, agentID, peerID, d, d, q)
}

// chargePeak is chargeUsage of a change that passed through peak on its
// way to d (a task written with its first answer was open, and as big as
// created, before it answered): peak, not d, is checked against q, as if
// the change had been written in two steps.
func (db *DB) chargePeak(ctx context.Context, tx *sql.Tx, agentID, peerID string, d, peak usage, q *switchboard.PeerQuota) error {
	if d == (usage{}) && !peak.checked(q) {
		return nil
	}
	if !peak.checked(q) {
		_, err := tx.ExecContext(ctx, addUsageSQL("$1", "$2", "$3", "$4"), agentID, peerID, d.open, d.bytes)
		return err
	}
	var open, bytes int64
	if err := tx.QueryRowContext(ctx, addUsageSQL("$1", "$2", "$3", "$4")+` RETURNING open_tasks, bytes`,
		agentID, peerID, d.open, d.bytes).Scan(&open, &bytes); err != nil {
		return err
	}
	if peak.passes(q, open-d.open+peak.open, bytes-d.bytes+peak.bytes) {
		return &overQuota{agentID: agentID, peerID: peerID, quota: *q, d: peak}
	}
	return nil
}

// settleQuota decides a change that the kept counts refused (oq): unless
// they were made from the tasks within recountInterval, it makes them so
// (RecountPeerUsage). It reports whether the change fits the counts then,
// for the caller to try it once more, and returns the refusal, a
// *switchboard.QuotaError, for when it does not.
func (db *DB) settleQuota(ctx context.Context, oq *overQuota) (*switchboard.QuotaError, bool, error) {
	var open, bytes, counted int64
	err := db.read.QueryRowContext(ctx, `SELECT open_tasks, bytes, counted_at FROM peer_usage WHERE agent_id = $1 AND peer_id = $2`,
		oq.agentID, oq.peerID).Scan(&open, &bytes, &counted)
	if err != nil && err != sql.ErrNoRows {
		return nil, false, fmt.Errorf("read peer usage: %w", db.formatError(err))
	}
	if err == sql.ErrNoRows || db.Now().Sub(fromNanos(counted)) >= recountInterval {
		o, b, err := db.RecountPeerUsage(ctx, oq.agentID, oq.peerID)
		if err != nil {
			return nil, false, err
		}
		open, bytes = int64(o), b
	}
	q, d := oq.quota, oq.d
	heldOpen, heldBytes := open+int64(q.HeldOpen), bytes+q.HeldBytes
	tooBig := d.bytes > 0 && q.MaxBytes > 0 && heldBytes+d.bytes > q.MaxBytes
	qe := &switchboard.QuotaError{Quota: q, OpenTasks: int(heldOpen), Bytes: heldBytes, Grow: d.bytes,
		TooMany: d.open > 0 && q.MaxOpenTasks > 0 && (heldOpen+d.open > int64(q.MaxOpenTasks) || !tooBig)}
	return qe, !d.passes(&q, open+d.open, bytes+d.bytes), nil
}

// withQuota runs write, and when the kept counts refuse it, settles the
// refusal (settleQuota) and runs it once more if the counts made again
// allow it. A refusal then is a *switchboard.QuotaError.
func (db *DB) withQuota(ctx context.Context, write func() error) error {
	err := write()
	for try := 0; ; try++ {
		var oq *overQuota
		if !errors.As(err, &oq) {
			return err
		}
		qe, fits, err2 := db.settleQuota(ctx, oq)
		if err2 != nil {
			return err2
		}
		if !fits || try > 0 {
			return qe
		}
		err = write()
	}
}

// peerUsageSQL reads a peer's row.
const peerUsageSQL = `SELECT open_tasks, bytes FROM peer_usage WHERE agent_id = $1 AND peer_id = $2`

// PeerUsage implements switchboard.TaskStore.
func (db *DB) PeerUsage(ctx context.Context, agentID, peerID string) (openTasks int, bytes int64, err error) {
	err = db.read.QueryRowContext(ctx, peerUsageSQL, agentID, peerID).Scan(&openTasks, &bytes)
	if err == sql.ErrNoRows {
		return 0, 0, nil
	} else if err != nil {
		return 0, 0, fmt.Errorf("peer usage: %w", db.formatError(err))
	}
	return openTasks, bytes, nil
}

// messageUsageSQL reads whether a message has a task and the peer's
// counts, which a peer without a row has at zero.
const messageUsageSQL = `SELECT
	EXISTS (SELECT 1 FROM task_messages WHERE agent_id = $1 AND peer_id = $2 AND message_id = $3),
	COALESCE((SELECT open_tasks FROM peer_usage WHERE agent_id = $1 AND peer_id = $2), 0),
	COALESCE((SELECT bytes FROM peer_usage WHERE agent_id = $1 AND peer_id = $2), 0)`

// MessageUsage implements switchboard.TaskStore.
func (db *DB) MessageUsage(ctx context.Context, agentID, peerID, messageID string) (sent bool, openTasks int, bytes int64, err error) {
	if err := db.read.QueryRowContext(ctx, messageUsageSQL, agentID, peerID, messageID).Scan(&sent, &openTasks, &bytes); err != nil {
		return false, 0, 0, fmt.Errorf("message and peer usage: %w", db.formatError(err))
	}
	return sent, openTasks, bytes, nil
}

// recountPeerUsageSQL counts a peer's unfinished tasks and the bytes of
// their JSON (octet_length reads a text's length, not the text). It reads
// the agent's unfinished tasks through tasks_agent_state: peer_id is
// compared through an expression, so that no plan reads the peer's tasks
// through tasks_peer, finished ones and all.
const recountPeerUsageSQL = `SELECT COUNT(*), CAST(COALESCE(SUM(octet_length(data)), 0) AS BIGINT)
	FROM tasks WHERE agent_id = $1 AND state IN (` + unfinishedStates + `) AND peer_id || '' = $2`

// RecountPeerUsage implements switchboard.TaskStore. It locks the peer's
// row first: every write that changes the peer's usage changes the row in
// its transaction, so none commits between the count and the correction.
func (db *DB) RecountPeerUsage(ctx context.Context, agentID, peerID string) (openTasks int, bytes int64, err error) {
	err = db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if db.dialect.rowLocks {
			if _, err := tx.ExecContext(ctx, addUsageSQL("$1", "$2", "0", "0"), agentID, peerID); err != nil {
				return err
			}
		}
		if err := tx.QueryRowContext(ctx, recountPeerUsageSQL, agentID, peerID).Scan(&openTasks, &bytes); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO peer_usage (agent_id, peer_id, open_tasks, bytes, counted_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (agent_id, peer_id) DO UPDATE SET open_tasks = excluded.open_tasks, bytes = excluded.bytes, counted_at = excluded.counted_at`,
			agentID, peerID, openTasks, bytes, nanos(db.Now()))
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("recount peer usage: %w", db.formatError(err))
	}
	return openTasks, bytes, nil
}

// rebuildPeerUsageSQL makes every peer's row again from the tasks, as
// migration 0013 first made them (Import, after the rows are copied).
const rebuildPeerUsageSQL = `INSERT INTO peer_usage (agent_id, peer_id, open_tasks, bytes)
	SELECT agent_id, peer_id, COUNT(*), SUM(octet_length(data)) FROM tasks WHERE state IN (` + unfinishedStates + `)
	GROUP BY agent_id, peer_id`
