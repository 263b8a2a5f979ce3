package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"maps"
	"strings"
	"time"
)

// excludedTables are the tables export leaves out, and why. Every other
// table of the schema is exported, including tables that later migrations
// add: TestExportCoversSchema fails when this list names a table the
// schema lacks, or when a table is neither exported nor listed here.
var excludedTables = map[string]string{
	migrationsTable:       "the bookkeeping of migrations: the header lists the applied migrations instead, and the database that imports applies its own",
	"agent_sessions":      "which connection, on which instance, holds each connector agent: it describes live connections, which end with the process; agents reconnect and open new sessions",
	"rate_counts":         "request counts of fixed one-minute windows: they expire within a minute and mean nothing in another deployment",
	"peer_usage":          "each peer's count of its unfinished tasks and their bytes, kept for the quotas: the importing database counts them again from the tasks",
	"signins":             "the web console's sign-ins: cookies of this deployment's browsers, which sign in again",
	"pairing_counts":      "the pairing requests taken in the last day, for the flood limits: they mean nothing in another deployment",
	"oauth_client_counts": "the MCP client registrations taken in the last hour, for the per-address limit: they mean nothing in another deployment",
	"session_ends":        "when each agent's last connection ended, for the reconnect grace of discovery: it describes connections, which end with the process",
	"cert_locks":          "the certificate manager's locks: they describe work in flight in this deployment's processes, which end with them",
}

// ExcludedTables returns the tables that Export leaves out, each with the
// reason.
func ExcludedTables() map[string]string { return maps.Clone(excludedTables) }

// Export writes the whole data of the database to w in the export format
// (dump.go, and docs/deploying.md): every table but ExcludedTables, rows in
// primary-key order, tables after those they reference. It reads in one
// read transaction, a snapshot (SQLite: a WAL read transaction;
// PostgreSQL: REPEATABLE READ), so the export is consistent while servers
// keep running. It returns the rows written per table.
func (db *DB) Export(ctx context.Context, w io.Writer) (map[string]int64, error) {
	opts := &sql.TxOptions{}
	if db.dialect.rowLocks {
		opts = &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	tx, err := db.read.BeginTx(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("export: %w", db.formatError(err))
	}
	defer func() { _ = tx.Rollback() }()
	tables, err := db.schemaTables(ctx, tx)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	migrations, err := queryStrings(ctx, tx, `SELECT name FROM `+migrationsTable+` ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("export: read migrations: %w", err)
	}
	h := &dumpHeader{ExportedAt: db.Now().UTC().Format(time.RFC3339Nano), Engine: db.dialect.name, Migrations: migrations}
	var exported []*table
	for _, t := range tables {
		if _, skip := excludedTables[t.name]; skip {
			continue
		}
		dt := dumpTable{Name: t.name, PrimaryKey: t.primaryKey}
		for _, c := range t.columns {
			if c.kind == "" {
				return nil, fmt.Errorf("export: table %s, column %s: type %q is not one export knows (sqlstore/schema.go)", t.name, c.name, c.decl)
			}
			dt.Columns = append(dt.Columns, dumpColumn{Name: c.name, Type: c.kind})
		}
		h.Tables = append(h.Tables, dt)
		exported = append(exported, t)
	}
	dw := newDumpWriter(w)
	if err := dw.header(h); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	for i, t := range exported {
		if err := exportTable(ctx, tx, dw, t, &h.Tables[i]); err != nil {
			return nil, fmt.Errorf("export %s: %w", t.name, err)
		}
	}
	if err := dw.end(); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return dw.counts, nil
}

func exportTable(ctx context.Context, tx *sql.Tx, dw *dumpWriter, t *table, dt *dumpTable) error {
	rows, err := tx.QueryContext(ctx, `SELECT `+columnList(t.columns)+` FROM `+quoteIdent(t.name)+` ORDER BY `+t.orderBy())
	if err != nil {
		return err
	}
	defer rows.Close()
	raw := make([]any, len(t.columns))
	ptrs := make([]any, len(t.columns))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	values := make([]any, len(t.columns))
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		for i, c := range t.columns {
			v, err := canonicalValue(c.kind, raw[i])
			if err != nil {
				return fmt.Errorf("column %s: %w", c.name, err)
			}
			values[i] = v
		}
		if err := dw.row(dt, values); err != nil {
			return err
		}
	}
	return rows.Err()
}

// columnList is the quoted, comma-separated names of cols.
func columnList(cols []column) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = quoteIdent(c.name)
	}
	return strings.Join(q, ", ")
}
