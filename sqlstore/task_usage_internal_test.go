package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"

	"github.com/switchboard-dev/switchboard/internal/pgtest"
	"github.com/switchboard-dev/switchboard/internal/storetest"
)

// TestStaleCountsRecountedBeforeRefusing spoils a peer's kept counts, as
// writes by an older version of the store would during an upgrade: a
// change they would refuse is tried again once they are counted from the
// tasks (and corrected), on both engines; counts made from the tasks
// within the last minute are trusted to refuse.
func TestStaleCountsRecountedBeforeRefusing(t *testing.T) {
	for name, open := range map[string]func(testing.TB) *DB{"sqlite": openSQLiteForTest, "postgres": openPostgresForTest} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db := open(t)
			clock := storetest.NewClock(time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC))
			db.Now = clock.Now
			p := storetest.Populate(t, db)
			agentID, peerID := p.Tasks[0].AgentID, p.Tasks[0].PeerID
			open, bytes, err := db.PeerUsage(ctx, agentID, peerID)
			if err != nil || open == 0 {
				t.Fatalf("PeerUsage = %d, %d, %v; want the populated tasks", open, bytes, err)
			}
			spoil := func() {
				t.Helper()
				if _, err := db.write.ExecContext(ctx, `UPDATE peer_usage SET open_tasks = 999 WHERE agent_id = $1 AND peer_id = $2`, agentID, peerID); err != nil {
					t.Fatal(err)
				}
			}
			n := 0
			create := func(max int) error {
				n++
				id := a2a.TaskID(switchboard.NewID())
				at := clock.Now()
				msg := &a2a.Message{ID: fmt.Sprint("quota-", n), Role: a2a.MessageRoleUser, TaskID: id, ContextID: "c", Parts: a2a.ContentParts{a2a.NewTextPart("hi")}}
				task := &switchboard.Task{A2A: a2a.Task{ID: id, ContextID: "c", History: []*a2a.Message{msg},
					Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &at}},
					AgentID: agentID, PeerID: peerID, PeerLabel: "p", Protocol: switchboard.ProtocolV1, CreatedAt: at, UpdatedAt: at}
				_, err := db.CreateTask(ctx, task, &switchboard.TaskChange{MessageID: msg.ID, Quota: &switchboard.PeerQuota{MaxOpenTasks: max}})
				return err
			}
			spoil()
			if err := create(open + 1); err != nil {
				t.Fatalf("a task that fits the tasks, refused by spoilt counts: %v", err)
			}
			if got, _, _ := db.PeerUsage(ctx, agentID, peerID); got != open+1 {
				t.Fatalf("PeerUsage after the recount: %d open tasks, want %d", got, open+1)
			}
			spoil()
			var qe *switchboard.QuotaError
			if err := create(open + 5); !errors.As(err, &qe) || qe.OpenTasks != 999 {
				t.Fatalf("counted a moment ago: %v, want a refusal by the counts (999)", err)
			}
			clock.Add(recountInterval)
			if err := create(open + 5); err != nil {
				t.Fatalf("counted a minute ago: %v, want a recount and the task", err)
			}
			if got, _, _ := db.RecountPeerUsage(ctx, agentID, peerID); got != open+2 {
				t.Fatalf("RecountPeerUsage: %d open tasks, want %d", got, open+2)
			}
		})
	}
}

// TestPeerUsageSearches checks the plans of the two reads of a peer's
// usage: its row, which every write of its tasks changes, is found by its
// key; the recount, before a refusal, reads the agent's unfinished tasks
// through tasks_agent_state, never finished ones. PostgreSQL
// plans by the size of its tables, which a test's tables do not have, so
// it is asked with sequential and bitmap scans turned off: the question is
// whether the index serves the query.
func TestPeerUsageSearches(t *testing.T) {
	ctx := context.Background()
	recount := recountPeerUsageSQL
	t.Run("sqlite", func(t *testing.T) {
		db := openSQLiteForTest(t)
		for q, want := range map[string]string{
			peerUsageSQL: "SEARCH peer_usage USING INDEX sqlite_autoindex_peer_usage_1 (agent_id=? AND peer_id=?)",
			recount:      "SEARCH tasks USING INDEX tasks_agent_state (agent_id=? AND state=?)",
		} {
			if plan := explainSQLite(t, db, q, "a", "p"); !strings.Contains(plan, want) {
				t.Errorf("plan of %s:\n%s\nwant the step %q", q, plan, want)
			}
		}
	})
	t.Run("postgres", func(t *testing.T) {
		db := openPostgresForTest(t)
		for q, want := range map[string]string{
			peerUsageSQL: "Index Scan using peer_usage_pkey",
			recount:      "using tasks_agent_state",
		} {
			tx, err := db.write.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, set := range []string{"SET LOCAL enable_seqscan = off", "SET LOCAL enable_bitmapscan = off"} {
				if _, err := tx.ExecContext(ctx, set); err != nil {
					t.Fatal(err)
				}
			}
			rows, err := tx.QueryContext(ctx, "EXPLAIN "+q, "a", "p")
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for rows.Next() {
				var line string
				if err := rows.Scan(&line); err != nil {
					t.Fatal(err)
				}
				lines = append(lines, line)
			}
			rows.Close()
			_ = tx.Rollback()
			if plan := strings.Join(lines, "\n"); !strings.Contains(plan, want) {
				t.Errorf("plan of %s:\n%s\nwant %q", q, plan, want)
			}
		}
	})
}

// explainSQLite returns the steps of SQLite's plan of q, one a line.
func explainSQLite(t *testing.T, db *DB, q string, args ...any) string {
	t.Helper()
	rows, err := db.write.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var steps []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, detail)
	}
	return strings.Join(steps, "\n")
}

// openPostgresForTest opens a store in a new schema of the test database,
// or skips the test without one.
func openPostgresForTest(tb testing.TB) *DB {
	tb.Helper()
	db, err := OpenPostgres(context.Background(), pgtest.DSN(tb), PostgresOptions{MaxConns: 4})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}
