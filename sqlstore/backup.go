package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrSQLiteInUse means that another connection, in this process or
// another (a running server), has the SQLite database open.
var ErrSQLiteInUse = errors.New("the database is in use (a server is running on it)")

// SQLiteFileInfo describes a SQLite database file that is not open: what
// a backup or a restore checks before it keeps the file.
type SQLiteFileInfo struct {
	// Migrations are the names of the migrations applied to it, in order.
	Migrations []string
	// SealedKeyIDs are the ids of the keys its sealed secrets were sealed
	// with (seal.KeyID), sorted: without them, a server refuses to start
	// on it.
	SealedKeyIDs []string
}

// BackupSQLite writes a consistent copy of the SQLite database at src to
// dst with VACUUM INTO: one read transaction, so that a server may keep
// writing to src meanwhile (in WAL mode neither waits for the other), and
// the copy holds every transaction committed before it began and none
// after. dst must not exist or be empty. The copy is checked
// (InspectSQLite) before BackupSQLite returns what it found.
func BackupSQLite(ctx context.Context, src, dst string) (*SQLiteFileInfo, error) {
	if _, err := os.Stat(src); err != nil {
		return nil, fmt.Errorf("back up %s: %w", src, err)
	}
	db, err := sql.Open("sqlite", sqliteDSN(src, url.Values{"_pragma": {"busy_timeout(10000)"}}, ""))
	if err != nil {
		return nil, fmt.Errorf("back up %s: %w", src, err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `VACUUM INTO $1`, dst); err != nil {
		return nil, fmt.Errorf("back up %s: %w", src, err)
	}
	return InspectSQLite(ctx, dst)
}

// InspectSQLite checks the SQLite database file at path (a quick integrity
// check, and that it is a Switchboard database: it has migrations) and
// reads what a backup records of it. The file must not be in use: it is
// opened alone, and its journal is left as it was found.
func InspectSQLite(ctx context.Context, path string) (*SQLiteFileInfo, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("inspect %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", sqliteDSN(path, url.Values{"_pragma": {"query_only(1)"}}, ""))
	if err != nil {
		return nil, fmt.Errorf("inspect %s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var check string
	if err := db.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&check); err != nil {
		return nil, fmt.Errorf("inspect %s: not a SQLite database: %w", path, err)
	}
	if check != "ok" {
		return nil, fmt.Errorf("inspect %s: the database is damaged: %s", path, check)
	}
	info := &SQLiteFileInfo{}
	rows, err := db.QueryContext(ctx, `SELECT name FROM `+migrationsTable+` ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("inspect %s: not a Switchboard database: %w", path, err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return nil, fmt.Errorf("inspect %s: %w", path, err)
		}
		info.Migrations = append(info.Migrations, name)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("inspect %s: %w", path, err)
	}
	if len(info.Migrations) == 0 {
		return nil, fmt.Errorf("inspect %s: not a Switchboard database: no migrations applied", path)
	}
	if info.SealedKeyIDs, err = sealedKeyIDs(ctx, db); err != nil {
		return nil, fmt.Errorf("inspect %s: %w", path, err)
	}
	return info, nil
}

// sealedKeyIDs reads the ids of the keys that sealed the values of every
// sealed column ("sb1.<key id>.<sealed>"), sorted.
func sealedKeyIDs(ctx context.Context, db *sql.DB) ([]string, error) {
	var ids []string
	for _, c := range sealedColumns {
		rows, err := db.QueryContext(ctx, `SELECT DISTINCT substr(`+c.column+`, 5, instr(substr(`+c.column+`, 5), '.') - 1) FROM `+
			c.table+` WHERE substr(`+c.column+`, 1, 4) = 'sb1.' AND instr(substr(`+c.column+`, 5), '.') > 1`)
		if err != nil {
			return nil, fmt.Errorf("read the keys of %s.%s: %w", c.table, c.column, err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, err
			}
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, err
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// SQLiteLock holds a SQLite database file for one process alone: no server
// can open it while the lock is held.
type SQLiteLock struct {
	db   *sql.DB
	conn *sql.Conn
	path string
}

// LockSQLite takes the SQLite database at path for this caller alone, in
// SQLite's exclusive locking mode. It fails at once with an error wrapping
// ErrSQLiteInUse when any other connection has the database open: every
// connection of a server in WAL mode holds a shared lock on the file for as
// long as it is open, so a running server is found whether it is busy or
// idle, in this process or another. The file must exist.
func LockSQLite(ctx context.Context, path string) (*SQLiteLock, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", sqliteDSN(path, url.Values{"_pragma": {"locking_mode(EXCLUSIVE)", "busy_timeout(0)"}}, ""))
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err == nil {
		// A write transaction takes the exclusive lock, which exclusive
		// locking mode keeps after it ends.
		_, err = conn.ExecContext(ctx, `BEGIN EXCLUSIVE`)
		if err == nil {
			_, err = conn.ExecContext(ctx, `COMMIT`)
		}
	}
	if err != nil {
		if conn != nil {
			_ = conn.Close()
		}
		_ = db.Close()
		if isBusy(err) {
			return nil, fmt.Errorf("%s: %w", path, ErrSQLiteInUse)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &SQLiteLock{db: db, conn: conn, path: path}, nil
}

// Checkpoint copies the database's write-ahead log into it and empties
// the log, so that nothing of the database is left outside its file. It
// reports an error if the log is not empty afterwards.
func (l *SQLiteLock) Checkpoint(ctx context.Context) error {
	if _, err := l.conn.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return fmt.Errorf("checkpoint %s: %w", l.path, err)
	}
	if fi, err := os.Stat(l.path + "-wal"); err == nil && fi.Size() > 0 {
		return fmt.Errorf("checkpoint %s: its write-ahead log still holds %d bytes", l.path, fi.Size())
	}
	return nil
}

// Close releases the lock. It is safe to call more than once.
func (l *SQLiteLock) Close() error {
	if l.conn == nil {
		return nil
	}
	err := errors.Join(l.conn.Close(), l.db.Close())
	l.conn = nil
	if err != nil {
		return fmt.Errorf("release %s: %w", l.path, err)
	}
	return nil
}

// isBusy reports whether err is SQLite's "database is locked".
func isBusy(err error) bool {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code()&0xff == sqlite3.SQLITE_BUSY || e.Code()&0xff == sqlite3.SQLITE_LOCKED
	}
	return strings.Contains(err.Error(), "database is locked")
}
