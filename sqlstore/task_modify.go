package sqlstore

import (
	"context"
	"database/sql"
	"strings"

	"github.com/switchboard-dev/switchboard"
)

// An agent's answer changes its task with a few events and the
// acknowledgement of its offer, and nothing else. On PostgreSQL, where each
// statement is a round trip, ModifyTask writes such a change, after reading
// the task, in one statement (changeInOneStatement): the acknowledgement,
// the failing of a finished task's other deliveries, and the events in
// data-modifying WITH clauses, around the update of the task row.

// changesInOneStatement reports whether ModifyTask writes change in one
// statement; pushes says whether the task has push configs.
func (db *DB) changesInOneStatement(change *switchboard.TaskChange, pushes bool) bool {
	return db.dialect.rowLocks && !onlyAck(change) && !pushes && change.MessageID == "" && change.PushConfig == nil && change.Quota == nil &&
		len(change.NewDeliveries) == 0 && len(change.CloseDeliveries) == 0 && change.Wake == nil && change.FrontMap == nil &&
		len(change.Events) <= maxEventRows
}

// changeInOneStatement writes change, which changesInOneStatement allows,
// and t as fn left it, as ModifyTask would in several statements: the
// acknowledgement first (an offer whose acknowledgement does not count is
// failed with the others when the task finishes), then the events after
// the task's sequence number, then the task row, with the change of what
// the task counts toward its peer's usage from was. It sets
// change.Ack.First and returns the events.
func (db *DB) changeInOneStatement(ctx context.Context, tx *sql.Tx, t *switchboard.Task, change *switchboard.TaskChange, was usage) ([]*switchboard.TaskEvent, error) {
	data, err := encodeEvents(t, change.Events)
	if err != nil {
		return nil, err
	}
	events := db.numberEvents(t, change.Events)
	row, err := encodeTask(t, change.MaxBytes)
	if err != nil {
		return nil, err
	}
	// The statement is updateTaskSQL ($1–$6, the task id $6) with WITH
	// clauses before it, whose parameters follow.
	w := &where{args: updateTaskArgs(t, row)}
	task := "$6"
	var with []string
	acked := "0"
	if a := change.Ack; a != nil {
		id := w.arg(a.DeliveryID)
		with = append(with, `acked AS (`+ackDeliverySQL(id, w.arg(a.Holder))+` RETURNING id)`)
		acked = "(SELECT COUNT(*) FROM acked)"
		if t.State().Terminal() {
			with = append(with, `failed AS (`+failUnneededSQL(task, w.arg(taskFinished))+`
				AND (id <> `+id+` OR NOT EXISTS (SELECT 1 FROM acked)))`)
		}
	} else if t.State().Terminal() {
		with = append(with, `failed AS (`+failUnneededSQL(task, w.arg(taskFinished))+`)`)
	}
	if d := taskUsage(t.State(), len(row)).minus(was); d != (usage{}) {
		with = append(with, `usage AS (`+addUsageSQL(w.arg(t.AgentID), w.arg(t.PeerID), w.arg(d.open), w.arg(d.bytes))+`)`)
	}
	if len(events) > 0 {
		at := w.arg(nanos(events[0].CreatedAt))
		rows := make([]string, len(events))
		for i, ev := range events {
			rows[i] = "(" + task + ", " + w.arg(ev.Seq) + ", " + at + ", " + w.arg(string(data[i])) + ")"
		}
		with = append(with, `events AS (INSERT INTO task_events (task_id, seq, created_at, data) VALUES `+strings.Join(rows, ", ")+`)`)
	}
	query := updateTaskSQL + ` RETURNING ` + acked
	if len(with) > 0 {
		query = "WITH " + strings.Join(with, ",\n") + "\n" + query
	}
	var n int
	if err := tx.QueryRowContext(ctx, query, w.args...).Scan(&n); err != nil {
		return nil, err
	}
	if change.Ack != nil {
		change.Ack.First = n > 0
	}
	return events, nil
}
