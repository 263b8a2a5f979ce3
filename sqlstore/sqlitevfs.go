package sqlstore

import (
	"fmt"
	"sync"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// A VFS of this package (walbuffer.go) is SQLite's default VFS with some
// methods of some files replaced by Go functions. SQLite's code, compiled
// to Go by modernc.org/sqlite, calls a method through the address of a Go
// function value, as these helpers make and call them.

// vfsBase is the default VFS, which the VFSs of this package open files
// with.
var vfsBase struct {
	once sync.Once
	vfs  uintptr
	open uintptr // its xOpen
}

// registerVFS registers, under name, a copy of the default VFS whose
// xOpen is open (a func with xOpen's signature, which opens files with
// openBase).
func registerVFS(name string, open any) error {
	tls := libc.NewTLS()
	defer tls.Close()
	vfsBase.once.Do(func() {
		vfsBase.vfs = sqlite3.Xsqlite3_vfs_find(tls, 0)
		if vfsBase.vfs != 0 {
			vfsBase.open = (*sqlite3.Tsqlite3_vfs)(cptr(vfsBase.vfs)).FxOpen
		}
	})
	if vfsBase.vfs == 0 {
		return fmt.Errorf("sqlite: no default VFS")
	}
	p := sqlite3.Xsqlite3_malloc64(tls, uint64(unsafe.Sizeof(sqlite3.Tsqlite3_vfs{})))
	zName, err := libc.CString(name)
	if p == 0 || err != nil {
		return fmt.Errorf("sqlite: out of memory registering the VFS %s", name)
	}
	v := (*sqlite3.Tsqlite3_vfs)(cptr(p))
	*v = *(*sqlite3.Tsqlite3_vfs)(cptr(vfsBase.vfs))
	v.FpNext = 0
	v.FzName = zName
	v.FxOpen = cfunc(open)
	if rc := sqlite3.Xsqlite3_vfs_register(tls, p, 0); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("sqlite: registering the VFS %s: code %d", name, rc)
	}
	return nil
}

// openBase opens a file with the default VFS.
func openBase(tls *libc.TLS, name, file uintptr, flags int32, outFlags uintptr) int32 {
	fn := vfsBase.open
	return (*(*func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32)(unsafe.Pointer(&fn)))(tls, vfsBase.vfs, name, file, flags, outFlags)
}

// copyMethods returns a copy, in SQLite's memory (never freed), of the
// methods at m, and its address; nil when out of memory.
func copyMethods(tls *libc.TLS, m uintptr) (*sqlite3.Tsqlite3_io_methods, uintptr) {
	p := sqlite3.Xsqlite3_malloc64(tls, uint64(unsafe.Sizeof(sqlite3.Tsqlite3_io_methods{})))
	if p == 0 {
		return nil, 0
	}
	c := (*sqlite3.Tsqlite3_io_methods)(cptr(p))
	*c = *(*sqlite3.Tsqlite3_io_methods)(cptr(m))
	return c, p
}

// callRW calls an xRead or xWrite.
func callRW(fn uintptr, tls *libc.TLS, file, p uintptr, n int32, off int64) int32 {
	return (*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&fn)))(tls, file, p, n, off)
}

// callSync calls an xSync.
func callSync(fn uintptr, tls *libc.TLS, file uintptr, flags int32) int32 {
	return (*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&fn)))(tls, file, flags)
}

// callTruncate calls an xTruncate.
func callTruncate(fn uintptr, tls *libc.TLS, file uintptr, size int64) int32 {
	return (*(*func(*libc.TLS, uintptr, int64) int32)(unsafe.Pointer(&fn)))(tls, file, size)
}

// callFileSize calls an xFileSize.
func callFileSize(fn uintptr, tls *libc.TLS, file, size uintptr) int32 {
	return (*(*func(*libc.TLS, uintptr, uintptr) int32)(unsafe.Pointer(&fn)))(tls, file, size)
}

// callClose calls an xClose.
func callClose(fn uintptr, tls *libc.TLS, file uintptr) int32 {
	return (*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&fn)))(tls, file)
}

// cptr is the Go pointer for an address in SQLite's memory, which is not
// Go's (the C library's allocator maps it outside the Go heap).
func cptr(p uintptr) unsafe.Pointer { return unsafe.Add(unsafe.Pointer(nil), p) }

// cbytes is the n bytes of SQLite's memory at p.
func cbytes(p uintptr, n int32) []byte { return unsafe.Slice((*byte)(cptr(p)), n) }

// cfunc is the address SQLite's code calls for the Go function f, as
// modernc.org/sqlite makes its own.
func cfunc(f any) uintptr {
	type iface [2]uintptr
	return (*iface)(unsafe.Pointer(&f))[1]
}
