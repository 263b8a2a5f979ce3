package hub

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
)

// After the upgrade a connection keeps, for as long as it lives, the
// buffered reader and writer that Hijack hands over; net/http's are 4 KiB
// each, more than the rest of an idle connection's heap. The WebSocket
// library reads frame headers through the reader and larger payloads
// straight into its own buffers, and it writes a frame's header and payload
// through the writer and flushes at the end of the frame. The hub corks
// the connection under the writer while it writes a message (cork.go), so
// a frame that does not fit still leaves in one system call; the
// connection under the reader reads ahead while messages queue
// (readahead.go).
const (
	connReadBuffer  = 512
	connWriteBuffer = 256
)

// smallBuffers is a ResponseWriter whose Hijack hands over the connection
// with small buffers in place of net/http's, its writer's over a corkConn
// (cork.go), which Hijack keeps in cork, its reader's over a
// readAheadConn (readahead.go).
type smallBuffers struct {
	http.ResponseWriter
	cork *corkConn
}

// Unwrap returns the ResponseWriter it wraps, for http.ResponseController.
func (w *smallBuffers) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack takes over the connection. Bytes the client sent after its request
// that net/http had already read are kept in front of the connection.
func (w *smallBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	if err := brw.Writer.Flush(); err != nil {
		nc.Close()
		return nil, nil, err
	}
	if n := brw.Reader.Buffered(); n > 0 {
		b, _ := brw.Reader.Peek(n)
		nc = &prefixedConn{Conn: nc, pending: bytes.Clone(b)}
	}
	w.cork = &corkConn{Conn: nc}
	nc = &readAheadConn{Conn: nc, pooled: pooledReader(nc)}
	return nc, bufio.NewReadWriter(bufio.NewReaderSize(nc, connReadBuffer), bufio.NewWriterSize(w.cork, connWriteBuffer)), nil
}

// prefixedConn is a connection whose first reads return bytes read from it
// before.
type prefixedConn struct {
	net.Conn
	pending []byte
}

// Read returns the pending bytes first, then reads the connection.
func (c *prefixedConn) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		if len(c.pending) == 0 {
			c.pending = nil
		}
		return n, nil
	}
	return c.Conn.Read(p)
}
