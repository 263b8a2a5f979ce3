package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/a2ajson"
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
	return db.dialect.rowLocks && !onlyAck(change) && !pushes && change.MessageID == "" && change.PushConfig == nil &&
		len(change.NewDeliveries) == 0 && len(change.CloseDeliveries) == 0 && change.Wake == nil &&
		len(change.Events) <= maxEventRows
}

// changeInOneStatement writes change, which changesInOneStatement allows,
// and t as fn left it, as ModifyTask would in several statements: the
// acknowledgement first (an offer whose acknowledgement does not count is
// failed with the others when the task finishes), then the events after
// the task's sequence number, then the task row. It sets change.Ack.First
// and returns the events.
func (db *DB) changeInOneStatement(ctx context.Context, tx *sql.Tx, t *switchboard.Task, change *switchboard.TaskChange) ([]*switchboard.TaskEvent, error) {
	data := make([][]byte, len(change.Events))
	for i, e := range change.Events {
		var err error
		if data[i], err = a2ajson.AppendStreamResponse(nil, e); err != nil {
			return nil, fmt.Errorf("encode event of task %s: %w", t.ID(), err)
		}
	}
	now := db.Now().UTC()
	var (
		w      = &where{}
		with   []string
		events = make([]*switchboard.TaskEvent, 0, len(change.Events))
		task   = w.arg(string(t.ID()))
		acked  = "0"
	)
	if a := change.Ack; a != nil {
		id := w.arg(a.DeliveryID)
		with = append(with, `acked AS (UPDATE deliveries SET state = 'acked', holder = ''
			WHERE id = `+id+` AND last_holder = `+w.arg(a.Holder)+` AND last_holder <> '' AND state IN ('offered', 'queued')
			RETURNING id)`)
		acked = "(SELECT COUNT(*) FROM acked)"
		if t.State().Terminal() {
			with = append(with, `failed AS (UPDATE deliveries SET state = 'failed', last_error = `+w.arg(taskFinished)+`
				WHERE task_id = `+task+` AND kind <> 'cancel' AND state IN ('queued', 'offered')
				AND (id <> `+id+` OR NOT EXISTS (SELECT 1 FROM acked)))`)
		}
	} else if t.State().Terminal() {
		with = append(with, `failed AS (UPDATE deliveries SET state = 'failed', last_error = `+w.arg(taskFinished)+`
			WHERE task_id = `+task+` AND kind <> 'cancel' AND state IN ('queued', 'offered'))`)
	}
	if len(change.Events) > 0 {
		at := w.arg(nanos(now))
		rows := make([]string, len(change.Events))
		for i, e := range change.Events {
			t.Seq++
			rows[i] = "(" + task + ", " + w.arg(t.Seq) + ", " + at + ", " + w.arg(string(data[i])) + ")"
			events = append(events, &switchboard.TaskEvent{TaskID: t.ID(), Seq: t.Seq, Event: e, CreatedAt: now})
		}
		with = append(with, `events AS (INSERT INTO task_events (task_id, seq, created_at, data) VALUES `+strings.Join(rows, ", ")+`)`)
	}
	row, err := encodeTask(t, change.MaxBytes)
	if err != nil {
		return nil, err
	}
	query := `UPDATE tasks SET state = ` + w.arg(string(t.State())) + `, seq = ` + w.arg(t.Seq) +
		`, status_at = ` + w.arg(nanos(switchboard.StatusAt(t))) + `, updated_at = ` + w.arg(nanos(t.UpdatedAt)) +
		`, data = ` + w.arg(string(row)) + ` WHERE id = ` + task + ` RETURNING ` + acked
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
