package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLiteOptions tune a SQLite store; the zero value is the default.
type SQLiteOptions struct {
	// SyncFull syncs the write-ahead log at every commit
	// (synchronous=FULL): an acknowledged write survives a power loss or an
	// operating system crash. By default (synchronous=NORMAL) the log is
	// synced at each checkpoint: a process that is killed loses nothing,
	// but a power loss may lose the commits since the last checkpoint
	// (never the database's consistency). Commits are grouped
	// (groupcommit.go), so one sync serves every commit of a group.
	SyncFull bool
}

// OpenSQLite opens (creating if needed) the SQLite database file at path in
// WAL mode and applies the migrations, with the default options.
func OpenSQLite(ctx context.Context, path string) (*DB, error) {
	return OpenSQLiteWith(ctx, path, SQLiteOptions{})
}

// OpenSQLiteWith opens (creating if needed) the SQLite database file at
// path in WAL mode and applies the migrations. Writes use one connection
// with immediate transactions, so read-modify-write sequences never
// deadlock; reads use a pool of read-only connections.
//
// The file is created readable by its owner only: it holds every message.
// An in-memory database is refused, because the writer and the readers
// would each get a database of their own.
func OpenSQLiteWith(ctx context.Context, path string, opts SQLiteOptions) (*DB, error) {
	if path == "" || strings.HasPrefix(path, ":memory:") || strings.Contains(path, "mode=memory") {
		return nil, fmt.Errorf("open sqlite: %q is not a file path (in-memory databases are not supported)", path)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	_ = f.Close()
	pragmas := url.Values{}
	sync := "synchronous(NORMAL)"
	if opts.SyncFull {
		sync = "synchronous(FULL)"
	}
	for _, p := range []string{"journal_mode(WAL)", sync, "busy_timeout(10000)", "foreign_keys(ON)", "temp_store(MEMORY)"} {
		pragmas.Add("_pragma", p)
	}
	writer := url.Values{"_pragma": append([]string{fmt.Sprintf("wal_autocheckpoint(%d)", writerCheckpointPages)}, pragmas["_pragma"]...)}
	// The writer writes each commit's WAL frames at once (walbuffer.go).
	if err := registerWALVFS(); err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	w, err := openSQLite(sqliteDSN(path, writer, "_txlock=immediate&vfs="+walVFSName))
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)

	db := &DB{
		write: w,
		dialect: dialect{
			name:            "sqlite",
			uniqueViolation: sqliteUniqueViolation,
		},
		Now:        time.Now,
		tasks:      newTaskCache(),
		identities: newIdentityCache(),
		path:       path,
	}
	// The writer creates the file and switches it to WAL before readers open.
	if err := w.PingContext(ctx); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, db.checkWrite(err))
	}
	committed := make(chan struct{}, 1)
	db.group = newGroupCommitter(w, db.formatError, committed)
	if err := db.migrate(ctx); err != nil {
		db.group.close()
		_ = w.Close()
		return nil, db.checkWrite(err)
	}

	ck, err := openSQLite(sqliteDSN(path, pragmas, ""))
	if err != nil {
		db.group.close()
		_ = w.Close()
		return nil, fmt.Errorf("open sqlite %s for checkpoints: %w", path, err)
	}
	db.checkpoints = startCheckpointer(ck, committed, db.group.restart)

	pragmas.Add("_pragma", "query_only(1)")
	r, err := openSQLite(sqliteDSN(path, pragmas, ""))
	if err != nil {
		db.group.close()
		_ = w.Close()
		_ = db.checkpoints.close()
		return nil, fmt.Errorf("open sqlite %s for reading: %w", path, err)
	}
	r.SetMaxOpenConns(max(4, runtime.GOMAXPROCS(0)*2))
	r.SetMaxIdleConns(max(4, runtime.GOMAXPROCS(0)*2))
	db.read = r
	return db, nil
}

// openSQLite returns a pool of SQLite connections that keep their prepared
// statements (stmtcache.go).
func openSQLite(dsn string) (*sql.DB, error) {
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(&cachingConnector{base: c}), nil
}

// sqliteDSN builds a file: URI for path, escaped so that characters such as
// '#' and '?' in a directory name stay part of the path.
func sqliteDSN(path string, pragmas url.Values, extra string) string {
	q := pragmas.Encode()
	if extra != "" {
		q += "&" + extra
	}
	return (&url.URL{Scheme: "file", Opaque: (&url.URL{Path: path}).EscapedPath(), RawQuery: q}).String()
}

func sqliteUniqueViolation(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}
