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

// walCalls drives a WAL file of walVFS call by call, as SQLite does.
type walCalls struct {
	t    *testing.T
	tls  *libc.TLS
	path string // the WAL's
	file uintptr
	m    *sqlite3.Tsqlite3_io_methods
	mem  uintptr // 8 KiB of SQLite's memory for the calls' buffers
}

// openWALCalls opens a new WAL file through walVFS.
func openWALCalls(t *testing.T) *walCalls {
	t.Helper()
	if err := registerWALVFS(); err != nil {
		t.Fatal(err)
	}
	tls := libc.NewTLS()
	t.Cleanup(tls.Close)
	db := filepath.Join(t.TempDir(), "calls.db")
	if err := os.WriteFile(db, nil, 0o600); err != nil { // a WAL's database file exists
		t.Fatal(err)
	}
	c := &walCalls{t: t, tls: tls, path: db + "-wal"}
	vfs := (*sqlite3.Tsqlite3_vfs)(cptr(sqlite3.Xsqlite3_vfs_find(tls, c.cstr(walVFSName))))
	c.file = sqlite3.Xsqlite3_malloc64(tls, uint64(vfs.FszOsFile))
	c.mem = sqlite3.Xsqlite3_malloc64(tls, 8192)
	t.Cleanup(func() { sqlite3.Xsqlite3_free(tls, c.file); sqlite3.Xsqlite3_free(tls, c.mem) })
	clear(cbytes(c.file, vfs.FszOsFile))
	open := vfs.FxOpen
	if rc := (*(*func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32)(unsafe.Pointer(&open)))(tls, 0, c.cstr(c.path), c.file,
		sqlite3.SQLITE_OPEN_READWRITE|sqlite3.SQLITE_OPEN_CREATE|sqlite3.SQLITE_OPEN_WAL, 0); rc != sqlite3.SQLITE_OK {
		t.Fatalf("xOpen: %d", rc)
	}
	c.m = (*sqlite3.Tsqlite3_io_methods)(cptr((*sqlite3.Tsqlite3_file)(cptr(c.file)).FpMethods))
	return c
}

func (c *walCalls) cstr(s string) uintptr {
	p, err := libc.CString(s)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { libc.Xfree(c.tls, p) })
	return p
}

func (c *walCalls) write(b []byte, off int64) {
	c.t.Helper()
	copy(cbytes(c.mem, 8192), b)
	if rc := callRW(c.m.FxWrite, c.tls, c.file, c.mem, int32(len(b)), off); rc != sqlite3.SQLITE_OK {
		c.t.Fatalf("xWrite: %d", rc)
	}
}

func (c *walCalls) read(n int, off int64) []byte {
	c.t.Helper()
	if rc := callRW(c.m.FxRead, c.tls, c.file, c.mem, int32(n), off); rc != sqlite3.SQLITE_OK {
		c.t.Fatalf("xRead: %d", rc)
	}
	return bytes.Clone(cbytes(c.mem, int32(n)))
}

func (c *walCalls) size() int64 {
	c.t.Helper()
	if rc := callFileSize(c.m.FxFileSize, c.tls, c.file, c.mem); rc != sqlite3.SQLITE_OK {
		c.t.Fatalf("xFileSize: %d", rc)
	}
	return *(*int64)(cptr(c.mem))
}

func (c *walCalls) sync() {
	c.t.Helper()
	if rc := callSync(c.m.FxSync, c.tls, c.file, sqlite3.SQLITE_SYNC_NORMAL); rc != sqlite3.SQLITE_OK {
		c.t.Fatalf("xSync: %d", rc)
	}
}

// onFile returns the size of the file as the file system has it.
func (c *walCalls) onFile() int64 {
	c.t.Helper()
	fi, err := os.Stat(c.path)
	if err != nil {
		c.t.Fatal(err)
	}
	return fi.Size()
}

// frame writes frame i (after the WAL's 32-byte header) as SQLite does, its
// header then its page of c bytes; commit marks a commit frame.
func (c *walCalls) frame(i int64, commit bool, b byte) {
	c.t.Helper()
	h := make([]byte, walFrameHeaderSize)
	if commit {
		h[7] = 2
	}
	c.write(h, walFrameOffset(i))
	c.write(bytes.Repeat([]byte{b}, 4096), walFrameOffset(i)+walFrameHeaderSize)
}

// walFrameOffset is the offset of frame i of a WAL of 4 KiB pages.
func walFrameOffset(i int64) int64 { return 32 + i*(walFrameHeaderSize+4096) }

// TestWALFileCalls: what was gathered is read back, sized, synced,
// truncated and closed as written, and a commit frame's page sends the
// frames before it to the file.
func TestWALFileCalls(t *testing.T) {
	c := openWALCalls(t)
	c.write(make([]byte, 32), 0)
	c.frame(0, false, 'a')
	if c.onFile() != 0 {
		t.Fatal("a frame that ends no commit went to the file at once")
	}
	if got := c.read(4096, walFrameOffset(0)+walFrameHeaderSize); !bytes.Equal(got, bytes.Repeat([]byte{'a'}, 4096)) {
		t.Fatal("xRead does not see the frame written before it")
	}
	c.frame(1, false, 'b')
	if got := c.size(); got != walFrameOffset(2) {
		t.Fatalf("xFileSize: %d, want %d", got, walFrameOffset(2))
	}
	c.frame(2, false, 'c')
	if c.sync(); c.onFile() != walFrameOffset(3) {
		t.Fatalf("after xSync %d bytes on the file, want %d", c.onFile(), walFrameOffset(3))
	}
	c.frame(3, true, 'd')
	if c.onFile() != walFrameOffset(4) {
		t.Fatalf("after a commit frame %d bytes on the file, want %d", c.onFile(), walFrameOffset(4))
	}
	c.frame(4, false, 'e')
	cut := walFrameOffset(4) + walFrameHeaderSize // cutting the gathered frame short
	if rc := callTruncate(c.m.FxTruncate, c.tls, c.file, cut); rc != sqlite3.SQLITE_OK || c.size() != cut {
		t.Fatalf("xTruncate: %d, %d bytes, want %d", rc, c.size(), cut)
	}
	c.frame(5, false, 'f')
	if rc := callClose(c.m.FxClose, c.tls, c.file); rc != sqlite3.SQLITE_OK {
		t.Fatalf("xClose: %d", rc)
	}
	data, err := os.ReadFile(c.path)
	if err != nil || int64(len(data)) != walFrameOffset(6) || data[walFrameOffset(5)+walFrameHeaderSize] != 'f' {
		t.Fatalf("after xClose the file holds %d bytes, want %d with the last page (%v)", len(data), walFrameOffset(6), err)
	}
	if walFileOf(c.file) != nil {
		t.Fatal("a closed file is still known")
	}
}

// TestWALCommitPageHoweverItComes: a commit frame's page is on the file
// when its last byte was written, whether it did not fit what was
// gathered, or came in two writes around a sync (as SQLite writes the
// frame that crosses a sector with synchronous=FULL), and so is every
// frame that pads the commit.
func TestWALCommitPageHoweverItComes(t *testing.T) {
	c := openWALCalls(t)
	c.write(make([]byte, 32), 0)
	// Frames as long as they fit in the buffer whole; the next, a commit
	// frame, has room for its header and not its page.
	var i int64
	for ; walFrameOffset(i+1) <= walBufferSize; i++ {
		c.frame(i, false, 'a')
	}
	if walFrameOffset(i)+walFrameHeaderSize > walBufferSize {
		t.Fatal("the commit frame's header does not fit either: the test does not test that")
	}
	c.frame(i, true, 'b')
	if got := c.onFile(); got != walFrameOffset(i+1) {
		t.Fatalf("a commit page that did not fit the buffer: %d bytes on the file, want %d", got, walFrameOffset(i+1))
	}
	data, err := os.ReadFile(c.path)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []int64{0, i - 1} {
		if data[walFrameOffset(f)+walFrameHeaderSize] != 'a' {
			t.Fatalf("frame %d is not on the file as written", f)
		}
	}

	i++
	c.frame(i, false, 'c')
	h := make([]byte, walFrameHeaderSize)
	h[7] = 2
	c.write(h, walFrameOffset(i+1))
	page := bytes.Repeat([]byte{'d'}, 4096)
	c.write(page[:1000], walFrameOffset(i+1)+walFrameHeaderSize)
	c.sync()
	c.write(page[1000:], walFrameOffset(i+1)+walFrameHeaderSize+1000)
	if got := c.onFile(); got != walFrameOffset(i+2) {
		t.Fatalf("a commit page written in two around a sync: %d bytes on the file, want %d", got, walFrameOffset(i+2))
	}
	c.frame(i+2, true, 'd') // a frame padding the commit
	if got := c.onFile(); got != walFrameOffset(i+3) {
		t.Fatalf("a frame padding a commit: %d bytes on the file, want %d", got, walFrameOffset(i+3))
	}
	c.frame(i+3, false, 'e') // the next transaction's: gathered again
	if got := c.onFile(); got != walFrameOffset(i+3) {
		t.Fatalf("a frame that ends no commit, after a commit: %d bytes on the file, want %d", got, walFrameOffset(i+3))
	}
}
