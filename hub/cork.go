package hub

import (
	"net"
	"sync"
	"time"
)

// A connection's writer is small (buffers.go), so a message that does not
// fit in it would leave in two system calls, the buffer's and the rest's:
// two TCP segments, and two wake-ups of the agent reading them. While the
// hub writes a message the connection is corked: what the WebSocket
// library flushes is kept, in order, and leaves in one write when the
// message is complete. The kept bytes live in a pooled buffer only while
// corked, so an idle connection holds none. Every write goes through one
// mutex, so the bytes leave in the order they were written whoever writes
// them (the library answers pings and sends close frames on its own).
//
// A cork names the deadline of the writes it covers. Setting a socket's
// deadline costs a timer's update, twice per message if set and cleared
// each time; so the socket keeps the deadline it was given while corks
// follow each other, and a new one is set only when the one it keeps is
// later than a cork asks, or earlier by more than an eighth of the time
// the cork gives (deadlineSlack): a connection that writes steadily sets
// it a few times per timeout, and a write may be cut short by that
// eighth. A write uncorked (the library's) clears it first.

// maxCorked bounds what a cork keeps: past it, the kept bytes and the
// write leave at once (a large message costs a copy less).
const maxCorked = 64 << 10

// corkBufs holds the buffers of corked connections.
var corkBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// corkConn is the connection under a WebSocket's buffered writer.
type corkConn struct {
	net.Conn
	mu       sync.Mutex
	depth    int       // guarded by mu: writers that corked and have not uncorked
	buf      *[]byte   // guarded by mu: the kept bytes while depth > 0
	deadline time.Time // guarded by mu: the socket's write deadline (zero: none)
}

// Write keeps p while corked, and writes it otherwise.
func (c *corkConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.depth == 0 {
		if !c.deadline.IsZero() {
			c.deadline = time.Time{}
			_ = c.Conn.SetWriteDeadline(c.deadline)
		}
		return c.Conn.Write(p)
	}
	if len(*c.buf)+len(p) > maxCorked {
		if err := c.flushLocked(); err != nil {
			return 0, err
		}
		return c.Conn.Write(p)
	}
	*c.buf = append(*c.buf, p...)
	return len(p), nil
}

// cork keeps what is written until the matching uncork; what leaves
// meanwhile (past maxCorked) and at the uncork leaves by deadline, or up
// to deadlineSlack before it.
func (c *corkConn) cork(deadline time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.depth == 0 {
		c.buf = corkBufs.Get().(*[]byte)
	}
	c.depth++
	c.setDeadlineLocked(deadline)
}

// setDeadlineLocked gives the socket deadline, unless the one it has is
// no later and within the slack before it.
func (c *corkConn) setDeadlineLocked(deadline time.Time) {
	if c.deadline.After(deadline) || c.deadline.Before(deadline.Add(-deadlineSlack(time.Until(deadline)))) {
		c.deadline = deadline
		_ = c.Conn.SetWriteDeadline(deadline)
	}
}

// deadlineSlack is how much earlier than asked a cork's deadline may be:
// an eighth of the time it gives.
func deadlineSlack(left time.Duration) time.Duration { return max(left, 0) / 8 }

// uncork ends a cork; the last one writes what was kept.
func (c *corkConn) uncork() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.depth--
	if c.depth > 0 {
		return nil
	}
	var err error
	if len(*c.buf) > 0 {
		err = c.flushLocked()
	}
	c.releaseLocked()
	return err
}

// releaseLocked gives the buffer back.
func (c *corkConn) releaseLocked() {
	if cap(*c.buf) <= maxCorked {
		*c.buf = (*c.buf)[:0]
		corkBufs.Put(c.buf)
	}
	c.buf = nil
}

// flushLocked writes the kept bytes.
func (c *corkConn) flushLocked() error {
	b := *c.buf
	*c.buf = b[:0]
	for len(b) > 0 {
		n, err := c.Conn.Write(b)
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}
