package httpapi

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

// TestTrackedConnSocket: a connection the listener tracks still offers
// the socket under it, which the hub's readers wait on; a connection
// without one says so.
func TestTrackedConnSocket(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Listen(ln, ListenerConfig{})
	defer l.Close()
	go func() {
		if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
			defer c.Close()
			_, _ = c.Read(make([]byte, 1))
		}
	}()
	c, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sc, ok := c.(syscall.Conn)
	if !ok {
		t.Fatal("an accepted connection is not a syscall.Conn")
	}
	if _, err := sc.SyscallConn(); err != nil {
		t.Fatalf("SyscallConn of a TCP connection: %v", err)
	}

	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if _, err := (&trackedConn{Conn: a}).SyscallConn(); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("SyscallConn of a pipe: %v, want ErrUnsupported", err)
	}
}
