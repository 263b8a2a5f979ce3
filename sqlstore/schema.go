package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// The live schema, read from the database itself rather than from a list
// in the code, so that export, import and retention cover tables that
// later migrations add without a change here.

// columnKind is how export writes a column's values, whatever the engine
// calls its type.
type columnKind string

// The kinds a column can have.
const (
	kindInteger   columnKind = "integer"   // a JSON number without fraction (int64)
	kindReal      columnKind = "real"      // a JSON number
	kindText      columnKind = "text"      // a JSON string
	kindBlob      columnKind = "blob"      // a JSON string, base64 (standard, padded)
	kindBoolean   columnKind = "boolean"   // true or false
	kindTimestamp columnKind = "timestamp" // a JSON string, RFC 3339 with nanoseconds, UTC
	kindJSON      columnKind = "json"      // a JSON string holding the JSON text as stored
)

// validKind reports whether k is one of the kinds above.
func validKind(k columnKind) bool {
	switch k {
	case kindInteger, kindReal, kindText, kindBlob, kindBoolean, kindTimestamp, kindJSON:
		return true
	}
	return false
}

// column is one column of a table.
type column struct {
	name    string
	kind    columnKind
	decl    string // the type as the engine names it, for error messages
	notNull bool
}

// foreignKey is one column of a foreign key: table.col references
// refTable.refCol.
type foreignKey struct {
	col, refTable, refCol string
	cascade               bool // ON DELETE CASCADE
}

// table is one table of the schema.
type table struct {
	name       string
	columns    []column
	primaryKey []string // in key order; empty when the table has none
	refs       []foreignKey
}

// column returns the named column, or nil.
func (t *table) column(name string) *column {
	for i := range t.columns {
		if t.columns[i].name == name {
			return &t.columns[i]
		}
	}
	return nil
}

// orderBy is the ORDER BY list that reads the table's rows in a stable
// order: its primary key, or every column when it has none.
func (t *table) orderBy() string {
	cols := t.primaryKey
	if len(cols) == 0 {
		for _, c := range t.columns {
			cols = append(cols, c.name)
		}
	}
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = quoteIdent(c)
	}
	return strings.Join(q, ", ")
}

// migrationsTable is the bookkeeping of applied migrations.
const migrationsTable = "schema_migrations"

// schemaTables reads every table of the database (schema_migrations
// included), ordered so that a table comes after the tables its foreign
// keys reference, and by name where that leaves a choice.
func (db *DB) schemaTables(ctx context.Context, tx *sql.Tx) ([]*table, error) {
	var tables []*table
	var err error
	if db.dialect.rowLocks { // PostgreSQL
		tables, err = postgresTables(ctx, tx)
	} else {
		tables, err = sqliteTables(ctx, tx)
	}
	if err != nil {
		return nil, fmt.Errorf("read schema: %w", err)
	}
	return sortByReferences(tables), nil
}

// sortByReferences orders tables so that every table follows those it
// references (a reference to itself, or a cycle, cannot be honoured and
// is ignored), and by name among tables free to go.
func sortByReferences(tables []*table) []*table {
	slices.SortFunc(tables, func(a, b *table) int { return strings.Compare(a.name, b.name) })
	placed := make(map[string]bool, len(tables))
	known := make(map[string]bool, len(tables))
	for _, t := range tables {
		known[t.name] = true
	}
	out := make([]*table, 0, len(tables))
	for len(out) < len(tables) {
		progress := false
		for _, t := range tables {
			if placed[t.name] || !refsPlaced(t, placed, known) {
				continue
			}
			placed[t.name] = true
			out = append(out, t)
			progress = true
		}
		if !progress { // a cycle: take the first left, by name
			for _, t := range tables {
				if !placed[t.name] {
					placed[t.name] = true
					out = append(out, t)
					break
				}
			}
		}
	}
	return out
}

func refsPlaced(t *table, placed, known map[string]bool) bool {
	for _, r := range t.refs {
		if r.refTable != t.name && known[r.refTable] && !placed[r.refTable] {
			return false
		}
	}
	return true
}

// quoteIdent quotes a table or column name for SQL, on either engine.
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// sqliteTables reads the schema of a SQLite database.
func sqliteTables(ctx context.Context, tx *sql.Tx) ([]*table, error) {
	names, err := queryStrings(ctx, tx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`)
	if err != nil {
		return nil, err
	}
	tables := make([]*table, 0, len(names))
	for _, name := range names {
		t := &table{name: name}
		if err := sqliteColumns(ctx, tx, t); err != nil {
			return nil, fmt.Errorf("columns of %s: %w", name, err)
		}
		if err := sqliteRefs(ctx, tx, t); err != nil {
			return nil, fmt.Errorf("foreign keys of %s: %w", name, err)
		}
		tables = append(tables, t)
	}
	return tables, nil
}

func sqliteColumns(ctx context.Context, tx *sql.Tx, t *table) error {
	rows, err := tx.QueryContext(ctx, `SELECT name, type, "notnull", pk FROM pragma_table_info($1) ORDER BY cid`, t.name)
	if err != nil {
		return err
	}
	defer rows.Close()
	pk := map[int]string{}
	for rows.Next() {
		var c column
		var notNull, pkPos int
		if err := rows.Scan(&c.name, &c.decl, &notNull, &pkPos); err != nil {
			return err
		}
		c.notNull = notNull != 0
		c.kind = sqliteKind(c.decl)
		if pkPos > 0 {
			pk[pkPos] = c.name
		}
		t.columns = append(t.columns, c)
	}
	for i := 1; i <= len(pk); i++ {
		t.primaryKey = append(t.primaryKey, pk[i])
	}
	return rows.Err()
}

// sqliteKind maps a declared SQLite type to a kind, after SQLite's own
// affinity rules, with the names that mean booleans, times and JSON first.
// An unknown type maps to "" and export refuses the table.
func sqliteKind(decl string) columnKind {
	d := strings.ToUpper(decl)
	switch {
	case strings.Contains(d, "BOOL"):
		return kindBoolean
	case strings.Contains(d, "INT"):
		return kindInteger
	case strings.Contains(d, "JSON"):
		return kindJSON
	case strings.Contains(d, "CHAR"), strings.Contains(d, "CLOB"), strings.Contains(d, "TEXT"):
		return kindText
	case d == "", strings.Contains(d, "BLOB"):
		return kindBlob
	case strings.Contains(d, "REAL"), strings.Contains(d, "FLOA"), strings.Contains(d, "DOUB"):
		return kindReal
	case strings.Contains(d, "TIME"), strings.Contains(d, "DATE"):
		return kindTimestamp
	}
	return ""
}

func sqliteRefs(ctx context.Context, tx *sql.Tx, t *table) error {
	rows, err := tx.QueryContext(ctx, `SELECT "table", "from", COALESCE("to", ''), on_delete FROM pragma_foreign_key_list($1) ORDER BY id, seq`, t.name)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var r foreignKey
		var onDelete string
		if err := rows.Scan(&r.refTable, &r.col, &r.refCol, &onDelete); err != nil {
			return err
		}
		r.cascade = strings.EqualFold(onDelete, "CASCADE")
		t.refs = append(t.refs, r)
	}
	return rows.Err()
}

// postgresTables reads the schema of the PostgreSQL schema the connection
// uses (the first of its search_path).
func postgresTables(ctx context.Context, tx *sql.Tx) ([]*table, error) {
	names, err := queryStrings(ctx, tx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
	if err != nil {
		return nil, err
	}
	tables := make([]*table, 0, len(names))
	for _, name := range names {
		t := &table{name: name}
		if err := postgresColumns(ctx, tx, t); err != nil {
			return nil, fmt.Errorf("columns of %s: %w", name, err)
		}
		t.primaryKey, err = queryStrings(ctx, tx, `SELECT kcu.column_name
			FROM information_schema.table_constraints tc
			JOIN information_schema.key_column_usage kcu ON kcu.constraint_schema = tc.constraint_schema
				AND kcu.constraint_name = tc.constraint_name AND kcu.table_name = tc.table_name
			WHERE tc.table_schema = current_schema() AND tc.table_name = $1 AND tc.constraint_type = 'PRIMARY KEY'
			ORDER BY kcu.ordinal_position`, name)
		if err != nil {
			return nil, fmt.Errorf("primary key of %s: %w", name, err)
		}
		if err := postgresRefs(ctx, tx, t); err != nil {
			return nil, fmt.Errorf("foreign keys of %s: %w", name, err)
		}
		tables = append(tables, t)
	}
	return tables, nil
}

func postgresColumns(ctx context.Context, tx *sql.Tx, t *table) error {
	rows, err := tx.QueryContext(ctx, `SELECT column_name, data_type, is_nullable FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, t.name)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var c column
		var nullable string
		if err := rows.Scan(&c.name, &c.decl, &nullable); err != nil {
			return err
		}
		c.notNull = nullable == "NO"
		c.kind = postgresKind(c.decl)
		t.columns = append(t.columns, c)
	}
	return rows.Err()
}

// postgresKind maps a PostgreSQL data type (as information_schema names
// it) to a kind; an unknown type maps to "" and export refuses the table.
func postgresKind(dataType string) columnKind {
	switch dataType {
	case "bigint", "integer", "smallint":
		return kindInteger
	case "real", "double precision":
		return kindReal
	case "text", "character varying", "character", "uuid":
		return kindText
	case "bytea":
		return kindBlob
	case "boolean":
		return kindBoolean
	case "timestamp with time zone", "timestamp without time zone", "date":
		return kindTimestamp
	case "json", "jsonb":
		return kindJSON
	}
	return ""
}

func postgresRefs(ctx context.Context, tx *sql.Tx, t *table) error {
	rows, err := tx.QueryContext(ctx, `SELECT a.attname, rc.relname, ra.attname, con.confdeltype = 'c'
		FROM pg_constraint con
		JOIN pg_class c ON c.oid = con.conrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_class rc ON rc.oid = con.confrelid
		CROSS JOIN LATERAL unnest(con.conkey, con.confkey) AS k(col, refcol)
		JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.col
		JOIN pg_attribute ra ON ra.attrelid = con.confrelid AND ra.attnum = k.refcol
		WHERE con.contype = 'f' AND n.nspname = current_schema() AND c.relname = $1
		ORDER BY con.conname, a.attnum`, t.name)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var r foreignKey
		if err := rows.Scan(&r.col, &r.refTable, &r.refCol, &r.cascade); err != nil {
			return err
		}
		t.refs = append(t.refs, r)
	}
	return rows.Err()
}

// queryStrings returns the first column of every row.
func queryStrings(ctx context.Context, tx *sql.Tx, q string, args ...any) ([]string, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return scanStrings(rows)
}
