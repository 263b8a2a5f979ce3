package sqlstore

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/switchboard-dev/switchboard"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// FullWindow is how long after a PostgreSQL write failed for want of
// space the store reports itself full (Ping): a deployment whose writes
// fail stops taking work (its /readyz answers 503) without being
// restarted. On SQLite the store looks at the disk itself instead.
const FullWindow = 30 * time.Second

// lowSpace is the free space on the SQLite file's file system below which
// an I/O error is taken for a full disk (SQLite reports a write that found
// no room as SQLITE_FULL, but the shared-memory index of the WAL as
// SQLITE_IOERR_SHMSIZE and a sync as SQLITE_IOERR_FSYNC), and below which
// a store whose write failed for want of space still reports itself full.
const lowSpace = 1 << 20

// FullError is the error of a write that failed for want of space: on the
// disk of the SQLite file, or PostgreSQL's (SQLSTATE 53100). It is
// switchboard.ErrStorageFull to callers (errors.Is), which the edges answer
// with 503 and Retry-After, and it keeps the driver's error for the log.
type FullError struct {
	// Where names the storage: the SQLite file's directory, or
	// "PostgreSQL".
	Where string
	// Free is the free space found on Where's file system, in bytes; -1
	// when unknown (PostgreSQL).
	Free int64
	// Err is the driver's error.
	Err error
}

// Error implements error; it names the cause, as the log and a failed start
// show it.
func (e *FullError) Error() string {
	free := ""
	if e.Free >= 0 {
		free = fmt.Sprintf(", %s free", byteCount(e.Free))
	}
	return fmt.Sprintf("storage full: no space left on the device of %s%s; free space and the writes succeed again (%v)", e.Where, free, e.Err)
}

// Unwrap returns the driver's error and switchboard.ErrStorageFull.
func (e *FullError) Unwrap() []error { return []error{switchboard.ErrStorageFull, e.Err} }

// fullState remembers the last write that failed for want of space.
type fullState struct {
	mu  sync.Mutex
	at  time.Time  // guarded by mu: when it failed
	err *FullError // guarded by mu: nil when none did, or room was found since (SQLite)
}

// checkWrite returns err as a *FullError if it says the storage is out of
// space, and remembers it for Ping; any other error is returned as it is.
func (db *DB) checkWrite(err error) error {
	if err == nil {
		return nil
	}
	full := db.asFull(err)
	if full == nil {
		return err
	}
	db.full.mu.Lock()
	db.full.at, db.full.err = db.Now(), full
	db.full.mu.Unlock()
	return full
}

// storageFull returns the error of the last write that failed for want of
// space while the storage is still full, nil otherwise. On SQLite it looks
// at the disk: it is full while less than lowSpace is free (and forgets the
// failure once there is more). On PostgreSQL, whose disk it cannot see, it
// is full for FullWindow after the failure.
func (db *DB) storageFull() error {
	db.full.mu.Lock()
	defer db.full.mu.Unlock()
	if db.full.err == nil {
		return nil
	}
	if db.path == "" {
		if db.Now().Sub(db.full.at) > FullWindow {
			return nil
		}
		return db.full.err
	}
	free, ok := freeSpace(filepath.Dir(db.path))
	if ok && free >= lowSpace {
		db.full.err = nil // room was made: writes will tell if it was enough
		return nil
	}
	full := *db.full.err
	if ok {
		full.Free = free
	}
	return &full
}

// asFull returns err as a *FullError if it says the storage is out of
// space, or nil.
func (db *DB) asFull(err error) *FullError {
	var full *FullError
	if errors.As(err, &full) {
		return full
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "53100" { // disk_full
		return &FullError{Where: "PostgreSQL", Free: -1, Err: err}
	}
	if db.path == "" {
		return nil
	}
	dir := filepath.Dir(db.path)
	var se *sqlite.Error
	switch {
	case errors.Is(err, syscall.ENOSPC):
	case errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL:
	case errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_IOERR:
		if free, ok := freeSpace(dir); !ok || free >= lowSpace {
			return nil // an I/O error on a disk with room is something else
		}
	default:
		return nil
	}
	free, ok := freeSpace(dir)
	if !ok {
		free = -1
	}
	return &FullError{Where: dir, Free: free, Err: err}
}

// byteCount writes n bytes for a person: 512 B, 3.2 MiB.
func byteCount(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
