package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
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
	return db.dialect.rowLocks && change.MessageID != "" && change.PushConfig == nil && !change.OfferSent &&
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
//
// With a wake request (TaskChange.Wake: an inbox agent's new task), the
// statement also queues the wake as enqueueWake does, if the agent has a
// wake configuration: its parameters come last, wakeParams of them ($w,
// wakeArgs). An inbox task is then one statement too, where the
// transaction took seven round trips.
var createTaskStatements = [4]string{createTaskSQL(false, false), createTaskSQL(true, false), createTaskSQL(false, true), createTaskSQL(true, true)}

// createTaskStatement returns the statement of createTaskStatements for a
// task with or without a delivery and a wake.
func createTaskStatement(withDelivery, withWake bool) string {
	return createTaskStatements[boolInt(withDelivery)+2*boolInt(withWake)]
}

// createTaskSQL returns a statement of createTaskStatements.
func createTaskSQL(withDelivery, withWake bool) string {
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
	if withWake {
		w := quota + 3 // after the peer kind and, with a delivery, its trace context
		if withDelivery {
			w++
		}
		p := func(i int) string { return fmt.Sprintf("$%d", w+i) }
		// $w id, +1 agent, +2 peer, +3 context, +4 kind, +5 task, +6
		// sender, +7 preview, +8 now, +9 trace context, +10 1 if due at
		// once (a pairing request), as enqueueWake writes them.
		q += `
		wake AS (INSERT INTO wakes (id, agent_id, peer_id, context_id, kind, named_task_id, sender, preview, count, state,
				due_at, created_at, updated_at, trace_parent)
			SELECT ` + p(0) + `, ` + p(1) + `, ` + p(2) + `, ` + p(3) + `, ` + p(4) + `, ` + p(5) + `, ` + p(6) + `, ` + p(7) + `, 1, 'pending',
				` + p(8) + `::bigint + CASE WHEN ` + p(10) + `::integer = 1 THEN 0 ELSE c.debounce_ms * 1000000 END, ` + p(8) + `, ` + p(8) + `, ` + p(9) + `
			FROM wake_configs c, ok WHERE c.agent_id = ` + p(1) + `
			ON CONFLICT (agent_id, peer_id, context_id, kind) WHERE state = 'pending' DO UPDATE SET named_task_id = excluded.named_task_id,
				sender = excluded.sender, preview = excluded.preview, count = wakes.count + 1, updated_at = excluded.updated_at,
				trace_parent = excluded.trace_parent
			RETURNING id),
		wake_task AS (INSERT INTO wake_tasks (wake_id, named_task_id, added_at) SELECT id, ` + p(5) + `, ` + p(8) + ` FROM wake
			WHERE ` + p(5) + ` <> '' AND (SELECT COUNT(*) FROM wake_tasks WHERE wake_id = wake.id) < ` + strconv.Itoa(switchboard.MaxWakeTaskIDs) + `
			ON CONFLICT DO NOTHING),`
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
	if d != nil {
		args = append(args, d.ID, string(d.Kind), d.MessageID, string(d.State), nanos(d.Deadline), nanos(d.NextAttemptAt),
			nanos(d.CreatedAt), d.Attempts, d.Holder, d.LastError, nullableNanos(d.OfferedAt))
	}
	query := createTaskStatement(d != nil, change.Wake != nil)
	var quota switchboard.PeerQuota
	if change.Quota != nil {
		quota = *change.Quota
	}
	args = append(args, quota.MaxOpenTasks, quota.MaxBytes, string(t.PeerKind))
	if d != nil {
		args = append(args, d.TraceParent)
	}
	if r := change.Wake; r != nil {
		args = append(args, switchboard.NewID(), r.AgentID, r.PeerID, r.ContextID, string(r.Kind), string(r.TaskID), r.From,
			storedPreview(r), nanos(now), r.TraceParent, boolInt(r.Kind == switchboard.WakePairingRequest))
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
