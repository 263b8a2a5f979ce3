package sqlstore

import (
	"context"
	"errors"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/switchboard-dev/switchboard"
)

// A new task is usually a peer's first message and nothing else: its
// message id, no push configuration, no wake, at most a delivery, queued.
// On PostgreSQL, where each statement is a round trip, CreateTask writes
// such a task in one statement (createInOneStatement) rather than a
// transaction of six round trips; every part of it is inserted only if the
// agent exists, which it locks as the transaction would.

// createsInOneStatement reports whether CreateTask writes the task and
// change in one statement.
func (db *DB) createsInOneStatement(change *switchboard.TaskChange) bool {
	return db.dialect.rowLocks && change.MessageID != "" && change.PushConfig == nil && change.Wake == nil &&
		len(change.Events) == 0 && len(change.CloseDeliveries) == 0 && change.Ack == nil &&
		(len(change.NewDeliveries) == 0 ||
			len(change.NewDeliveries) == 1 && change.NewDeliveries[0].State == switchboard.DeliveryQueued)
}

// createTaskStatement inserts a task (parameters $1–$13, as insertTask),
// its first event ($14 created_at, $15 data) and its message id ($16), all
// only if the agent exists; createTaskWithDeliveryStatement also its
// delivery ($17 id, $18 kind, $19 message id, $20 state, $21 deadline, $22
// next attempt, $23 created_at, $24 attempts, $25 holder, $26 last error,
// $27 offered_at), as insertDelivery writes it.
const (
	createTaskParts = `WITH agent AS (SELECT 1 FROM agents WHERE id = $2 FOR SHARE),
		event AS (INSERT INTO task_events (task_id, seq, created_at, data) SELECT $1, $8, $14, $15 FROM agent),
		message AS (INSERT INTO task_messages (agent_id, peer_id, message_id, task_id) SELECT $2, $3, $16, $1 FROM agent)`
	createTaskRow = `
		INSERT INTO tasks (id, agent_id, peer_id, peer_label, context_id, state, protocol, seq,
			status_at, created_at, updated_at, offered, data)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13 FROM agent`
	createTaskStatement             = createTaskParts + createTaskRow
	createTaskWithDeliveryStatement = createTaskParts + `,
		delivery AS (INSERT INTO deliveries (id, task_id, agent_id, kind, message_id, state, attempts, holder,
			last_holder, deadline, next_attempt_at, last_error, created_at, offered_at)
			SELECT $17, $1, $2, $18, $19, $20, $24, $25, $25, $21, $22, $26, $23, $27 FROM agent)` + createTaskRow
)

// createInOneStatement is CreateTask for a change that createsInOneStatement
// allows. data is the task's JSON; the first event is snapshot.
func (db *DB) createInOneStatement(ctx context.Context, t *switchboard.Task, change *switchboard.TaskChange, snapshot *a2a.Task, data []byte) (*switchboard.TaskEvent, error) {
	now := db.Now().UTC()
	t.Seq, t.Offered = 1, false
	args := []any{
		string(t.ID()), t.AgentID, t.PeerID, t.PeerLabel, t.A2A.ContextID, string(t.State()), string(t.Protocol), t.Seq,
		nanos(switchboard.StatusAt(t)), nanos(t.CreatedAt), nanos(t.UpdatedAt), boolInt(t.Offered), string(data),
		nanos(now), string(wrapEvent("task", data)), change.MessageID,
	}
	query := createTaskStatement
	if len(change.NewDeliveries) == 1 {
		d := change.NewDeliveries[0]
		args = append(args, d.ID, string(d.Kind), d.MessageID, string(d.State), nanos(d.Deadline), nanos(d.NextAttemptAt),
			nanos(d.CreatedAt), d.Attempts, d.Holder, d.LastError, nullableNanos(d.OfferedAt))
		query = createTaskWithDeliveryStatement
	}
	res, err := db.write.ExecContext(ctx, query, args...)
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == "task_messages_pkey":
		return nil, switchboard.ErrDuplicateMessage
	case errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == "tasks_pkey":
		return nil, switchboard.Errorf(switchboard.ECONFLICT, "task %s already exists", t.ID())
	case err != nil:
		return nil, db.formatError(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return nil, err
	} else if n == 0 {
		return nil, errAgentNotFound
	}
	return &switchboard.TaskEvent{TaskID: t.ID(), Seq: t.Seq, Event: snapshot, CreatedAt: now}, nil
}
