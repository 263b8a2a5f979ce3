package sqlstore

import (
	"sync"
	"sync/atomic"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite appends a commit to the WAL one page at a time, each page as two
// writes (its 24-byte frame header, then the page): two system calls per
// page, about 4 µs on this kind of machine, where one write of the same
// bytes costs a fifth of that. The writer connection opens its database
// with walVFS, the default VFS with one change: the WAL's new frames are
// gathered in memory and written with one call when the commit frame is
// complete, inside the xWrite of that frame, before SQLite publishes the
// commit to readers (the wal-index header it writes after the frames) and
// before the commit returns. What is on the file when a commit returns is
// what it was without the buffer: a process killed after a commit loses
// nothing, and one killed before loses only frames no commit counts
// (recovery stops at the last whole commit). A write that fails, at that
// flush or any other, fails SQLite's call, which rolls the transaction
// back as it would for a failed write of its own.
//
// Only appends are gathered, and only from the header of a frame that ends
// no commit: after a commit frame's header, what is appended (its page, the
// frames that pad a commit to a sector with synchronous=FULL) is written at
// once. A write at offset 0 is a new WAL's header: what follows starts over
// from there. A write anywhere else below what was appended (a page this
// transaction already wrote, written again in place; the frame headers of a
// checksum rewrite) first writes what is gathered, then goes to the file at
// once. Every other call on the WAL that reads, syncs, sizes, truncates or
// closes it writes what is gathered first. Other connections (readers, the
// checkpointer) use the default VFS: they read only frames a published
// commit counts, which are on the file. (After a transaction that wrote
// frames and rolled back, the next one writes over them in place, one write
// each, until it passes them.)
const walVFSName = "switchboard-wal"

// walBufferSize bounds what is gathered: a larger transaction is written
// a buffer at a time.
const walBufferSize = 1 << 20

// walWriteChunk is the most one write hands the default VFS, whose
// writes take no more than 128 KiB at a time.
const walWriteChunk = 124 << 10

// walFrameHeaderSize is the size of a WAL frame's header; bytes 4 to 7
// hold, in a commit frame, the database's size in pages (0 otherwise).
const walFrameHeaderSize = 24

// walVFS is the VFS registered under walVFSName.
var walVFS struct {
	once sync.Once
	err  error

	// The methods of the WAL files it opens: the default VFS's, and the
	// copy this VFS gives them instead.
	base     uintptr
	methods  uintptr
	write    uintptr // base's xWrite, xRead, ...
	read     uintptr
	sync     uintptr
	truncate uintptr
	fileSize uintptr
	close    uintptr

	mu    sync.Mutex
	files map[uintptr]*walFile // by sqlite3_file
}

// walFile is one WAL file's gathered frames.
type walFile struct {
	name string // the file's path

	buf    uintptr // walBufferSize bytes of SQLite's memory, once used
	n      int32   // bytes gathered
	off    int64   // the file offset of the first
	end    int64   // the offset after the last byte appended
	commit bool    // the last frame header appended was a commit frame's

	// For tests: the writes that reached the file, and those of them made
	// in place.
	writes, inPlace atomic.Int64
}

// registerWALVFS registers walVFS once per process.
func registerWALVFS() error {
	walVFS.once.Do(func() {
		walVFS.files = map[uintptr]*walFile{}
		walVFS.err = registerVFS(walVFSName, walOpen)
	})
	return walVFS.err
}

// walOpen is walVFS's xOpen: the default VFS's, and for a WAL file the
// methods that gather its appends.
func walOpen(tls *libc.TLS, _, name, file uintptr, flags int32, outFlags uintptr) int32 {
	rc := openBase(tls, name, file, flags, outFlags)
	if rc != sqlite3.SQLITE_OK || flags&sqlite3.SQLITE_OPEN_WAL == 0 {
		return rc
	}
	f := (*sqlite3.Tsqlite3_file)(cptr(file))
	walVFS.mu.Lock()
	defer walVFS.mu.Unlock()
	if walVFS.methods == 0 {
		m, addr := copyMethods(tls, f.FpMethods)
		if m == nil {
			return rc // the WAL works as it would without this VFS
		}
		walVFS.base, walVFS.methods = f.FpMethods, addr
		walVFS.write, m.FxWrite = m.FxWrite, cfunc(walWrite)
		walVFS.read, m.FxRead = m.FxRead, cfunc(walRead)
		walVFS.sync, m.FxSync = m.FxSync, cfunc(walSync)
		walVFS.truncate, m.FxTruncate = m.FxTruncate, cfunc(walTruncate)
		walVFS.fileSize, m.FxFileSize = m.FxFileSize, cfunc(walFileSize)
		walVFS.close, m.FxClose = m.FxClose, cfunc(walClose)
	}
	if f.FpMethods != walVFS.base {
		return rc // another kind of file: left as it is
	}
	f.FpMethods = walVFS.methods
	walVFS.files[file] = &walFile{name: libc.GoString(name)}
	return rc
}

// walFileOf returns the gathered frames of file.
func walFileOf(file uintptr) *walFile {
	walVFS.mu.Lock()
	defer walVFS.mu.Unlock()
	return walVFS.files[file]
}

func walWrite(tls *libc.TLS, file, p uintptr, n int32, off int64) int32 {
	f := walFileOf(file)
	if off == 0 { // a new WAL's header: its frames follow it
		if rc := f.flush(tls, file); rc != sqlite3.SQLITE_OK {
			return rc
		}
		f.end = 0
	}
	if f.n > 0 && off != f.off+int64(f.n) || f.n == 0 && off < f.end || n > walWriteChunk {
		// Written again in place, or too large to gather: in order, at once.
		if rc := f.flush(tls, file); rc != sqlite3.SQLITE_OK {
			return rc
		}
		f.end = max(f.end, off+int64(n))
		f.inPlace.Add(1)
		return f.baseWrite(tls, file, p, n, off)
	}
	if f.n+n > walBufferSize {
		if rc := f.flush(tls, file); rc != sqlite3.SQLITE_OK {
			return rc
		}
	}
	if f.buf == 0 {
		if f.buf = sqlite3.Xsqlite3_malloc64(tls, walBufferSize); f.buf == 0 {
			return sqlite3.SQLITE_IOERR_NOMEM
		}
	}
	if f.n == 0 {
		f.off = off
	}
	copy(cbytes(f.buf+uintptr(f.n), n), cbytes(p, n))
	f.n += n
	f.end = off + int64(n)
	if n == walFrameHeaderSize {
		h := cbytes(p, walFrameHeaderSize)
		f.commit = h[4]|h[5]|h[6]|h[7] != 0
		return sqlite3.SQLITE_OK
	}
	if f.commit {
		// The commit frame's page, or a piece of it, or of a frame that
		// pads the commit to a sector: the transaction is whole.
		return f.flush(tls, file)
	}
	return sqlite3.SQLITE_OK
}

// flush writes what is gathered. It leaves f.commit as it is: until the
// header of a frame that ends no commit, what is appended after a commit
// frame's header is written at once, however it comes (a page that did not
// fit what was gathered, a page SQLite writes in two around a sync, the
// frames that pad a commit to a sector).
func (f *walFile) flush(tls *libc.TLS, file uintptr) int32 {
	if f.n == 0 {
		return sqlite3.SQLITE_OK
	}
	n := f.n
	f.n = 0
	for done := int32(0); done < n; done += walWriteChunk {
		if rc := f.baseWrite(tls, file, f.buf+uintptr(done), min(walWriteChunk, n-done), f.off+int64(done)); rc != sqlite3.SQLITE_OK {
			return rc
		}
	}
	return sqlite3.SQLITE_OK
}

func (f *walFile) baseWrite(tls *libc.TLS, file, p uintptr, n int32, off int64) int32 {
	f.writes.Add(1)
	return callRW(walVFS.write, tls, file, p, n, off)
}

func walRead(tls *libc.TLS, file, p uintptr, n int32, off int64) int32 {
	if rc := walFileOf(file).flush(tls, file); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return callRW(walVFS.read, tls, file, p, n, off)
}

func walSync(tls *libc.TLS, file uintptr, flags int32) int32 {
	if rc := walFileOf(file).flush(tls, file); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return callSync(walVFS.sync, tls, file, flags)
}

func walTruncate(tls *libc.TLS, file uintptr, size int64) int32 {
	f := walFileOf(file)
	if rc := f.flush(tls, file); rc != sqlite3.SQLITE_OK {
		return rc
	}
	f.end = min(f.end, size)
	return callTruncate(walVFS.truncate, tls, file, size)
}

func walFileSize(tls *libc.TLS, file, size uintptr) int32 {
	if rc := walFileOf(file).flush(tls, file); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return callFileSize(walVFS.fileSize, tls, file, size)
}

func walClose(tls *libc.TLS, file uintptr) int32 {
	f := walFileOf(file)
	rc := f.flush(tls, file)
	if f.buf != 0 {
		sqlite3.Xsqlite3_free(tls, f.buf)
	}
	walVFS.mu.Lock()
	delete(walVFS.files, file)
	walVFS.mu.Unlock()
	if crc := callClose(walVFS.close, tls, file); rc == sqlite3.SQLITE_OK {
		rc = crc
	}
	return rc
}
