package sqlstore_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
)

// tablesWithoutTasks are the tables whose rows do not belong to a task,
// so that retention (ExpireTasks) leaves them alone. A new table must be
// either listed here or tied to its task (docs/deploying.md, "Retention"):
// a task_id column, or a foreign key with ON DELETE CASCADE to a table
// that is tied.
var tablesWithoutTasks = map[string]string{
	"schema_migrations":   "migrations",
	"accounts":            "owners",
	"agents":              "agents outlive their tasks",
	"tokens":              "credentials of accounts and agents",
	"agent_sessions":      "live connections of agents",
	"rate_counts":         "request counts per peer",
	"signins":             "the web console's sign-ins",
	"audit_log":           "the audit log, pruned by its own retention (--audit-retention)",
	"tasks":               "the tasks themselves",
	"outbound":            "what our agents sent; remote_task_id names the remote agent's task",
	"wake_configs":        "agents' wake webhooks",
	"wakes":               "wakes sent or waiting; the wake sender prunes finished ones (named_task_id may be a remote task's)",
	"wake_tasks":          "the tasks a wake names; pruned with their wake",
	"wake_budget":         "hourly wake counts; pruned by the wake sender",
	"peer_usage":          "per peer, the count of its unfinished tasks, which retention (of finished tasks) does not change",
	"communities":         "the network's communities",
	"community_members":   "which agents are in which community",
	"agent_skills":        "the skill keys of agents' cards, for discovery",
	"session_ends":        "when agents' connections ended, for the reconnect grace",
	"pairings":            "peers' requests for a token; swept a day after they expire",
	"pairing_counts":      "the pairing requests taken, for the flood limits; swept after a day",
	"fronts":              "fronts' upstreams and credentials",
	"outbound_peers":      "agents' synced aliases and their tokens",
	"oauth_clients":       "MCP clients registered for OAuth",
	"oauth_client_counts": "MCP client registrations, for the per-address limit; swept after the limit's window",
	"oauth_codes":         "OAuth authorization codes; swept a day after they expire",
	"oauth_grants":        "OAuth grants of MCP tokens",
	"front_contexts":      "the upstream's context of each peer's context on a front; kept while the agent is",
	"published_cards":     "the card a forwarding connector published for its agent; kept while the agent is",
	"cert_files":          "the TLS certificates, their keys and the ACME account",
	"cert_locks":          "the certificate manager's locks",
}

// TestRetentionCoversSchema fails when a table is neither tied to tasks
// (so that retention deletes its rows with their task) nor listed as
// independent of them, and when a task_id column has no index that
// starts with it (retention deletes by it). It reads the SQLite schema
// with its own queries; the PostgreSQL migrations keep the same tables.
func TestRetentionCoversSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "switchboard.db")
	mustOpenSQLiteAt(t, path)
	tables := rawStrings(t, "sqlite", sqlitetest.DSN(path), `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	tied := map[string]bool{"tasks": true}
	// A table is tied by a task_id column, or by a cascading foreign key
	// to a tied table; repeat until nothing changes, for chains.
	for changed := true; changed; {
		changed = false
		for _, tb := range tables {
			if tied[tb] {
				continue
			}
			cols := rawStrings(t, "sqlite", sqlitetest.DSN(path), `SELECT name FROM pragma_table_info(?)`, tb)
			if slices.Contains(cols, "task_id") {
				tied[tb], changed = true, true
				continue
			}
			for _, ref := range rawStrings(t, "sqlite", sqlitetest.DSN(path), `SELECT "table" || ' ' || on_delete FROM pragma_foreign_key_list(?)`, tb) {
				parent, onDelete, _ := strings.Cut(ref, " ")
				if tied[parent] && strings.EqualFold(onDelete, "CASCADE") {
					tied[tb], changed = true, true
				}
			}
		}
	}
	for _, tb := range tables {
		_, listed := tablesWithoutTasks[tb]
		switch {
		case tied[tb] && listed && tb != "tasks":
			t.Errorf("table %s has a task_id column (or a cascading key) and is listed as independent of tasks", tb)
		case !tied[tb] && !listed:
			t.Errorf("table %s is neither tied to tasks (a task_id column, or a foreign key ON DELETE CASCADE to a tied table) nor in tablesWithoutTasks: retention would leave its rows behind", tb)
		}
		cols := rawStrings(t, "sqlite", sqlitetest.DSN(path), `SELECT name FROM pragma_table_info(?)`, tb)
		if !slices.Contains(cols, "task_id") {
			continue
		}
		leading := rawStrings(t, "sqlite", sqlitetest.DSN(path), `SELECT ii.name FROM pragma_index_list(?) il, pragma_index_info(il.name) ii WHERE ii.seqno = 0`, tb)
		if !slices.Contains(leading, "task_id") {
			t.Errorf("table %s: no index starts with task_id; retention deletes by it", tb)
		}
	}
	for tb := range tablesWithoutTasks {
		if !slices.Contains(tables, tb) {
			t.Errorf("tablesWithoutTasks lists %s, which is not in the schema", tb)
		}
	}
}
