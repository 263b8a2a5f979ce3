package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/switchboard-dev/switchboard"
)

// A new task is usually a peer's first message and nothing else: its
// message id, no push configuration, no wake, at most a delivery (queued,
// or offered by this instance). On PostgreSQL, where each statement is a
// round trip, CreateTask writes such a task in one statement
// (createInOneStatement) rather than a transaction of six or seven round
// trips; every part of it is inserted only if the agent exists, which it
// locks as the transaction would, and only if the task fits its peer's
// quota (TaskChange.Quota), which the same statement adds it to.

// createsInOneStatement reports whether CreateTask writes the task and
// change in one statement.
func (db *DB) createsInOneStatement(t *switchboard.Task, change *switchboard.TaskChange) bool {
	return db.dialect.rowLocks && change.MessageID != "" && change.PushConfig == nil && change.Wake == nil && !change.OfferSent &&
		(change.Quota == nil || (change.Quota.HeldOpen == 0 && change.Quota.HeldBytes == 0)) &&
		len(change.Events) == 0 && len(change.CloseDeliveries) == 0 && change.Ack == nil && len(change.NewDeliveries) <= 1 &&
		taskUsage(t.State(), 0).open == 1
}

// createTaskStatement inserts a task (parameters $1–$13, taskRowArgs, but
// offered, $12, says whether its delivery comes offered), its first
// event ($14 created_at, $15 data) and its message id ($16), and adds it
// to its peer's usage, all only if the agent exists and the peer's usage
// with the task fits the quota (the last two parameters: the most open
// tasks and bytes, 0 for no bound). An offered delivery is kept so only
// when the agent accepts tasks and has none queued, which go first (the
// agent's "demote"); the task row is then marked offered. It returns
// whether it was (NULL when nothing was written) and whether the agent
// exists. createTaskWithDeliveryStatement also inserts the delivery ($17
// id, $18 kind, $19 message id, $20 state, $21 deadline, $22 next
// attempt, $23 created_at, $24 attempts, $25 holder, $26 last error, $27
// offered_at, and the agent's mode), as insertDelivery writes it, or
// queued if demoted. The task's peer kind comes after the quota's, and
// last, with a delivery, the delivery's trace context ($31). The parameters in CASE are cast: PostgreSQL would take
// them for text.
var (
	createTaskStatement             = createTaskSQL(false)
	createTaskWithDeliveryStatement = createTaskSQL(true)
)

// createTaskSQL returns createTaskStatement, or with a delivery
// createTaskWithDeliveryStatement.
func createTaskSQL(withDelivery bool) string {
	quota := 17
	if withDelivery {
		quota = 28
	}
	maxTasks, maxBytes := fmt.Sprintf("$%d::bigint", quota), fmt.Sprintf("$%d::bigint", quota+1)
	peerKind := fmt.Sprintf("$%d::text", quota+2)
	// The peer's row takes the task only if the quota allows it: a new
	// row if the task alone fits, an existing one if it fits with the
	// task. ok is the agent if the row took it, and every insert is of ok.
	q := `WITH agent AS (
			SELECT $12 = 1 AND NOT (accepts_tasks = 1
				AND NOT EXISTS (SELECT 1 FROM deliveries WHERE agent_id = $2 AND state = 'queued')) AS demote, mode
			FROM agents WHERE id = $2 FOR SHARE OF agents
		),
		usage AS (INSERT INTO peer_usage (agent_id, peer_id, open_tasks, bytes)
			SELECT $2, $3, 1, octet_length($13::text) FROM agent
			WHERE ` + maxBytes + ` = 0 OR octet_length($13::text) <= ` + maxBytes + `
			ON CONFLICT (agent_id, peer_id) DO UPDATE
			SET open_tasks = peer_usage.open_tasks + excluded.open_tasks, bytes = peer_usage.bytes + excluded.bytes
			WHERE (` + maxTasks + ` = 0 OR peer_usage.open_tasks + excluded.open_tasks <= ` + maxTasks + `)
				AND (` + maxBytes + ` = 0 OR peer_usage.bytes + excluded.bytes <= ` + maxBytes + `)
			RETURNING 1),
		ok AS (SELECT demote, mode FROM agent WHERE EXISTS (SELECT 1 FROM usage)),
		event AS (INSERT INTO task_events (task_id, seq, created_at, data) SELECT $1, $8, $14, $15 FROM ok),
		message AS (INSERT INTO task_messages (agent_id, peer_id, message_id, task_id) SELECT $2, $3, $16, $1 FROM ok),`
	if withDelivery {
		q += `
		delivery AS (INSERT INTO deliveries (` + deliveryRowColumns + `)
			SELECT $17, $1, $2, $18, $19,
				CASE WHEN demote THEN 'queued' ELSE $20::text END, CASE WHEN demote THEN 0 ELSE $24::integer END,
				CASE WHEN demote THEN '' ELSE $25::text END, CASE WHEN demote THEN '' ELSE $25::text END,
				$21, CASE WHEN demote THEN $23::bigint ELSE $22::bigint END, $26, $23,
				CASE WHEN demote THEN NULL ELSE $27::bigint END, mode, $31::text
			FROM ok),`
	}
	return q + `
		task AS (INSERT INTO tasks (` + taskRowColumns + `)
			SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, CASE WHEN $12 = 1 AND NOT demote THEN 1 ELSE 0 END, $13, ` + peerKind + `
			FROM ok RETURNING offered)
		SELECT (SELECT offered FROM task), EXISTS (SELECT 1 FROM agent)`
}

// createInOneStatement is CreateTask for a change that createsInOneStatement
// allows. data is the task's JSON; the first event is snapshot.
func (db *DB) createInOneStatement(ctx context.Context, t *switchboard.Task, change *switchboard.TaskChange, snapshot *a2a.Task, data []byte) (*switchboard.TaskEvent, error) {
	now := db.Now().UTC()
	t.Seq = 1
	var d *switchboard.Delivery
	if len(change.NewDeliveries) == 1 {
		d = change.NewDeliveries[0]
	}
	offers := d != nil && d.State == switchboard.DeliveryOffered
	args := append(taskRowArgs(t, data, offers), nanos(now), string(wrapEvent("task", data)), change.MessageID)
	query := createTaskStatement
	if d != nil {
		args = append(args, d.ID, string(d.Kind), d.MessageID, string(d.State), nanos(d.Deadline), nanos(d.NextAttemptAt),
			nanos(d.CreatedAt), d.Attempts, d.Holder, d.LastError, nullableNanos(d.OfferedAt))
		query = createTaskWithDeliveryStatement
	}
	var quota switchboard.PeerQuota
	if change.Quota != nil {
		quota = *change.Quota
	}
	args = append(args, quota.MaxOpenTasks, quota.MaxBytes, string(t.PeerKind))
	if d != nil {
		args = append(args, d.TraceParent)
	}
	var offered sql.NullInt64
	var agentExists bool
	if db.OnWrite != nil {
		defer db.timeWrite(time.Now())
	}
	err := db.write.QueryRowContext(ctx, query, args...).Scan(&offered, &agentExists)
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == "task_messages_pkey":
		return nil, switchboard.ErrDuplicateMessage
	case errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == "tasks_pkey":
		return nil, switchboard.Errorf(switchboard.ECONFLICT, "task %s already exists", t.ID())
	case err != nil:
		return nil, db.formatError(err)
	case !agentExists:
		return nil, errAgentNotFound
	case !offered.Valid:
		return nil, &overQuota{agentID: t.AgentID, peerID: t.PeerID, quota: quota, d: taskUsage(t.State(), len(data))}
	}
	t.Offered = offered.Int64 == 1
	if offers && !t.Offered {
		queueInstead(d)
	}
	return &switchboard.TaskEvent{TaskID: t.ID(), Seq: t.Seq, Event: snapshot, CreatedAt: now}, nil
}
