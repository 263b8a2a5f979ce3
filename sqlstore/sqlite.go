package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// OpenSQLite opens (creating if needed) the SQLite database file at path in
// WAL mode and applies the migrations. Writes use one connection with
// immediate transactions, so read-modify-write sequences never deadlock;
// reads use a pool of read-only connections.
func OpenSQLite(ctx context.Context, path string) (*DB, error) {
	pragmas := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "synchronous(NORMAL)", "busy_timeout(10000)", "foreign_keys(ON)"} {
		pragmas.Add("_pragma", p)
	}
	writeDSN := "file:" + path + "?" + pragmas.Encode() + "&_txlock=immediate"
	w, err := sql.Open("sqlite", writeDSN)
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
		Now: time.Now,
	}
	// The writer creates the file and switches it to WAL before readers open.
	if err := w.PingContext(ctx); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	if err := db.migrate(ctx); err != nil {
		_ = w.Close()
		return nil, err
	}

	pragmas.Add("_pragma", "query_only(1)")
	r, err := sql.Open("sqlite", "file:"+path+"?"+pragmas.Encode())
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("open sqlite %s for reading: %w", path, err)
	}
	r.SetMaxOpenConns(max(4, runtime.GOMAXPROCS(0)*2))
	r.SetMaxIdleConns(max(4, runtime.GOMAXPROCS(0)*2))
	db.read = r
	return db, nil
}

func sqliteUniqueViolation(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// Ping reports whether the database answers.
func (db *DB) Ping(ctx context.Context) error {
	return db.read.PingContext(ctx)
}
