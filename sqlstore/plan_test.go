package sqlstore

import (
	"context"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/storetest"
)

// scanLine matches a step of a query plan that reads a whole table or a
// whole index ("SCAN t", "SCAN t USING INDEX i"), as opposed to a search of
// it by key ("SEARCH t USING INDEX i (a=?)").
var scanLine = regexp.MustCompile(`^SCAN (\S+)`)

// harmlessScans are the steps that read something small whole: the rows
// of a subquery already narrowed by its own plan (r is ClaimDueDeliveries'
// ranked candidates, and Discover's members of the communities asked,
// materialized; chosen the one agent Discover chose; s0, s1… an inbox
// page's first tasks of each state), a VALUES list or a SELECT of
// constants, the schema.
var harmlessScans = regexp.MustCompile(`^SCAN (CONSTANT ROW|\(subquery-\d+\)|r|chosen|s\d+|\d+-ROW VALUES CLAUSE|sqlite_schema|pragma_\w+ VIRTUAL TABLE)`)

// scanningStatements are the statements allowed to read a table whole,
// each for its reason, found by a part of their text.
var scanningStatements = []struct{ sql, why string }{
	{"FROM accounts ORDER BY created_at, id", "an operator's list of every account"},
	{"FROM agents g JOIN accounts a ON a.id = g.account_id ORDER BY g.handle", "an operator's list of every agent (an owner's list searches agents_account)"},
	{"DELETE FROM wake_budget WHERE hour < $1", "hourly pruning of a table of one row per agent woken per hour"},
	{"FROM communities c ORDER BY c.name", "an operator's list of every community (an owner's list searches by its agents)"},
	{"WHERE g.id IN (SELECT m.agent_id FROM community_members m) AND", "an operator's directory of every community's members"},
	{"LEFT JOIN agent_sessions s ON s.agent_id = a.id ORDER BY a.handle", "the operator's console: every agent's glance (an owner's searches agents_account)"},
	{"SELECT COUNT(*) FROM oauth_clients", "the cap on registered MCP clients, a table held to at most 100 rows"},
	{"FROM oauth_clients WHERE requester IN (SELECT u.requester", "the address holding the most MCP clients, when the table of at most 100 rows is full"},
	{"FROM oauth_grants ORDER BY created_at, refresh_hash", "an operator's list of every OAuth grant (an owner's searches oauth_grants_account)"},
	{"FROM audit_log", "the operator's audit log: its index read newest first, to the end of one page (an owner's searches audit_log_account_at)"},
}

// TestStatementsSearchTheirTables runs the store contract on SQLite,
// gathers every statement it runs, and reads each one's query plan: none
// may read a whole table (or index) but those in scanningStatements. A
// claim that read every agent on each call, and a dispatcher's claim that
// read every queued delivery of the deployment, were found this way. The
// plans are SQLite's; PostgreSQL plans by the size of its tables, which a
// test's tables do not have.
// searchesBy are statements that must search a given index (a step that
// searches and names it, covering or not): their WHERE
// names the index's columns, but a plan through another index (one that
// spares a sort, or a shorter key) would read every row of the agent.
var searchesBy = []struct{ sql, step string }{
	{"FROM audit_log WHERE account_id = $1", "SEARCH audit_log USING INDEX audit_log_account_at (account_id=?"},
	{"FROM outbound WHERE agent_id = $1 AND remote_task_id = $2", "SEARCH outbound USING INDEX outbound_task (agent_id=? AND remote_task_id=?)"},
	{"AND push_hash = $", "SEARCH outbound USING INDEX outbound_push (push_hash=?)"},
	{"FROM outbound WHERE agent_id = $1 AND context_id = $2", "SEARCH outbound USING INDEX outbound_context (agent_id=? AND context_id=?)"},
	{"d.mode = $1 AND d.mode <> 'connector'", "SEARCH d USING INDEX deliveries_dispatch (mode=? AND next_attempt_at<?)"},
	{"SELECT id FROM deliveries WHERE mode = '' AND mode <> 'connector'", "INDEX deliveries_dispatch (mode=?)"},
	{") AS s0 UNION ALL SELECT", "SEARCH tasks USING INDEX tasks_agent_state (agent_id=? AND state=?"},
	{"THEN d2.id END FROM deliveries d2", "SEARCH t USING INDEX tasks_agent_state (agent_id=? AND state=?)"},
	// Discovery and the directory read the members of the communities
	// asked for, by key, never every agent.
	{"ORDER BY x.reach, x.open_tasks", "SEARCH m USING COVERING INDEX sqlite_autoindex_community_members_1 (community=?"},
	{"FROM r WHERE r.reach < 2", "SEARCH m USING COVERING INDEX sqlite_autoindex_community_members_1 (community=?"},
	{"FROM community_members m WHERE m.community IN (", "SEARCH m USING COVERING INDEX sqlite_autoindex_community_members_1 (community=?"},
	{"peer_kind <> '' AND peer_kind = $", "SEARCH tasks USING INDEX tasks_peer_global (peer_id=?)"},
}

func TestStatementsSearchTheirTables(t *testing.T) {
	var mu sync.Mutex
	seen := make(map[string]bool)
	see := func(q string) { mu.Lock(); seen[q] = true; mu.Unlock() }
	statementObserver.Store(&see)
	t.Run("contract", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) storetest.Store { return openSQLiteForTest(t) })
		storetest.RunWakes(t, func(t *testing.T, now func() time.Time) storetest.Store {
			db := openSQLiteForTest(t)
			db.Now = now
			return db
		})
		t.Run("DeliveryWithoutMode", checkDeliveryWithoutMode)
	})
	statementObserver.Store(nil)

	db := openSQLiteForTest(t)
	ctx := context.Background()
	var flagged []string
	found := make(map[string]bool)
	for q := range seen {
		switch strings.ToUpper(strings.Fields(q + " x")[0]) {
		case "SELECT", "INSERT", "UPDATE", "DELETE", "WITH":
		default:
			continue
		}
		rows, err := db.write.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, make([]any, countParams(q))...)
		if err != nil {
			t.Errorf("explain %q: %v", q, err)
			continue
		}
		var steps []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			steps = append(steps, detail)
		}
		rows.Close()
		for _, want := range searchesBy {
			if strings.Contains(strings.Join(strings.Fields(q), " "), want.sql) && !slices.ContainsFunc(steps, func(s string) bool { return strings.HasPrefix(s, "SEARCH") && strings.Contains(s, want.step) }) {
				t.Errorf("plan %q, want the step %q, of:\n\t%s", steps, want.step, strings.Join(strings.Fields(q), " "))
			}
			found[want.sql] = found[want.sql] || strings.Contains(strings.Join(strings.Fields(q), " "), want.sql)
		}
		for _, s := range steps {
			if scanLine.MatchString(s) && !harmlessScans.MatchString(s) && !allowedToScan(q) {
				flagged = append(flagged, s+" in:\n\t"+strings.Join(strings.Fields(q), " "))
			}
		}
	}
	for _, want := range searchesBy {
		if !found[want.sql] {
			t.Errorf("no statement with %q was run: searchesBy is out of date", want.sql)
		}
	}
	if len(seen) < 150 {
		t.Errorf("only %d statements seen: is statementObserver still called for every statement?", len(seen))
	}
	sort.Strings(flagged)
	for _, f := range flagged {
		t.Errorf("reads a whole table, whose cost grows with the deployment: %s", f)
	}
}

func allowedToScan(q string) bool {
	q = strings.Join(strings.Fields(q), " ")
	for _, s := range scanningStatements {
		if strings.Contains(q, s.sql) {
			return true
		}
	}
	return false
}

// openSQLiteForTest opens a store on a new SQLite file that the test
// removes.
func openSQLiteForTest(tb testing.TB) *DB {
	tb.Helper()
	db, err := OpenSQLite(context.Background(), MigratedPath(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

// countParams returns the highest $n in q.
func countParams(q string) int {
	n := 0
	for _, m := range regexp.MustCompile(`\$(\d+)`).FindAllStringSubmatch(q, -1) {
		var v int
		for _, c := range m[1] {
			v = v*10 + int(c-'0')
		}
		n = max(n, v)
	}
	return n
}

// MigratedPath returns the path of a new, migrated database file for this
// package's own tests: sqlite_test.go sets it to internal/sqlitetest's
// Path, which copies a file migrated once, and which tests inside this
// package cannot import.
var MigratedPath = func(tb testing.TB) string { return filepath.Join(tb.TempDir(), "switchboard.db") }
