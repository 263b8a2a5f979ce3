package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

//go:embed migrations
var migrations embed.FS

// DB is the Store on database/sql. It implements every store interface of
// the root package. Writes go through one pool and reads through another, so
// that SQLite's single writer never waits behind readers.
type DB struct {
	write   *sql.DB
	read    *sql.DB
	dialect dialect
	group   *groupCommitter // SQLite: the writer that commits transactions in groups

	checkpoints *checkpointer     // SQLite: copies the WAL into the database off the write path
	tasks       *taskCache        // SQLite: the tasks this process wrote last (nil: none kept)
	identities  *identityCache    // agents, tokens and communities that requests look up (nil: none kept)
	listener    *identityListener // PostgreSQL: hears other instances' identity changes

	// Now returns the current time for stored timestamps; tests may replace it.
	Now func() time.Time

	// OnTaskState, if set, is called after each committed change of a
	// task's state, with the state before ("" for a new task) and after,
	// for metrics: every task change goes through CreateTask or ModifyTask.
	// It runs on the caller's goroutine and must return at once. Set it
	// before the store is used.
	OnTaskState func(from, to a2a.TaskState)

	// OnWrite, if set, is called after each write transaction, committed
	// or not, with how long its caller waited for it (on SQLite, the wait
	// for its group's commit included), for metrics. It runs on the
	// caller's goroutine and must return at once. Set it before the store
	// is used.
	OnWrite func(time.Duration)

	// Secrets seals the secrets the store keeps for the server to send
	// later, and opens them when read (secrets.go); nil keeps them as they
	// are. Set it before the store is used.
	Secrets Sealer

	path string    // SQLite: the database file; "" on PostgreSQL
	full fullState // the last write that failed for want of space (full.go)

	// modesFilled is when fillDeliveryModes last looked (Unix nanoseconds).
	modesFilled atomic.Int64

	closeOnce sync.Once
}

// dialect holds what differs between database engines. The SQL text is
// otherwise the same for all of them.
type dialect struct {
	name            string // directory of its migrations
	rowLocks        bool   // false where a write transaction already locks the whole database (SQLite)
	migrationLock   string // statement that serialises migrations between instances, "" if none is needed
	uniqueViolation func(error) bool
	identityNotify  string // statement that tells other instances, on commit, that identities changed ("" if none share the database)
}

// forUpdate is the suffix of a SELECT that reads rows (of the table alias
// of, or all tables when of is "") to change them in the same transaction.
func (db *DB) forUpdate(of string) string { return db.lock("FOR UPDATE", of, "") }

// forShare is the suffix of a SELECT whose rows must not change or vanish
// before the transaction ends.
func (db *DB) forShare(of string) string { return db.lock("FOR SHARE", of, "") }

// forClaim is the suffix of a SELECT that picks queue rows to claim: rows
// another transaction is claiming are skipped, not waited for.
func (db *DB) forClaim(of string) string { return db.lock("FOR UPDATE", of, " SKIP LOCKED") }

func (db *DB) lock(mode, of, wait string) string {
	if !db.dialect.rowLocks {
		return ""
	}
	if of != "" {
		mode += " OF " + of
	}
	return " " + mode + wait
}

var _ switchboard.Store = (*DB)(nil)

// Close closes the database. It is safe to call more than once.
func (db *DB) Close() error {
	var err error
	db.closeOnce.Do(func() {
		if db.group != nil {
			db.group.close()
		}
		if db.listener != nil {
			db.listener.close()
		}
		err = errors.Join(db.write.Close(), db.read.Close())
		if db.checkpoints != nil {
			err = errors.Join(err, db.checkpoints.close())
		}
	})
	return err
}

// migrate applies every embedded migration of the dialect that is not yet
// recorded, in file name order, each in its own transaction. A file is
// applied by name, not by "everything above the highest number", so a
// migration added later with a lower number still runs.
func (db *DB) migrate(ctx context.Context) error {
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := db.lockMigrations(ctx, tx); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			name TEXT PRIMARY KEY,
			applied_at BIGINT NOT NULL
		)`)
		return err
	})
	if err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	dir := "migrations/" + db.dialect.name
	entries, err := fs.ReadDir(migrations, dir)
	if err != nil {
		return fmt.Errorf("read migrations: %w", err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sql") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, name := range names {
		body, err := fs.ReadFile(migrations, dir+"/"+name)
		if err != nil {
			return fmt.Errorf("read migration %s: %w", name, err)
		}
		if err := db.applyMigration(ctx, name, string(body)); err != nil {
			return fmt.Errorf("apply migration %s: %w", name, err)
		}
	}
	return nil
}

func (db *DB) applyMigration(ctx context.Context, name, body string) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := db.lockMigrations(ctx, tx); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE name = $1`, name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		if _, err := tx.ExecContext(ctx, body); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (name, applied_at) VALUES ($1, $2)`, name, nanos(db.Now()))
		return err
	})
}

// lockMigrations waits until no other instance migrates, for the rest of
// the transaction.
func (db *DB) lockMigrations(ctx context.Context, tx *sql.Tx) error {
	if db.dialect.migrationLock == "" {
		return nil
	}
	_, err := tx.ExecContext(ctx, db.dialect.migrationLock)
	return err
}

// inTx runs fn in a write transaction and commits it if fn returns nil.
// fn must run its statements with the context it is given. On SQLite the
// transaction may be committed together with others (groupcommit.go).
//
// A transaction that failed for want of space returns a *FullError
// (checkWrite), so that callers answer "storage full" rather than an
// internal error.
func (db *DB) inTx(ctx context.Context, fn func(context.Context, *sql.Tx) error) error {
	if db.OnWrite != nil {
		defer db.timeWrite(time.Now())
	}
	if db.group != nil {
		return db.checkWrite(db.group.run(ctx, fn))
	}
	return db.checkWrite(db.runTx(ctx, fn))
}

// timeWrite hands OnWrite the time since a write began.
func (db *DB) timeWrite(began time.Time) { db.OnWrite(time.Since(began)) }

// runTx runs fn in a transaction of the write pool and commits it.
func (db *DB) runTx(ctx context.Context, fn func(context.Context, *sql.Tx) error) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return db.formatError(err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(ctx, tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return db.formatError(err)
	}
	return nil
}

// formatError maps driver errors that callers branch on to root error codes.
func (db *DB) formatError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sql.ErrNoRows):
		return switchboard.Errorf(switchboard.ENOTFOUND, "not found")
	case errors.Is(err, sql.ErrConnDone), strings.Contains(err.Error(), "sql: database is closed"):
		return switchboard.ErrStoreClosed
	}
	return db.checkWrite(err)
}

// nanos converts a time to the stored form: Unix nanoseconds.
func nanos(t time.Time) int64 { return t.UnixNano() }

// fromNanos converts a stored time back, in UTC.
func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

// nullNanos converts a nullable stored time back.
func nullNanos(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromNanos(n.Int64)
	return &t
}

// nullableNanos converts a time that may be missing to its stored form.
func nullableNanos(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: nanos(*t), Valid: true}
}

// boolInt is how booleans are stored: as 0 or 1 on every engine.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// where builds a conjunction of conditions with numbered placeholders.
type where struct {
	conds []string
	args  []any
}

// add appends a condition; each "?" in cond becomes the next $n.
func (w *where) add(cond string, args ...any) {
	for _, a := range args {
		w.args = append(w.args, a)
		cond = strings.Replace(cond, "?", fmt.Sprintf("$%d", len(w.args)), 1)
	}
	w.conds = append(w.conds, cond)
}

// arg appends an argument and returns its placeholder, for SQL outside the
// conditions.
func (w *where) arg(a any) string {
	w.args = append(w.args, a)
	return fmt.Sprintf("$%d", len(w.args))
}

// placeholders appends values to w's arguments and returns their
// placeholders, "$k, $k+1, …", for an IN list.
func placeholders[T ~string](w *where, values []T) string {
	var b strings.Builder
	for i, v := range values {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(w.arg(string(v)))
	}
	return b.String()
}

// String returns the WHERE clause, or "" when there are no conditions.
func (w *where) String() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// changedRow returns none when res, of a statement that changes the row a
// key names, changed no row: the row is not there, or not in the state
// the statement asks for. It returns the driver's error if it cannot say.
func changedRow(res sql.Result, none error) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return none
	}
	return nil
}
