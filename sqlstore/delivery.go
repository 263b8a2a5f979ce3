package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// While a delivery is offered, next_attempt_at holds the end of the offer's
// lease: past it, the offer was not acknowledged in time and the delivery
// goes back to queued.

// deliveryColumnNames are the columns deliveries are read with
// (scanDeliveries); deliveryColumns names them in the table aliased d.
const deliveryColumnNames = `id, task_id, agent_id, kind, message_id, state, attempts, holder,
	deadline, next_attempt_at, last_error, created_at, offered_at, trace_parent`

var deliveryColumns = prefixed("d.", deliveryColumnNames)

// maxHolding bounds the task ids an agent may say it holds on connect; any
// beyond are treated as not held (they are offered again, which is safe).
const maxHolding = 1000

// deliveryRowColumns are the columns a delivery row is inserted with;
// last_holder starts as holder, and mode is the agent's (deliveries_dispatch).
const deliveryRowColumns = `id, task_id, agent_id, kind, message_id, state, attempts, holder,
	last_holder, deadline, next_attempt_at, last_error, created_at, offered_at, mode, trace_parent`

// insertDelivery writes d with its agent's mode, read under a lock on the
// agent (PostgreSQL): a change of the agent's mode, which moves its live
// deliveries to the new mode, waits for this transaction, or this one for
// it, so that no delivery keeps a mode its agent no longer has. With no
// agent the mode is empty (the task's insert then reports the agent
// missing).
func (db *DB) insertDelivery(ctx context.Context, tx *sql.Tx, d *switchboard.Delivery) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO deliveries (`+deliveryRowColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, $10, $11, $12, $13,
			COALESCE((SELECT mode FROM agents WHERE id = $3`+db.forShare("")+`), ''), $14)`,
		d.ID, string(d.TaskID), d.AgentID, string(d.Kind), d.MessageID, string(d.State), d.Attempts, d.Holder,
		nanos(d.Deadline), nanos(d.NextAttemptAt), d.LastError, nanos(d.CreatedAt), nullableNanos(d.OfferedAt), d.TraceParent)
	return err
}

// queueInstead makes d, which came offered with its new task, a plain
// queued delivery: the agent does not accept tasks, or has older work
// queued, which goes first.
func queueInstead(d *switchboard.Delivery) {
	d.State, d.Holder, d.Attempts, d.OfferedAt, d.NextAttemptAt = switchboard.DeliveryQueued, "", 0, nil, d.CreatedAt
}

// ClaimDeliveries implements switchboard.DeliveryStore.
// Whether the agent accepts tasks is read in the claim's transaction, not
// taken from the caller, whose copy of the agent may be older than the
// owner's last change.
func (db *DB) ClaimDeliveries(ctx context.Context, agentID, holder string, max int, lease time.Duration) ([]*switchboard.Delivery, error) {
	now := db.Now().UTC()
	w := &where{}
	w.add("d.agent_id = ?", agentID)
	w.add(acceptsTasks)
	claimable(w, now)
	query := `SELECT ` + deliveryColumns + ` FROM deliveries d JOIN tasks t ON t.id = d.task_id` + w.String() +
		fmt.Sprintf(` ORDER BY d.created_at, d.id LIMIT %d`, max) + db.forClaim("d, t")
	return db.claim(ctx, now, query, "created_at, id", w.args, holder, lease)
}

// AgentsWithDueWork implements switchboard.DeliveryStore. It looks up
// each agent's queued work by its key, so that its cost follows the agents
// asked about (an instance's connected agents), not the work queued for
// the whole deployment, offline agents' backlogs included.
func (db *DB) AgentsWithDueWork(ctx context.Context, agentIDs []string) ([]string, error) {
	var out []string
	for chunk := range slices.Chunk(agentIDs, listChunk) {
		w := &where{args: []any{nanos(db.Now())}}
		rows, err := db.read.QueryContext(ctx, `SELECT g.id FROM agents g WHERE g.id IN (`+placeholders(w, chunk)+`)
			AND EXISTS (SELECT 1 FROM deliveries d WHERE d.agent_id = g.id AND d.state = 'queued' AND d.next_attempt_at <= $1)`,
			w.args...)
		if err != nil {
			return nil, db.formatError(err)
		}
		due, err := scanStrings(rows)
		if err != nil {
			return nil, db.formatError(err)
		}
		out = append(out, due...)
	}
	return out, nil
}

// acceptsTasks is the condition that holds back new tasks of agents that do
// not accept tasks; follow-ups and cancels of tasks they took still go. It
// looks up each delivery's agent by its key: "agent_id IN (SELECT id FROM
// agents WHERE …)" read the whole agents table on every claim.
const acceptsTasks = "(d.kind <> 'task' OR EXISTS (SELECT 1 FROM agents a WHERE a.id = d.agent_id AND a.accepts_tasks = 1))"

// claimable adds the conditions of a delivery that may be offered now: queued
// and due, and, for a follow-up or cancel, its task offered before, so that
// an agent never hears of a task through its second message.
func claimable(w *where, now time.Time) {
	w.add("d.state = 'queued'")
	w.add("d.next_attempt_at <= ?", nanos(now))
	w.add("(d.kind = 'task' OR t.offered = 1)")
}

// ClaimDueDeliveries implements switchboard.DeliveryStore.
//
// The claimable deliveries are ranked per agent in due order, and an
// agent's deliveries are taken while their rank plus the agent's offers in
// flight stays within perAgent. The ranking is a window function, which
// PostgreSQL does not allow in a query that locks rows, so it picks the ids
// in a subquery and the outer query locks them, checking again under the
// lock that they are still queued and due (a concurrent claim may have
// taken them). The cap holds for each claim; two claims racing on two
// instances see each other's offers only once committed, so together they
// may pass it by a few (each skips the rows the other locked).
func (db *DB) ClaimDueDeliveries(ctx context.Context, mode switchboard.DeliveryMode, holder string, max, perAgent int, lease time.Duration) ([]*switchboard.Delivery, error) {
	now := db.Now().UTC()
	// The candidates are the due, queued deliveries of the mode, read in
	// an index of their own (deliveries_dispatch, which a connector's
	// deliveries never enter), each checked against its agent. An agent's
	// offers in flight are counted for its candidates only.
	if err := db.fillDeliveryModes(ctx); err != nil {
		return nil, err
	}
	w := &where{}
	w.add("d.mode = ?", string(mode))
	w.add("d.mode <> 'connector'") // the index's condition, which SQLite needs written out
	w.add("g.mode = ?", string(mode))
	w.add("(d.kind <> 'task' OR g.accepts_tasks = 1)")
	claimable(w, now)
	ranked := `SELECT d.id, d.agent_id, ROW_NUMBER() OVER (PARTITION BY d.agent_id ORDER BY ` + dueOrder + `) AS pos
		FROM deliveries d JOIN agents g ON g.id = d.agent_id JOIN tasks t ON t.id = d.task_id` + w.String()
	query := `SELECT ` + deliveryColumns + ` FROM deliveries d JOIN tasks t ON t.id = d.task_id
		WHERE d.state = 'queued' AND d.next_attempt_at <= ` + w.arg(nanos(now)) + ` AND ` + db.inList("d.id", `
			SELECT r.id FROM (`+ranked+`) r
			WHERE r.pos + (SELECT COUNT(*) FROM deliveries o WHERE o.agent_id = r.agent_id AND o.state = 'offered') <= `+w.arg(perAgent)) + `
		ORDER BY ` + dueOrder + fmt.Sprintf(` LIMIT %d`, max) + db.forClaim("d, t")
	return db.claim(ctx, now, query, "next_attempt_at, created_at, id", w.args, holder, lease)
}

// fillDeliveryModes gives the queued deliveries written without their
// agent's mode (an empty one: by a version before migration 0011, during an
// upgrade, or imported from an older export) that mode, so that the dispatchers
// find them, a thousand at a time. Looking costs a search of an empty
// range of deliveries_dispatch, at most once a second (a claim follows
// every webhook task queued); only a find takes a write.
func (db *DB) fillDeliveryModes(ctx context.Context) error {
	now := time.Now().UnixNano()
	if last := db.modesFilled.Load(); now-last < int64(time.Second) || !db.modesFilled.CompareAndSwap(last, now) {
		return nil
	}
	// Ordered as the index is, so that PostgreSQL reads the index: it
	// counts the empty modes of all finished deliveries, which that index
	// does not hold, and would rather scan the table for a first match.
	const modeless = `SELECT id FROM deliveries WHERE mode = '' AND mode <> 'connector' AND state = 'queued'
		ORDER BY next_attempt_at LIMIT 1000`
	var id string
	err := db.read.QueryRowContext(ctx, modeless).Scan(&id)
	if err == sql.ErrNoRows {
		return nil
	} else if err != nil {
		return db.formatError(err)
	}
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		// A delivery whose agent is gone (no one can take it) leaves the
		// index as a connector's would, so that it is not looked at again.
		_, err := tx.ExecContext(ctx, `UPDATE deliveries SET mode = COALESCE((SELECT a.mode FROM agents a WHERE a.id = deliveries.agent_id), 'connector')
			WHERE `+db.inList("id", modeless))
		return err
	})
}

// dueOrder orders deliveries by the time they became due, so that a retry,
// due after its backoff, waits behind the work that became due meanwhile
// instead of going back to the front for being old.
const dueOrder = "d.next_attempt_at, d.created_at, d.id"

// claim offers to holder, for lease, the deliveries that query selects (and
// locks) with args, and returns them in order (query's order, in the names
// of its columns). The query locks each delivery's task with it, skipping
// those either is locked: a claim then waits for no lock. A change of a
// task holds the task and then writes its deliveries, so a claim that held
// a delivery and waited for its task (to mark it offered) would deadlock
// with it, and PostgreSQL would fail one of the two.
func (db *DB) claim(ctx context.Context, now time.Time, query, order string, args []any, holder string, lease time.Duration) ([]*switchboard.Delivery, error) {
	if db.dialect.rowLocks {
		return db.claimInOneStatement(ctx, now, query, order, args, holder, lease)
	}
	// SQLite: look with a reader first, so that a claim that finds nothing
	// (the usual case after an answer) takes no write lock. Work committed
	// after this look is announced on the bus, which makes the holder claim
	// again.
	rows, err := db.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	found := rows.Next()
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	if !found {
		return nil, nil
	}
	var out []*switchboard.Delivery
	err = db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		out, err = scanDeliveries(rows)
		if err != nil {
			return err
		}
		for _, d := range out {
			d.State, d.Holder, d.Attempts, d.OfferedAt = switchboard.DeliveryOffered, holder, d.Attempts+1, &now
			d.NextAttemptAt = now.Add(lease)
			if _, err := tx.ExecContext(ctx, `UPDATE deliveries SET state = 'offered', holder = $1, last_holder = $1, attempts = $2,
				offered_at = $3, next_attempt_at = $4 WHERE id = $5`,
				holder, d.Attempts, nanos(now), nanos(d.NextAttemptAt), d.ID); err != nil {
				return err
			}
			if d.Kind == switchboard.DeliverTask {
				if _, err := tx.ExecContext(ctx, `UPDATE tasks SET offered = 1 WHERE id = $1`, string(d.TaskID)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err // rolled back: nothing is held
	}
	return out, nil
}

// claimInOneStatement is claim on PostgreSQL, in one statement: data-modifying
// WITH clauses mark the rows query picked (and locked) offered, and their
// tasks, and PostgreSQL runs them to completion although the outer SELECT
// reads only the picked rows. A claim is then one round trip, where a
// transaction took five or more (begin, the query, two updates a row,
// commit), and a claim that finds nothing, which most hints of work lead
// to, costs no more than a look would.
func (db *DB) claimInOneStatement(ctx context.Context, now time.Time, query, order string, args []any, holder string, lease time.Duration) ([]*switchboard.Delivery, error) {
	next := now.Add(lease)
	w := &where{args: args}
	h, at, until := w.arg(holder), w.arg(nanos(now)), w.arg(nanos(next))
	rows, err := db.write.QueryContext(ctx, `WITH picked AS (`+query+`),
		offered AS (
			UPDATE deliveries d SET state = 'offered', holder = `+h+`, last_holder = `+h+`, attempts = d.attempts + 1,
				offered_at = `+at+`, next_attempt_at = `+until+`
			FROM picked p WHERE d.id = p.id
		),
		marked AS (
			UPDATE tasks t SET offered = 1 FROM picked p WHERE t.id = p.task_id AND p.kind = 'task'
		)
		SELECT `+deliveryColumnNames+` FROM picked ORDER BY `+order, w.args...)
	if err != nil {
		return nil, db.formatError(err)
	}
	out, err := scanDeliveries(rows)
	if err != nil {
		return nil, err
	}
	for _, d := range out {
		d.State, d.Holder, d.Attempts, d.OfferedAt, d.NextAttemptAt = switchboard.DeliveryOffered, holder, d.Attempts+1, &now, next
	}
	return out, nil
}

// AckDelivery implements switchboard.DeliveryStore. last_holder names the
// holder of the latest offer: set by each claim, kept when the offer goes
// back to queued unacknowledged, cleared by RequeueUnheld.
func (db *DB) AckDelivery(ctx context.Context, id, holder string) (bool, error) {
	var first bool
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		first, err = db.ackDelivery(ctx, tx, id, holder)
		return err
	})
	return first, err
}

// ackDelivery is AckDelivery within tx (also used by ModifyTask for a
// TaskChange's Ack).
func (db *DB) ackDelivery(ctx context.Context, tx *sql.Tx, id, holder string) (bool, error) {
	res, err := tx.ExecContext(ctx, ackDeliverySQL("$1", "$2"), id, holder)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// ackDeliverySQL acknowledges the delivery whose id is the placeholder id,
// if the placeholder holder holds its latest offer.
func ackDeliverySQL(id, holder string) string {
	return `UPDATE deliveries SET state = 'acked', holder = ''
		WHERE id = ` + id + ` AND last_holder = ` + holder + ` AND last_holder <> '' AND state IN ('offered', 'queued')`
}

// taskFinished is the last error of the deliveries a finished task no
// longer needs.
const taskFinished = "the task finished"

// failUnneededSQL fails the live deliveries but cancels of the task whose
// id is the placeholder task, with the placeholder reason as last error:
// a finished task needs nothing more delivered.
func failUnneededSQL(task, reason string) string {
	return `UPDATE deliveries SET state = 'failed', last_error = ` + reason + `
		WHERE task_id = ` + task + ` AND kind <> 'cancel' AND state IN ('queued', 'offered')`
}

// ReleaseDeliveries implements switchboard.DeliveryStore.
func (db *DB) ReleaseDeliveries(ctx context.Context, holders []string) ([]string, error) {
	var agents []string
	for chunk := range slices.Chunk(holders, listChunk) {
		w := &where{args: []any{nanos(db.Now())}}
		marks := placeholders(w, chunk)
		err := db.writeReach(ctx, func(ctx context.Context, tx *sql.Tx) error {
			rows, err := tx.QueryContext(ctx, `UPDATE deliveries SET state = 'queued', holder = '', next_attempt_at = $1
				WHERE holder IN (`+marks+`) AND state = 'offered' RETURNING agent_id`, w.args...)
			if err != nil {
				return err
			}
			ids, err := scanStrings(rows)
			agents = append(agents, ids...)
			return err
		})
		if err != nil {
			return distinct(agents), err
		}
	}
	return distinct(agents), nil
}

// scanStrings reads the one text column of rows, and closes them.
func scanStrings(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// distinct sorts ids and drops repeats.
func distinct(ids []string) []string {
	slices.Sort(ids)
	return slices.Compact(ids)
}

// RetryDelivery implements switchboard.DeliveryStore.
func (db *DB) RetryDelivery(ctx context.Context, id string, next time.Time, lastErr string) error {
	return db.writeReach(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE deliveries SET state = 'queued', holder = '', next_attempt_at = $1, last_error = $2
			WHERE id = $3 AND state = 'offered'`, nanos(next), truncateError(lastErr), id)
		return err
	})
}

// RequeueUnheld implements switchboard.DeliveryStore. Only the latest
// delivery of each task is offered again: it is the turn the agent owes an
// answer to, and tasks waiting for their peer are left alone.
func (db *DB) RequeueUnheld(ctx context.Context, agentID string, holding []a2a.TaskID, deadline time.Time) (int, error) {
	var n int
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		n, err = db.requeueUnheld(ctx, tx, agentID, holding, deadline)
		return err
	})
	return n, err
}

// requeueUnheld is RequeueUnheld within tx. It reads the agent's open
// tasks and the latest delivery of each, not the agent's deliveries, which
// are all it was ever sent: an agent connects often, and its history only
// grows, while its open tasks are work it is about to be offered anyway.
func (db *DB) requeueUnheld(ctx context.Context, tx *sql.Tx, agentID string, holding []a2a.TaskID, deadline time.Time) (int, error) {
	w := &where{args: []any{nanos(db.Now()), nanos(deadline)}} // $1 is the time it is due, $2 its new deadline
	w.add("t.agent_id = ?", agentID)
	w.add("t.state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING')")
	// A task never offered has no acknowledged delivery: a backlog queued
	// while the agent was away costs a row read each, not a lookup.
	w.add("t.offered = 1")
	if len(holding) > maxHolding {
		holding = holding[:maxHolding]
	}
	if len(holding) > 0 {
		w.add("t.id NOT IN (" + placeholders(w, holding) + ")")
	}
	// Each open task's latest task or message delivery, if acknowledged.
	acked := `SELECT (SELECT CASE WHEN d2.state = 'acked' THEN d2.id END FROM deliveries d2
		WHERE d2.task_id = t.id AND d2.kind IN ('task', 'message') ORDER BY d2.created_at DESC, d2.id DESC LIMIT 1)
		FROM tasks t` + w.String()
	// The agent's acknowledgement of this work no longer counts: it lost
	// the work, and a late acknowledgement of the old offer must not stand
	// for the new one.
	res, err := tx.ExecContext(ctx, `UPDATE deliveries SET state = 'queued', holder = '', last_holder = '', next_attempt_at = $1,
		deadline = $2 WHERE `+db.inList("id", acked), w.args...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// inList is the condition that column is among the values of the query
// sub. PostgreSQL reads "= ANY(ARRAY(sub))" by running sub once and then
// searching column's index for its values, whatever it estimates; "IN
// (sub)" it may plan as a hash join that reads every row the rest of the
// statement selects.
func (db *DB) inList(column, sub string) string {
	if db.dialect.name == "postgres" {
		return column + " = ANY(ARRAY(" + sub + "))"
	}
	return column + " IN (" + sub + ")"
}

// RequeueStaleOffers implements switchboard.DeliveryStore.
func (db *DB) RequeueStaleOffers(ctx context.Context, now time.Time) ([]string, error) {
	var agents []string
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `UPDATE deliveries SET state = 'queued', holder = '', next_attempt_at = $1,
			last_error = 'the offer was not acknowledged in time'
			WHERE state = 'offered' AND next_attempt_at < $1 RETURNING agent_id`, nanos(now))
		if err != nil {
			return err
		}
		if agents, err = scanStrings(rows); err == nil && len(agents) > 0 {
			err = db.notifyReach(ctx, tx) // a webhook or front agent's reach may be gone
		}
		return err
	})
	if len(agents) > 0 || err != nil {
		db.reachMoved()
	}
	return distinct(agents), err
}

// FindExpiredDeliveries implements switchboard.DeliveryStore.
func (db *DB) FindExpiredDeliveries(ctx context.Context, now time.Time, max int) ([]*switchboard.Delivery, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+deliveryColumns+` FROM deliveries d
		WHERE d.state = 'queued' AND d.deadline < $1 ORDER BY d.deadline LIMIT `+fmt.Sprint(max), nanos(now))
	if err != nil {
		return nil, db.formatError(err)
	}
	return scanDeliveries(rows)
}

// FindDeliveries implements switchboard.DeliveryStore.
func (db *DB) FindDeliveries(ctx context.Context, f switchboard.DeliveryFilter) ([]*switchboard.Delivery, error) {
	w := &where{}
	if f.TaskID != nil {
		w.add("d.task_id = ?", string(*f.TaskID))
	}
	if f.AgentID != nil {
		w.add("d.agent_id = ?", *f.AgentID)
	}
	if len(f.States) > 0 {
		w.add("d.state IN (" + placeholders(w, f.States) + ")")
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+deliveryColumns+` FROM deliveries d`+w.String()+` ORDER BY d.created_at, d.id`, w.args...)
	if err != nil {
		return nil, db.formatError(err)
	}
	return scanDeliveries(rows)
}

func scanDeliveries(rows *sql.Rows) ([]*switchboard.Delivery, error) {
	defer rows.Close()
	var out []*switchboard.Delivery
	for rows.Next() {
		var d switchboard.Delivery
		var task, kind, state string
		var deadline, next, created int64
		var offered sql.NullInt64
		if err := rows.Scan(&d.ID, &task, &d.AgentID, &kind, &d.MessageID, &state, &d.Attempts, &d.Holder,
			&deadline, &next, &d.LastError, &created, &offered, &d.TraceParent); err != nil {
			return nil, err
		}
		d.TaskID, d.Kind, d.State = a2a.TaskID(task), switchboard.DeliveryKind(kind), switchboard.DeliveryState(state)
		d.Deadline, d.NextAttemptAt, d.CreatedAt = fromNanos(deadline), fromNanos(next), fromNanos(created)
		d.OfferedAt = nullNanos(offered)
		out = append(out, &d)
	}
	return out, rows.Err()
}

// truncateError bounds an error kept with a delivery, a wake or a push
// to 500 bytes.
func truncateError(s string) string {
	// Valid UTF-8 without NUL, which PostgreSQL's text refuses, cut at
	// a character's start.
	s = strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", "?"), "?")
	if len(s) > 500 {
		n := 500
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		return s[:n]
	}
	return s
}
