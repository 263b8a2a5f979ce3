package pipenet

import (
	"net"
	"sync"
	"sync/atomic"
)

// Cable is a connection whose cable can be cut, as a pulled cable or a
// peer that vanished: once cut, nothing more gets through either way, and
// nothing says so. A Read or Write after the cut (or a Read that was
// waiting and gets bytes after it, which are lost) blocks until the Cable
// is closed; no close is sent to the other end.
type Cable struct {
	net.Conn
	cut    atomic.Bool
	closed chan struct{}
	once   sync.Once
}

// NewCable returns c with a cable that can be cut.
func NewCable(c net.Conn) *Cable { return &Cable{Conn: c, closed: make(chan struct{})} }

// Cut stops everything from getting through.
func (c *Cable) Cut() { c.cut.Store(true) }

// Read reads from the connection until the cable is cut.
func (c *Cable) Read(p []byte) (int, error) {
	if !c.cut.Load() {
		n, err := c.Conn.Read(p)
		if !c.cut.Load() {
			return n, err
		}
	}
	<-c.closed
	return 0, net.ErrClosed
}

// Write writes to the connection until the cable is cut.
func (c *Cable) Write(p []byte) (int, error) {
	if !c.cut.Load() {
		return c.Conn.Write(p)
	}
	<-c.closed
	return 0, net.ErrClosed
}

// Close closes the connection, and ends the calls the cut left waiting.
func (c *Cable) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}
