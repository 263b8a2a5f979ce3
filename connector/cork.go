package connector

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The WebSocket library writes a message through a 4 KiB buffer and
// flushes at its end, so a batch of session frames larger than the buffer
// would leave in several system calls, and messages written one after the
// other each in its own. While the write loop writes what waits, the
// connection under the buffer is corked: what the library flushes is kept,
// in order, and leaves in one write when the loop has written it all
// (never later: the loop uncorks before it waits for more). The connector
// corks the connections it dials through an *http.Transport (its own, or
// a copy of the one HTTPClient has); through any other client it writes as
// the library does.
//
// A cork names the deadline of the writes it covers, and the socket keeps
// it while corks follow each other: a new one is set only when the one it
// keeps is later than a cork asks, or earlier by more than an eighth of
// the time the cork gives, so that a connection that writes steadily sets
// it a few times per timeout rather than twice per message (a write may
// be cut short by that eighth). A write uncorked (the library's) clears
// it first.

// maxCorked bounds what a cork keeps: past it, the kept bytes leave at
// once (and a write larger than it with them).
const maxCorked = 64 << 10

// corkConn is the connection under a WebSocket's buffered writer.
type corkConn struct {
	net.Conn
	mu       sync.Mutex
	depth    int       // guarded by mu: corks not yet uncorked
	buf      []byte    // guarded by mu: the kept bytes
	deadline time.Time // guarded by mu: the socket's write deadline (zero: none)
	wrote    bool      // guarded by mu: a write passed through
}

// Write keeps p while corked, and writes it otherwise.
func (c *corkConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wrote = true
	if c.depth == 0 {
		if !c.deadline.IsZero() {
			c.deadline = time.Time{}
			_ = c.Conn.SetWriteDeadline(c.deadline)
		}
		return c.Conn.Write(p)
	}
	if len(c.buf)+len(p) > maxCorked {
		if err := c.flushLocked(); err != nil {
			return 0, err
		}
		if len(p) > maxCorked {
			return c.Conn.Write(p)
		}
	}
	c.buf = append(c.buf, p...)
	return len(p), nil
}

// cork keeps what is written until the matching uncork; what leaves
// meanwhile (past maxCorked) and at the uncork leaves by deadline, or up
// to an eighth of the time it gives before. A nil corkConn does nothing.
func (c *corkConn) cork(deadline time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.depth++
	if c.deadline.After(deadline) || c.deadline.Before(deadline.Add(-max(time.Until(deadline), 0)/8)) {
		c.deadline = deadline
		_ = c.Conn.SetWriteDeadline(deadline)
	}
}

// uncork ends a cork; the last one writes what was kept.
func (c *corkConn) uncork() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.depth--
	if c.depth > 0 || len(c.buf) == 0 {
		return nil
	}
	return c.flushLocked()
}

// carries reports whether a write passed through c: the handshake's, when
// the transport used the connection it dialed for it. A nil corkConn
// carries nothing.
func (c *corkConn) carries() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wrote
}

// flushLocked writes the kept bytes.
func (c *corkConn) flushLocked() error {
	b := c.buf
	c.buf = c.buf[:0]
	for len(b) > 0 {
		n, err := c.Conn.Write(b)
		if err != nil {
			return err
		}
		b = b[n:]
	}
	if cap(c.buf) > maxCorked {
		c.buf = nil // a rare large write: not kept for the connection's life
	}
	return nil
}

// dialedKey carries, in a handshake's context, where the dialer leaves
// the corkConn it made (an *atomic.Pointer[corkConn]). Should the
// transport hand the handshake another connection than the one dialed,
// the cork is of a connection the session does not write to: its writes
// then leave as the library makes them.
type dialedKey struct{}

// corking returns hc with a transport that corks what it dials for a
// handshake, and what to call when done with it; hc itself when its
// transport is not an *http.Transport.
func corking(hc *http.Client) (*http.Client, func()) {
	var t *http.Transport
	switch rt := hc.Transport.(type) {
	case nil:
		t = http.DefaultTransport.(*http.Transport).Clone()
	case *http.Transport:
		t = rt.Clone()
	default:
		return hc, func() {}
	}
	dial := t.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if at, ok := ctx.Value(dialedKey{}).(*atomic.Pointer[corkConn]); ok {
			c := &corkConn{Conn: nc}
			at.Store(c)
			return c, nil
		}
		return nc, nil
	}
	out := *hc
	out.Transport = t
	return &out, t.CloseIdleConnections
}
