package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/a2ajson"
)

const taskColumns = `id, agent_id, peer_id, peer_label, peer_kind, protocol, seq, offered, created_at, updated_at, data`

// CreateTask implements switchboard.TaskStore.
func (db *DB) CreateTask(ctx context.Context, t *switchboard.Task, change *switchboard.TaskChange) (*switchboard.TaskEvent, error) {
	if change == nil {
		change = &switchboard.TaskChange{}
	}
	snapshot := t.A2A // the first event is the task as created
	// The first event is the task's JSON as stored, wrapped: encoded once.
	data, err := encodeTask(t, change.MaxBytes)
	if err != nil {
		return nil, err
	}
	first := data
	if change.Created != nil { // t comes with its first answer applied
		snapshot = *change.Created
		if first, err = a2ajson.AppendTask(nil, &snapshot); err != nil {
			return nil, fmt.Errorf("encode task %s: %w", t.ID(), err)
		}
	}
	var ev *switchboard.TaskEvent
	deliveries := make([]switchboard.Delivery, len(change.NewDeliveries)) // as given: a refused try may queue an offered one
	for i, d := range change.NewDeliveries {
		deliveries[i] = *d
	}
	err = db.withQuota(ctx, func() error {
		for i, d := range change.NewDeliveries {
			*d = deliveries[i]
		}
		var err error
		if db.createsInOneStatement(t, change) {
			ev, err = db.createInOneStatement(ctx, t, change, &snapshot, data)
		} else {
			ev, err = db.createInTx(ctx, t, change, &snapshot, data, first)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	db.tasks.put(t)
	db.taskStateChanged("", t.State())
	return ev, nil
}

// createInTx is CreateTask in a transaction of a statement or more each;
// data is t's JSON, first that of snapshot, its first event.
func (db *DB) createInTx(ctx context.Context, t *switchboard.Task, change *switchboard.TaskChange, snapshot *a2a.Task, data, first []byte) (*switchboard.TaskEvent, error) {
	var ev *switchboard.TaskEvent
	offers := slices.ContainsFunc(change.NewDeliveries, func(d *switchboard.Delivery) bool { return d.State == switchboard.DeliveryOffered })
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		// A task for an agent deleted a moment ago would be an orphan: the
		// agent is read (and on PostgreSQL locked against deletion) here
		// when a delivery comes offered, which needs to know whether it
		// accepts tasks, and otherwise by the insert of the task.
		var err error
		t.Offered = false
		if change.OfferSent {
			t.Offered = true // sent already: its offered delivery, if any, stays so
		} else if offers {
			// An offered delivery stays so only when the agent accepts
			// tasks and has no deliveries queued, which must be offered
			// first; otherwise it is written queued.
			var accepts, queued bool
			err = tx.QueryRowContext(ctx, `SELECT accepts_tasks,
				EXISTS (SELECT 1 FROM deliveries WHERE agent_id = $1 AND state = 'queued')
				FROM agents WHERE id = $1`+db.forShare("agents"), t.AgentID).Scan(&accepts, &queued)
			if err == sql.ErrNoRows {
				return errAgentNotFound
			} else if err != nil {
				return err
			}
			for _, d := range change.NewDeliveries {
				if d.State != switchboard.DeliveryOffered {
					continue
				}
				if t.Offered = accepts && !queued; !t.Offered {
					queueInstead(d)
				}
			}
		}
		t.Seq = 0
		if ev, err = db.appendEvent(ctx, tx, t, snapshot, wrapEvent("task", first)); err != nil {
			return err
		}
		if _, err := db.writeChange(ctx, tx, t, change, false); err != nil {
			return err
		}
		if err := db.insertTask(ctx, tx, t, data, !offers || change.OfferSent); err != nil { // writeChange changes only t.Seq
			return err
		}
		d := taskUsage(t.State(), len(data))
		peak := d
		if change.Created != nil {
			peak = taskUsage(snapshot.Status.State, len(first))
		}
		return db.chargePeak(ctx, tx, t.AgentID, t.PeerID, d, peak, change.Quota)
	})
	return ev, err
}

// taskStateChanged tells OnTaskState of a committed change of state.
func (db *DB) taskStateChanged(from, to a2a.TaskState) {
	if db.OnTaskState != nil && from != to {
		db.OnTaskState(from, to)
	}
}

// encodeTask returns the task's A2A JSON as stored, or a
// *switchboard.TaskTooLargeError when it is larger than max (0: no bound).
func encodeTask(t *switchboard.Task, max int) ([]byte, error) {
	data, err := a2ajson.AppendTask(nil, &t.A2A)
	if err != nil {
		return nil, fmt.Errorf("encode task %s: %w", t.ID(), err)
	}
	if max > 0 && len(data) > max {
		return nil, &switchboard.TaskTooLargeError{Bytes: len(data)}
	}
	return data, nil
}

// wrapEvent returns {"key":event}: the StreamResponse of an event already
// encoded.
func wrapEvent(key string, event []byte) []byte {
	out := make([]byte, 0, len(key)+len(event)+5)
	out = append(out, `{"`...)
	out = append(out, key...)
	out = append(out, `":`...)
	out = append(out, event...)
	return append(out, '}')
}

// taskRowColumns are the columns a task row is inserted with, in the order
// of taskRowArgs, then peer_kind (which comes last in the statements'
// parameters).
const taskRowColumns = `id, agent_id, peer_id, peer_label, context_id, state, protocol, seq,
	status_at, created_at, updated_at, offered, data, peer_kind`

// taskRowArgs returns the values of taskRowColumns for t, data its JSON.
func taskRowArgs(t *switchboard.Task, data []byte, offered bool) []any {
	return []any{string(t.ID()), t.AgentID, t.PeerID, t.PeerLabel, t.A2A.ContextID, string(t.State()), string(t.Protocol), t.Seq,
		nanos(switchboard.StatusAt(t)), nanos(t.CreatedAt), nanos(t.UpdatedAt), boolInt(offered), string(data)}
}

// errAgentNotFound is CreateTask's error for a task of an agent that does
// not exist.
var errAgentNotFound = switchboard.Errorf(switchboard.ENOTFOUND, "agent not found")

// insertTask writes the task's row; data is its A2A JSON. With checkAgent,
// the row is written only if the task's agent exists (on PostgreSQL, the
// agent is locked against deletion until the transaction ends), and
// errAgentNotFound returned otherwise: one statement where a look and an
// insert took two round trips.
func (db *DB) insertTask(ctx context.Context, tx *sql.Tx, t *switchboard.Task, data []byte, checkAgent bool) error {
	query := `INSERT INTO tasks (` + taskRowColumns + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`
	if checkAgent {
		query = `INSERT INTO tasks (` + taskRowColumns + `) SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14
		WHERE EXISTS (SELECT 1 FROM agents WHERE id = $2` + db.forShare("") + `)`
	}
	res, err := tx.ExecContext(ctx, query, append(taskRowArgs(t, data, t.Offered), string(t.PeerKind))...)
	if db.dialect.uniqueViolation(err) {
		return switchboard.Errorf(switchboard.ECONFLICT, "task %s already exists", t.ID())
	} else if err != nil {
		return err
	}
	if checkAgent {
		if err := changedRow(res, errAgentNotFound); err != nil {
			return err
		}
	}
	return nil
}

// recordMessage remembers that the task's peer sent messageID to its agent.
func (db *DB) recordMessage(ctx context.Context, tx *sql.Tx, t *switchboard.Task, messageID string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO task_messages (agent_id, peer_id, message_id, task_id) VALUES ($1, $2, $3, $4)`,
		t.AgentID, t.PeerID, messageID, string(t.ID()))
	if db.dialect.uniqueViolation(err) {
		return switchboard.ErrDuplicateMessage
	}
	return err
}

// appendEvents writes events after the task's current sequence number and
// advances t.Seq past them.
func (db *DB) appendEvents(ctx context.Context, tx *sql.Tx, t *switchboard.Task, events []a2a.Event) ([]*switchboard.TaskEvent, error) {
	data, err := encodeEvents(t, events)
	if err != nil {
		return nil, err
	}
	return db.insertEvents(ctx, tx, t, events, data)
}

// encodeEvents returns the StreamResponse JSON of each of the task's events.
func encodeEvents(t *switchboard.Task, events []a2a.Event) ([][]byte, error) {
	data := make([][]byte, len(events))
	for i, e := range events {
		var err error
		if data[i], err = a2ajson.AppendStreamResponse(nil, e); err != nil {
			return nil, fmt.Errorf("encode event of task %s: %w", t.ID(), err)
		}
	}
	return data, nil
}

// numberEvents advances t.Seq past events and returns them as the task's
// next events, written now.
func (db *DB) numberEvents(t *switchboard.Task, events []a2a.Event) []*switchboard.TaskEvent {
	now := db.Now().UTC()
	out := make([]*switchboard.TaskEvent, len(events))
	for i, e := range events {
		t.Seq++
		out[i] = &switchboard.TaskEvent{TaskID: t.ID(), Seq: t.Seq, Event: e, CreatedAt: now}
	}
	return out
}

// appendEvent writes one event, data its StreamResponse JSON, after the
// task's current sequence number and advances t.Seq past it.
func (db *DB) appendEvent(ctx context.Context, tx *sql.Tx, t *switchboard.Task, e a2a.Event, data []byte) (*switchboard.TaskEvent, error) {
	out, err := db.insertEvents(ctx, tx, t, []a2a.Event{e}, [][]byte{data})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// maxEventRows is how many events one statement inserts. A change usually
// holds one to three (an agent's answer: its artifact and its status), and
// on PostgreSQL each statement is a round trip.
const maxEventRows = 8

// insertEventsSQL[n] inserts n events of one task, all with the same
// created_at: $1 is the task id, $2 the time, then each row's seq and data.
var insertEventsSQL = func() (out [maxEventRows + 1]string) {
	for n := 1; n <= maxEventRows; n++ {
		var b strings.Builder
		b.WriteString(`INSERT INTO task_events (task_id, seq, created_at, data) VALUES `)
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "($1, $%d, $2, $%d)", 3+2*i, 4+2*i)
		}
		out[n] = b.String()
	}
	return out
}()

// insertEvents writes events, data their StreamResponse JSON, after the
// task's current sequence number, maxEventRows to a statement, and
// advances t.Seq past them.
func (db *DB) insertEvents(ctx context.Context, tx *sql.Tx, t *switchboard.Task, events []a2a.Event, data [][]byte) ([]*switchboard.TaskEvent, error) {
	out := db.numberEvents(t, events)
	for start := 0; start < len(out); start += maxEventRows {
		rows := out[start:min(start+maxEventRows, len(out))]
		args := make([]any, 0, 2+2*len(rows))
		args = append(args, string(t.ID()), nanos(rows[0].CreatedAt))
		for i, ev := range rows {
			args = append(args, ev.Seq, string(data[start+i]))
		}
		if _, err := tx.ExecContext(ctx, insertEventsSQL[len(rows)], args...); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// FindTaskByID implements switchboard.TaskStore.
func (db *DB) FindTaskByID(ctx context.Context, id a2a.TaskID) (*switchboard.Task, error) {
	return db.findTask(ctx, db.read, string(id), "")
}

func (db *DB) findTask(ctx context.Context, q queryer, id, lock string) (*switchboard.Task, error) {
	t, err := db.scanTaskKept(q.QueryRowContext(ctx, `SELECT `+taskColumns+` FROM tasks WHERE id = $1`+lock, id))
	if err == sql.ErrNoRows {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "task not found")
	}
	return t, db.formatError(err)
}

// FindTaskByMessageID implements switchboard.TaskStore.
func (db *DB) FindTaskByMessageID(ctx context.Context, agentID, peerID, messageID string) (*switchboard.Task, error) {
	t, err := scanTask(db.read.QueryRowContext(ctx, `SELECT `+prefixed("t.", taskColumns)+`
		FROM task_messages m JOIN tasks t ON t.id = m.task_id
		WHERE m.agent_id = $1 AND m.peer_id = $2 AND m.message_id = $3`, agentID, peerID, messageID))
	if err == sql.ErrNoRows {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "task not found")
	}
	return t, db.formatError(err)
}

// FindTasks implements switchboard.TaskStore.
func (db *DB) FindTasks(ctx context.Context, f switchboard.TaskFilter) ([]*switchboard.Task, int, error) {
	if f.OldestFirst && len(f.States) > 1 && f.Limit > 0 && f.NoTotal {
		return db.findTasksByState(ctx, f)
	}
	w := &where{}
	taskConditions(w, f)
	if len(f.States) > 0 {
		w.add("state IN (" + placeholders(w, f.States) + ")")
	}
	var total int
	if !f.NoTotal {
		if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM tasks`+w.String(), w.args...).Scan(&total); err != nil {
			return nil, 0, db.formatError(err)
		}
	}

	order := ` ORDER BY status_at DESC, id DESC`
	if f.OldestFirst {
		order = ` ORDER BY created_at, id`
	}
	afterCondition(w, f)
	limit := ""
	if f.Limit > 0 {
		limit = fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	out, err := db.readTasks(ctx, `SELECT `+taskColumns+` FROM tasks`+w.String()+order+limit, w.args...)
	return out, total, err
}

// taskConditions adds the conditions of f but its states and its cursor.
func taskConditions(w *where, f switchboard.TaskFilter) {
	if f.AgentID != nil {
		w.add("agent_id = ?", *f.AgentID)
	}
	if f.PeerLabel != nil {
		w.add("peer_label = ?", *f.PeerLabel)
	}
	if f.PeerID != nil {
		w.add("peer_id = ?", *f.PeerID)
	}
	if f.PeerKind != nil && *f.PeerKind != switchboard.PeerOutside {
		// The literal condition lets the planner use tasks_peer_global.
		w.add("peer_kind <> '' AND peer_kind = ?", string(*f.PeerKind))
	}
	if f.ContextID != nil {
		w.add("context_id = ?", *f.ContextID)
	}
	if f.StatusAfter != nil {
		w.add("status_at > ?", nanos(*f.StatusAfter))
	}
}

// afterCondition adds the condition of f's cursor: the tasks after it in
// f's order.
func afterCondition(w *where, f switchboard.TaskFilter) {
	switch {
	case f.After != nil && f.OldestFirst:
		// The bound on created_at alone lets an index on it start there.
		at := nanos(f.After.CreatedAt)
		w.add("created_at >= ? AND (created_at > ? OR id > ?)", at, at, string(f.After.ID))
	case f.After != nil:
		at := nanos(f.After.StatusAt)
		w.add("(status_at < ? OR (status_at = ? AND id < ?))", at, at, string(f.After.ID))
	}
}

// readTasks runs a query of taskColumns and reads its tasks.
func (db *DB) readTasks(ctx context.Context, query string, args ...any) ([]*switchboard.Task, error) {
	rows, err := db.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, db.formatError(err)
	}
	defer rows.Close()
	var out []*switchboard.Task
	for rows.Next() {
		t, err := db.scanTaskKept(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// findTasksByState is FindTasks of several states, oldest first, with a
// limit (an inbox's page), in one query: a branch per state reads that
// state's first tasks in the order of the index on (agent_id, state,
// created_at), stopping at the limit, and the branches are merged. One
// condition on all the states would read every task of those states and
// sort them before taking the first.
func (db *DB) findTasksByState(ctx context.Context, f switchboard.TaskFilter) ([]*switchboard.Task, int, error) {
	w := &where{}
	var q strings.Builder
	for i, st := range f.States {
		from := len(w.conds)
		taskConditions(w, f)
		afterCondition(w, f)
		w.add("state = ?", string(st))
		if i > 0 {
			q.WriteString(" UNION ALL ")
		}
		fmt.Fprintf(&q, "SELECT * FROM (SELECT %s FROM tasks WHERE %s ORDER BY created_at, id LIMIT %d) AS s%d",
			taskColumns, strings.Join(w.conds[from:], " AND "), f.Limit, i)
	}
	fmt.Fprintf(&q, " ORDER BY created_at, id LIMIT %d", f.Limit)
	out, err := db.readTasks(ctx, q.String(), w.args...)
	return out, 0, err
}

// ModifyTask implements switchboard.TaskStore.
func (db *DB) ModifyTask(ctx context.Context, id a2a.TaskID, fn func(*switchboard.Task) (*switchboard.TaskChange, error)) (*switchboard.Task, []*switchboard.TaskEvent, error) {
	var out *switchboard.Task
	var events []*switchboard.TaskEvent
	err := db.withQuota(ctx, func() error {
		var err error
		out, events, err = db.modifyTask(ctx, id, fn)
		return err
	})
	return out, events, err
}

// modifyTask is ModifyTask, once: a change the kept counts of its peer's
// usage refuse is an *overQuota.
func (db *DB) modifyTask(ctx context.Context, id a2a.TaskID, fn func(*switchboard.Task) (*switchboard.TaskChange, error)) (*switchboard.Task, []*switchboard.TaskEvent, error) {
	var out *switchboard.Task
	var events []*switchboard.TaskEvent
	var from, to a2a.TaskState
	var written bool // the task row was written, as out holds it
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		// Whether the task has push configs is read with it: most have none,
		// and a change then needs no look for them (one statement fewer).
		var pushes bool
		t, size, _, err := scanTaskCached(tx.QueryRowContext(ctx, `SELECT `+taskColumns+`,
			EXISTS (SELECT 1 FROM push_configs p WHERE p.task_id = tasks.id) FROM tasks WHERE id = $1`+db.forUpdate(""), string(id)),
			db.tasks, &pushes)
		if err == sql.ErrNoRows {
			return switchboard.Errorf(switchboard.ENOTFOUND, "task not found")
		} else if err != nil {
			return db.formatError(err)
		}
		written = false
		from, to = t.State(), t.State()
		was := taskUsage(from, size) // what the task counts toward its peer's usage, as read
		change, err := fn(t)
		if err != nil {
			return err
		}
		out = t
		if change == nil {
			return nil
		}
		if db.changesInOneStatement(change, pushes) {
			if events, err = db.changeInOneStatement(ctx, tx, t, change, was); err != nil {
				return err
			}
			to, written = t.State(), true
			return nil
		}
		if change.Ack != nil {
			if change.Ack.First, err = db.ackDelivery(ctx, tx, change.Ack.DeliveryID, change.Ack.Holder); err != nil {
				return err
			}
			if onlyAck(change) {
				return nil
			}
		}
		if events, err = db.writeChange(ctx, tx, t, change, pushes); err != nil {
			return err
		}
		if t.State().Terminal() {
			// A finished task needs nothing more delivered.
			if _, err := tx.ExecContext(ctx, failUnneededSQL("$1", "$2"), string(t.ID()), taskFinished); err != nil {
				return err
			}
		}
		to = t.State()
		written = true
		return db.updateTask(ctx, tx, t, change, was)
	})
	if err != nil {
		return nil, nil, err
	}
	if written {
		db.tasks.put(out)
	}
	db.taskStateChanged(from, to)
	return out, events, nil
}

// onlyAck reports whether a change holds nothing but an acknowledgement.
func onlyAck(c *switchboard.TaskChange) bool {
	return len(c.Events) == 0 && c.MessageID == "" && c.PushConfig == nil &&
		len(c.NewDeliveries) == 0 && len(c.CloseDeliveries) == 0 && c.Wake == nil
}

// writeChange writes what a change holds besides the task row, appends its
// events (advancing t.Seq), and queues the push notifications they call
// for; pushes says whether the task had push configs when it was read.
func (db *DB) writeChange(ctx context.Context, tx *sql.Tx, t *switchboard.Task, change *switchboard.TaskChange, pushes bool) ([]*switchboard.TaskEvent, error) {
	if change.MessageID != "" {
		if err := db.recordMessage(ctx, tx, t, change.MessageID); err != nil {
			return nil, err
		}
	}
	if change.PushConfig != nil {
		if err := db.savePushConfig(ctx, tx, change.PushConfig); err != nil {
			return nil, err
		}
	}
	if change.FrontMap != nil {
		if err := db.mapFrontTask(ctx, tx, *change.FrontMap); err != nil {
			return nil, err
		}
	}
	events, err := db.appendEvents(ctx, tx, t, change.Events)
	if err != nil {
		return nil, err
	}
	// The pushes of the change carry the task as fn left it. A task that
	// had no push configs when it was read, changed without adding one,
	// has none to push to.
	if pushes || change.PushConfig != nil {
		n, err := db.queuePushes(ctx, tx, t, change.Events, change.TraceParent)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			events[len(events)-1].Pushes = n
		}
	}
	for _, d := range change.NewDeliveries {
		if err := db.insertDelivery(ctx, tx, d); err != nil {
			return nil, err
		}
	}
	for _, id := range change.CloseDeliveries {
		if _, err := tx.ExecContext(ctx, `UPDATE deliveries SET state = 'failed' WHERE id = $1 AND state <> 'failed'`, id); err != nil {
			return nil, err
		}
	}
	if change.Wake != nil {
		if _, err := db.enqueueWake(ctx, tx, change.Wake); err != nil {
			return nil, err
		}
	}
	return events, nil
}

// updateTask writes the task row as t holds it, and the change from was of
// what it counts toward its peer's usage, checked against change.Quota
// (chargeUsage); on PostgreSQL in one statement.
func (db *DB) updateTask(ctx context.Context, tx *sql.Tx, t *switchboard.Task, change *switchboard.TaskChange, was usage) error {
	data, err := encodeTask(t, change.MaxBytes)
	if err != nil {
		return err
	}
	args := updateTaskArgs(t, data)
	d := taskUsage(t.State(), len(data)).minus(was)
	if d == (usage{}) || !db.dialect.rowLocks {
		if err := db.chargeUsage(ctx, tx, t.AgentID, t.PeerID, d, change.Quota); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, updateTaskSQL, args...)
		return err
	}
	// The peer's row is changed in a WITH clause (whose parameters follow
	// the update's), and read back to check the quota.
	args = append(args, t.AgentID, t.PeerID, d.open, d.bytes)
	query := `WITH usage AS (` + addUsageSQL("$7", "$8", "$9", "$10") + ` RETURNING open_tasks, bytes),
		task AS (` + updateTaskSQL + `)
		SELECT open_tasks, bytes FROM usage`
	var open, bytes int64
	if err := tx.QueryRowContext(ctx, query, args...).Scan(&open, &bytes); err != nil {
		return err
	}
	if d.checked(change.Quota) && d.passes(change.Quota, open, bytes) {
		return &overQuota{agentID: t.AgentID, peerID: t.PeerID, quota: *change.Quota, d: d}
	}
	return nil
}

// updateTaskSQL writes a task row as changed; its arguments are
// updateTaskArgs, the task id the last ($6).
const updateTaskSQL = `UPDATE tasks SET state = $1, seq = $2, status_at = $3, updated_at = $4, data = $5 WHERE id = $6`

// updateTaskArgs returns the arguments of updateTaskSQL for t, data its JSON.
func updateTaskArgs(t *switchboard.Task, data []byte) []any {
	return []any{string(t.State()), t.Seq, nanos(switchboard.StatusAt(t)), nanos(t.UpdatedAt), string(data), string(t.ID())}
}

// FindTaskEvents implements switchboard.TaskStore.
func (db *DB) FindTaskEvents(ctx context.Context, id a2a.TaskID, afterSeq int64, limit int) ([]*switchboard.TaskEvent, error) {
	q := `SELECT seq, created_at, data FROM task_events WHERE task_id = $1 AND seq > $2 ORDER BY seq`
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	rows, err := db.read.QueryContext(ctx, q, string(id), afterSeq)
	if err != nil {
		return nil, db.formatError(err)
	}
	defer rows.Close()
	var out []*switchboard.TaskEvent
	for rows.Next() {
		ev := &switchboard.TaskEvent{TaskID: id}
		var created int64
		var data string
		if err := rows.Scan(&ev.Seq, &created, &data); err != nil {
			return nil, err
		}
		var sr a2a.StreamResponse
		if err := a2ajson.UnmarshalStreamResponse([]byte(data), &sr); err != nil {
			return nil, fmt.Errorf("decode event %d of task %s: %w", ev.Seq, id, err)
		}
		ev.Event = sr.Event
		ev.CreatedAt = fromNanos(created)
		out = append(out, ev)
	}
	return out, rows.Err()
}

func scanTask(s scanner) (*switchboard.Task, error) {
	t, _, _, err := scanTaskCached(s, nil)
	return t, err
}

// scanTaskKept is scanTask for reads: it takes the task's A2A part from
// the cache when the cache holds the task as stored, and keeps what it
// decoded otherwise, so that the next read of an unchanged task (an
// inbox listed again and again) decodes nothing. Only SQLite has a
// cache (see taskCache): its one writer is this process.
func (db *DB) scanTaskKept(s scanner) (*switchboard.Task, error) {
	t, _, hit, err := scanTaskCached(s, db.tasks)
	if err == nil && !hit {
		db.tasks.put(t)
	}
	return t, err
}

// scanTaskCached is scanTask that takes the task's A2A part from cache, if
// it holds the task as stored, instead of decoding it; the row's columns
// after the task's are scanned into extra. It also returns the length of
// the task's JSON as stored, and whether the cache answered.
func scanTaskCached(s scanner, cache *taskCache, extra ...any) (*switchboard.Task, int, bool, error) {
	var t switchboard.Task
	var id, kind, proto, data string
	var created, updated int64
	var offered int
	dest := append([]any{&id, &t.AgentID, &t.PeerID, &t.PeerLabel, &kind, &proto, &t.Seq, &offered, &created, &updated, &data}, extra...)
	if err := s.Scan(dest...); err != nil {
		return nil, 0, false, err
	}
	a, hit := cache.get(a2a.TaskID(id), t.Seq, updated)
	if hit {
		t.A2A = a
	} else if err := a2ajson.UnmarshalTask([]byte(data), &t.A2A); err != nil {
		return nil, 0, false, fmt.Errorf("decode task %s: %w", id, err)
	}
	t.Protocol = switchboard.ProtocolVersion(proto)
	t.PeerKind = switchboard.PeerKind(kind)
	t.Offered = offered != 0
	t.CreatedAt, t.UpdatedAt = fromNanos(created), fromNanos(updated)
	return &t, len(data), hit, nil
}

// prefixed qualifies each column of a comma-separated list with p.
func prefixed(p, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}
