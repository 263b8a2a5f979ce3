package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// walStats returns the writes that reached the WAL of the database at path
// through the writer's connection, and those of them made in place.
func walStats(path string) (writes, inPlace int64) {
	walVFS.mu.Lock()
	defer walVFS.mu.Unlock()
	for _, f := range walVFS.files {
		if f.name == path+"-wal" {
			writes += f.writes.Load()
			inPlace += f.inPlace.Load()
		}
	}
	return writes, inPlace
}

// crashCopy copies the database at path and its WAL as the file system
// holds them now, without the shared-memory index, and opens the copy with
// SQLite's own VFS: what a process killed at this instant leaves, recovered
// from the WAL as SQLite recovers it (up to its last whole commit).
func crashCopy(t *testing.T, path string) *sql.DB {
	t.Helper()
	dir := t.TempDir()
	for _, suffix := range []string{"", "-wal"} {
		src, err := os.Open(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		dst, err := os.Create(filepath.Join(dir, "copy.db"+suffix))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(dst, src); err != nil {
			t.Fatal(err)
		}
		_ = src.Close()
		if err := dst.Close(); err != nil {
			t.Fatal(err)
		}
	}
	c, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "copy.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	var ok string
	if err := c.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("the copy's integrity check: %q, %v", ok, err)
	}
	return c
}

// TestWALCommitsAreOnTheFile: the writer gathers a commit's WAL frames and
// writes them at once, and what a commit wrote is on the file when it
// returns (a copy taken then holds it, checksums and all), whether it is
// small, larger than the page cache (pages written to the WAL before the
// commit, read back, written again in place, their checksums rewritten),
// or the first of a WAL that starts over.
func TestWALCommitsAreOnTheFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wal.db")
	db, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	StopCheckpoints(db)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.write.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	count := func(c *sql.DB, q string) int {
		t.Helper()
		var n int
		if err := c.QueryRow(q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	exec(`CREATE TABLE wb (k INTEGER PRIMARY KEY, v TEXT NOT NULL)`)

	// Small commits: one write each, on the file when they return.
	for i := range 5 {
		before, _ := walStats(path)
		exec(`INSERT INTO wb VALUES (?, ?)`, i, strings.Repeat("a", 100))
		if after, _ := walStats(path); after-before != 1 {
			t.Errorf("commit %d: %d writes to the WAL, want 1", i, after-before)
		}
		if n := count(crashCopy(t, path), `SELECT COUNT(*) FROM wb`); n != i+1 {
			t.Fatalf("after commit %d the copy holds %d rows", i, n)
		}
	}

	// A transaction larger than the page cache: pages go to the WAL
	// before the commit, are read back and written again in place.
	exec(`PRAGMA cache_size = 10`)
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 5; i < 505; i++ {
		if _, err := tx.ExecContext(ctx, `INSERT INTO wb VALUES (?, ?)`, i, strings.Repeat("b", 2000)); err != nil {
			t.Fatal(err)
		}
	}
	var sum int
	if err := tx.QueryRowContext(ctx, `SELECT SUM(length(v)) FROM wb WHERE k >= 5 AND v = lower(v)`).Scan(&sum); err != nil || sum != 500*2000 {
		t.Fatalf("the transaction reads back %d bytes of what it wrote, want %d (%v)", sum, 500*2000, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE wb SET v = upper(v) WHERE k >= 5`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, inPlace := walStats(path); inPlace == 0 {
		t.Fatal("the large transaction wrote no page in place: the test does not test that")
	}
	c := crashCopy(t, path)
	if n := count(c, `SELECT COUNT(*) FROM wb`); n != 505 {
		t.Fatalf("after the large commit the copy holds %d rows, want 505", n)
	}
	if n := count(c, `SELECT COUNT(*) FROM wb WHERE k >= 5 AND v <> upper(v)`); n != 0 {
		t.Fatalf("after the large commit the copy holds %d rows as they were before the update", n)
	}
	if n := count(db.read, `SELECT COUNT(*) FROM wb WHERE k >= 5 AND v = upper(v)`); n != 500 {
		t.Fatalf("a reader sees %d updated rows, want 500", n)
	}

	// A checkpoint that lets the WAL start over: the next commit writes
	// the WAL's header at its start, syncs it, and its frames are still
	// gathered, although they overwrite the old ones.
	exec(`PRAGMA cache_size = -2000`)
	exec(`PRAGMA wal_checkpoint(RESTART)`)
	before, _ := walStats(path)
	exec(`INSERT INTO wb VALUES (?, ?)`, 505, strings.Repeat("c", 100))
	if after, _ := walStats(path); after-before != 2 {
		t.Errorf("the first commit of a new WAL: %d writes, want 2 (the header, synced, then the frames)", after-before)
	}
	if n := count(crashCopy(t, path), `SELECT COUNT(*) FROM wb`); n != 506 {
		t.Fatalf("after the first commit of a new WAL the copy holds %d rows, want 506", n)
	}
}

// TestWALFileCalls drives a WAL file of walVFS call by call, as SQLite
// does: what was gathered is read back, sized, synced, truncated and
// closed as written, and a commit frame's page sends the frames before it
// to the file.
func TestWALFileCalls(t *testing.T) {
	if err := registerWALVFS(); err != nil {
		t.Fatal(err)
	}
	tls := libc.NewTLS()
	defer tls.Close()
	path := filepath.Join(t.TempDir(), "calls.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil { // a WAL's database file exists
		t.Fatal(err)
	}
	cstr := func(s string) uintptr {
		p, err := libc.CString(s)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { libc.Xfree(tls, p) })
		return p
	}
	vfs := (*sqlite3.Tsqlite3_vfs)(cptr(sqlite3.Xsqlite3_vfs_find(tls, cstr(walVFSName))))
	file := sqlite3.Xsqlite3_malloc64(tls, uint64(vfs.FszOsFile))
	defer sqlite3.Xsqlite3_free(tls, file)
	clear(unsafe.Slice((*byte)(cptr(file)), vfs.FszOsFile))
	open := vfs.FxOpen
	if rc := (*(*func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32)(unsafe.Pointer(&open)))(tls, 0, cstr(path+"-wal"), file,
		sqlite3.SQLITE_OPEN_READWRITE|sqlite3.SQLITE_OPEN_CREATE|sqlite3.SQLITE_OPEN_WAL, 0); rc != sqlite3.SQLITE_OK {
		t.Fatalf("xOpen: %d", rc)
	}
	m := (*sqlite3.Tsqlite3_io_methods)(cptr((*sqlite3.Tsqlite3_file)(cptr(file)).FpMethods))
	mem := sqlite3.Xsqlite3_malloc64(tls, 8192)
	defer sqlite3.Xsqlite3_free(tls, mem)
	buf := unsafe.Slice((*byte)(cptr(mem)), 8192)
	write := func(b []byte, off int64) {
		t.Helper()
		copy(buf, b)
		fn := m.FxWrite
		if rc := (*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&fn)))(tls, file, mem, int32(len(b)), off); rc != sqlite3.SQLITE_OK {
			t.Fatalf("xWrite: %d", rc)
		}
	}
	read := func(n int, off int64) []byte {
		t.Helper()
		fn := m.FxRead
		if rc := (*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&fn)))(tls, file, mem, int32(n), off); rc != sqlite3.SQLITE_OK {
			t.Fatalf("xRead: %d", rc)
		}
		return bytes.Clone(buf[:n])
	}
	size := func() int64 {
		t.Helper()
		fn := m.FxFileSize
		if rc := (*(*func(*libc.TLS, uintptr, uintptr) int32)(unsafe.Pointer(&fn)))(tls, file, mem); rc != sqlite3.SQLITE_OK {
			t.Fatalf("xFileSize: %d", rc)
		}
		return *(*int64)(cptr(mem))
	}
	onFile := func() int64 {
		t.Helper()
		fi, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	frameHeader := func(commit byte) []byte { h := make([]byte, walFrameHeaderSize); h[7] = commit; return h }
	page := func(c byte) []byte { return bytes.Repeat([]byte{c}, 4096) }
	const frame = walFrameHeaderSize + 4096

	write(make([]byte, 32), 0)
	write(frameHeader(0), 32)
	write(page('a'), 32+walFrameHeaderSize)
	if onFile() != 0 {
		t.Fatal("a frame that ends no commit went to the file at once")
	}
	if got := read(4096, 32+walFrameHeaderSize); !bytes.Equal(got, page('a')) {
		t.Fatal("xRead does not see the frame written before it")
	}
	write(frameHeader(0), 32+frame)
	write(page('b'), 32+frame+walFrameHeaderSize)
	if got := size(); got != 32+2*frame {
		t.Fatalf("xFileSize: %d, want %d", got, 32+2*frame)
	}
	write(frameHeader(0), 32+2*frame)
	write(page('c'), 32+2*frame+walFrameHeaderSize)
	fn := m.FxSync
	if rc := (*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&fn)))(tls, file, sqlite3.SQLITE_SYNC_NORMAL); rc != sqlite3.SQLITE_OK || onFile() != 32+3*frame {
		t.Fatalf("xSync: %d, %d bytes on the file, want %d", rc, onFile(), 32+3*frame)
	}
	write(frameHeader(2), 32+3*frame) // a commit frame
	write(page('d'), 32+3*frame+walFrameHeaderSize)
	if onFile() != 32+4*frame {
		t.Fatalf("after a commit frame %d bytes on the file, want %d", onFile(), 32+4*frame)
	}
	write(frameHeader(0), 32+4*frame)
	write(page('e'), 32+4*frame+walFrameHeaderSize)
	fn = m.FxTruncate // cutting the gathered frame short
	if rc := (*(*func(*libc.TLS, uintptr, int64) int32)(unsafe.Pointer(&fn)))(tls, file, 32+4*frame+walFrameHeaderSize); rc != sqlite3.SQLITE_OK || size() != 32+4*frame+walFrameHeaderSize {
		t.Fatalf("xTruncate: %d, %d bytes, want %d", rc, size(), 32+4*frame+walFrameHeaderSize)
	}
	write(frameHeader(0), 32+5*frame)
	write(page('f'), 32+5*frame+walFrameHeaderSize)
	fn = m.FxClose
	if rc := (*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&fn)))(tls, file); rc != sqlite3.SQLITE_OK {
		t.Fatalf("xClose: %d", rc)
	}
	data, err := os.ReadFile(path + "-wal")
	if err != nil || len(data) != 32+6*frame || data[32+5*frame+walFrameHeaderSize] != 'f' {
		t.Fatalf("after xClose the file holds %d bytes, want %d with the last page (%v)", len(data), 32+6*frame, err)
	}
	if walFileOf(file) != nil {
		t.Fatal("a closed file is still known")
	}
}
