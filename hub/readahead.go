package hub

import (
	"net"
	"sync"
)

// A connection's reader is small (buffers.go): a message longer than it
// costs two reads of the socket, and messages that queue in the kernel
// while the reader was busy are read one or two system calls each. So the
// connection under the reader reads ahead while it is busy: when a read
// filled what it was given, there is likely more waiting, and the next
// read takes as much as a pooled buffer holds, which the reads after it
// are served from. Messages that queued then cost one system call
// together. A read that did not fill its buffer (the socket was drained)
// makes the next one small again, so a connection that waits for its next
// message (how an idle one spends its life) holds no pooled buffer.
//
// Over a socket of its own (pooledReader), the connection waits for bytes
// without a buffer and then reads all that is there into a pooled one, so
// that a message longer than the reader costs one system call even when
// it arrives alone.

// readAheadSize is the size of the buffers a busy connection reads into.
const readAheadSize = 32 << 10

var readAheadBufs = sync.Pool{New: func() any { b := make([]byte, readAheadSize); return &b }}

// readAheadConn is the connection under a WebSocket's buffered reader.
// Only that reader reads it, one read at a time, so its fields need no
// lock.
type readAheadConn struct {
	net.Conn
	// pooled, when set, waits for bytes and reads them into a buffer from
	// readAheadBufs (pooledReader). Immutable.
	pooled  func() (*[]byte, int, error)
	busy    bool    // the last read of the socket filled its buffer
	buf     *[]byte // a pooled buffer while pending bytes are in it
	pending []byte  // bytes read ahead and not yet returned
	err     error   // the error of the read that read pending, returned after it
}

// Read returns bytes read ahead first; it reads the socket into p, or,
// while busy, into a pooled buffer.
func (c *readAheadConn) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		if len(c.pending) == 0 {
			c.release()
		}
		return n, nil
	}
	if c.err != nil {
		return 0, c.err
	}
	if c.pooled != nil && len(p) < readAheadSize {
		buf, n, err := c.pooled()
		if err != nil {
			return 0, err
		}
		c.buf = buf
		c.pending = (*buf)[:n]
		return c.Read(p)
	}
	if !c.busy || len(p) >= readAheadSize {
		n, err := c.Conn.Read(p)
		c.busy = n == len(p) && n > 0
		return n, err
	}
	c.buf = readAheadBufs.Get().(*[]byte)
	b := *c.buf
	n, err := c.Conn.Read(b)
	c.busy = n == len(b)
	m := copy(p, b[:n])
	c.pending = b[m:n]
	if len(c.pending) == 0 {
		c.release()
		return m, err
	}
	c.err = err
	return m, nil
}

// release gives the pooled buffer back.
func (c *readAheadConn) release() {
	c.pending = nil
	readAheadBufs.Put(c.buf)
	c.buf = nil
}
