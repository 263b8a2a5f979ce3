//go:build unix

package hub

import (
	"errors"
	"io"
	"net"
	"syscall"
)

// rawConn returns the socket under nc, or nil for a connection without
// one of its own (TLS ended by this process, a test's pipe).
func rawConn(nc net.Conn) syscall.RawConn {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

// pooledReader returns a read of nc's socket that waits for bytes
// without a buffer, then reads what is there into one from
// readAheadBufs in one system call; nil when nc has no socket of its own.
func pooledReader(nc net.Conn) func() (*[]byte, int, error) {
	rc := rawConn(nc)
	if rc == nil {
		return nil
	}
	return func() (*[]byte, int, error) {
		var buf *[]byte
		var n int
		var rerr error
		err := rc.Read(func(fd uintptr) bool {
			buf = readAheadBufs.Get().(*[]byte)
			for {
				n, rerr = syscall.Read(int(fd), *buf)
				if rerr != syscall.EINTR {
					break
				}
			}
			if errors.Is(rerr, syscall.EAGAIN) {
				readAheadBufs.Put(buf) // nothing yet: wait without it
				buf = nil
				return false
			}
			return true
		})
		switch {
		case err != nil:
			rerr = err
		case rerr == nil && n == 0:
			rerr = io.EOF
		}
		if rerr != nil {
			if buf != nil {
				readAheadBufs.Put(buf)
			}
			return nil, 0, rerr
		}
		return buf, n, nil
	}
}
