package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// ImportOptions changes what Import accepts.
type ImportOptions struct {
	// Replace deletes every row of the database (but the bookkeeping of
	// migrations) before the import, in the same transaction. Without it,
	// a database that holds any data is refused.
	Replace bool
}

// ErrNotEmpty is wrapped by Import's error when the database already holds
// data and ImportOptions.Replace is not set.
var ErrNotEmpty = errors.New("the database is not empty")

// Import loads an export (Export's format) from r into the database, in
// one transaction: either every row of the file is written, or (on any
// error: a damaged, truncated or unknown file, a row the schema refuses)
// nothing is. The file's tables and columns must exist in this database
// and its migrations must all have been applied here (a file from an older
// version imports; columns it lacks take their defaults). Values are
// converted where the engines keep the same data differently. It returns
// the rows written per table.
func (db *DB) Import(ctx context.Context, r io.Reader, opts ImportOptions) (map[string]int64, error) {
	dr, err := newDumpReader(r)
	if err != nil {
		return nil, err
	}
	var counts map[string]int64
	err = db.writeIdentities(ctx, func(ctx context.Context, tx *sql.Tx) error {
		im := &importer{db: db, tx: tx, dr: dr}
		if err := im.prepare(ctx, opts); err != nil {
			return err
		}
		if err := im.copyRows(ctx); err != nil {
			return err
		}
		if err := im.rebuildPeerUsage(ctx); err != nil {
			return err
		}
		if err := im.advanceSequences(ctx); err != nil {
			return err
		}
		counts = dr.counts
		return nil
	})
	if err != nil {
		return nil, err
	}
	return counts, nil
}

// importer is one import in progress, inside its transaction.
type importer struct {
	db     *DB
	tx     *sql.Tx
	dr     *dumpReader
	tables map[string]*table       // this database's tables
	stmts  map[string]*sql.Stmt    // an INSERT per table of the file
	kinds  map[string][]columnKind // per table of the file: the kinds of this database's columns
}

// prepare checks the file's header against this database, and that the
// database is empty (or empties it).
func (im *importer) prepare(ctx context.Context, opts ImportOptions) error {
	tables, err := im.db.schemaTables(ctx, im.tx)
	if err != nil {
		return err
	}
	im.tables = map[string]*table{}
	for _, t := range tables {
		im.tables[t.name] = t
	}
	if err := im.checkMigrations(ctx); err != nil {
		return err
	}
	if err := im.checkTables(); err != nil {
		return err
	}
	if opts.Replace {
		return im.deleteAll(ctx, tables)
	}
	return im.checkEmpty(ctx, tables)
}

func (im *importer) checkMigrations(ctx context.Context) error {
	applied, err := queryStrings(ctx, im.tx, `SELECT name FROM `+migrationsTable)
	if err != nil {
		return fmt.Errorf("read migrations: %w", err)
	}
	for _, m := range im.dr.header.Migrations {
		if !slices.Contains(applied, m) {
			return fmt.Errorf("%w: the file comes from a newer switchboard: its database had migration %s, which this one lacks; import with that version or later", ErrBadDump, m)
		}
	}
	return nil
}

func (im *importer) checkTables() error {
	im.kinds = map[string][]columnKind{}
	for _, ft := range im.dr.header.Tables {
		if _, skip := excludedTables[ft.Name]; skip {
			return fmt.Errorf("%w: the file holds table %s, which is never exported", ErrBadDump, ft.Name)
		}
		t := im.tables[ft.Name]
		if t == nil {
			return fmt.Errorf("%w: the file holds table %s, which this database does not have", ErrBadDump, ft.Name)
		}
		kinds := make([]columnKind, len(ft.Columns))
		for i, fc := range ft.Columns {
			c := t.column(fc.Name)
			if c == nil {
				return fmt.Errorf("%w: the file holds column %s.%s, which this database does not have", ErrBadDump, ft.Name, fc.Name)
			}
			if c.kind == "" || !convertible(fc.Type, c.kind) {
				return fmt.Errorf("%w: column %s.%s is %s in the file and %s here", ErrBadDump, ft.Name, fc.Name, fc.Type, c.decl)
			}
			kinds[i] = c.kind
		}
		im.kinds[ft.Name] = kinds
	}
	return nil
}

// checkEmpty refuses a database in which any table that export covers
// holds a row.
func (im *importer) checkEmpty(ctx context.Context, tables []*table) error {
	for _, t := range tables {
		if _, skip := excludedTables[t.name]; skip {
			continue
		}
		var one int
		err := im.tx.QueryRowContext(ctx, `SELECT 1 FROM `+quoteIdent(t.name)+` LIMIT 1`).Scan(&one)
		if err == nil {
			return fmt.Errorf("%w: table %s holds rows; import into a new database, or pass --replace to delete everything in it first", ErrNotEmpty, t.name)
		}
		if err != sql.ErrNoRows {
			return err
		}
	}
	return nil
}

// deleteAll empties every table but the bookkeeping of migrations,
// children before the tables they reference.
func (im *importer) deleteAll(ctx context.Context, tables []*table) error {
	for _, t := range slices.Backward(tables) {
		if t.name == migrationsTable {
			continue
		}
		if _, err := im.tx.ExecContext(ctx, `DELETE FROM `+quoteIdent(t.name)); err != nil {
			return fmt.Errorf("empty %s: %w", t.name, err)
		}
	}
	return nil
}

// copyRows inserts every row of the file, in the file's order (tables
// after those they reference, as Export wrote them).
func (im *importer) copyRows(ctx context.Context) error {
	if !im.db.dialect.rowLocks { // SQLite: check foreign keys at commit
		if _, err := im.tx.ExecContext(ctx, `PRAGMA defer_foreign_keys = ON`); err != nil {
			return err
		}
	}
	im.stmts = map[string]*sql.Stmt{}
	defer func() {
		for _, s := range im.stmts {
			_ = s.Close()
		}
	}()
	for {
		ft, values, err := im.dr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		stmt, err := im.insert(ctx, ft)
		if err != nil {
			return err
		}
		kinds := im.kinds[ft.Name]
		for i, c := range ft.Columns {
			if values[i], err = convertValue(values[i], c.Type, kinds[i]); err != nil {
				return fmt.Errorf("%w: line %d: table %s, column %s: %v", ErrBadDump, im.dr.record, ft.Name, c.Name, err)
			}
		}
		if _, err := stmt.ExecContext(ctx, values...); err != nil {
			return fmt.Errorf("line %d: insert into %s: %w", im.dr.record, ft.Name, err)
		}
	}
}

// insert returns the INSERT statement of a table of the file.
func (im *importer) insert(ctx context.Context, ft *dumpTable) (*sql.Stmt, error) {
	if s := im.stmts[ft.Name]; s != nil {
		return s, nil
	}
	cols := make([]string, len(ft.Columns))
	params := make([]string, len(ft.Columns))
	for i, c := range ft.Columns {
		cols[i] = quoteIdent(c.Name)
		params[i] = fmt.Sprintf("$%d", i+1)
	}
	s, err := im.tx.PrepareContext(ctx, `INSERT INTO `+quoteIdent(ft.Name)+` (`+strings.Join(cols, ", ")+`) VALUES (`+strings.Join(params, ", ")+`)`)
	if err != nil {
		return nil, fmt.Errorf("prepare insert into %s: %w", ft.Name, err)
	}
	im.stmts[ft.Name] = s
	return s, nil
}

// rebuildPeerUsage makes the peers' counts of their unfinished tasks
// (peer_usage, which export leaves out) from the tasks imported.
func (im *importer) rebuildPeerUsage(ctx context.Context) error {
	if _, err := im.tx.ExecContext(ctx, rebuildPeerUsageSQL); err != nil {
		return fmt.Errorf("count peer usage: %w", err)
	}
	return nil
}

// advanceSequences moves each PostgreSQL sequence that feeds a column
// (serial or identity) past the largest imported value, so that rows
// added later do not collide with imported ones. SQLite keeps its
// counters up to date by itself.
func (im *importer) advanceSequences(ctx context.Context) error {
	if !im.db.dialect.rowLocks {
		return nil
	}
	for _, ft := range im.dr.header.Tables {
		for i, c := range ft.Columns {
			if im.kinds[ft.Name][i] != kindInteger {
				continue
			}
			var seq sql.NullString
			if err := im.tx.QueryRowContext(ctx, `SELECT pg_get_serial_sequence($1, $2)`, quoteIdent(ft.Name), c.Name).Scan(&seq); err != nil {
				return fmt.Errorf("sequence of %s.%s: %w", ft.Name, c.Name, err)
			}
			if !seq.Valid {
				continue
			}
			q := `SELECT setval($1, COALESCE(MAX(` + quoteIdent(c.Name) + `), 0) + 1, false) FROM ` + quoteIdent(ft.Name)
			if _, err := im.tx.ExecContext(ctx, q, seq.String); err != nil {
				return fmt.Errorf("advance sequence of %s.%s: %w", ft.Name, c.Name, err)
			}
		}
	}
	return nil
}
