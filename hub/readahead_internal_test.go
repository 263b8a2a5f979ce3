package hub

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
)

// socketConn reads as a socket does: each of its chunks is what the kernel
// holds at one moment, and a read takes what fits of the current chunk.
type socketConn struct {
	net.Conn
	chunks [][]byte
	err    error // returned with the last chunk's bytes
	reads  int
}

func (s *socketConn) Read(p []byte) (int, error) {
	s.reads++
	if len(s.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.chunks[0])
	s.chunks[0] = s.chunks[0][n:]
	if len(s.chunks[0]) == 0 {
		s.chunks = s.chunks[1:]
		if len(s.chunks) == 0 && s.err != nil {
			return n, s.err
		}
	}
	return n, nil
}

// messages returns n messages of size bytes each, joined, each told apart
// by its first byte.
func messages(n, size int) []byte {
	var b bytes.Buffer
	for i := range n {
		b.WriteString(strings.Repeat(string(rune('a'+i%26)), size))
	}
	return b.Bytes()
}

// readAll reads r through a reader of the connection's size, in reads of
// size bytes at most, as the WebSocket library reads frames.
func readAll(t *testing.T, r io.Reader, size int) []byte {
	t.Helper()
	br := bufio.NewReaderSize(r, connReadBuffer)
	var out []byte
	p := make([]byte, size)
	for {
		n, err := br.Read(p)
		out = append(out, p[:n]...)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadAheadQueuedMessages: messages that queued in the kernel are read
// in a few reads of the socket, not two each, and in order.
func TestReadAheadQueuedMessages(t *testing.T) {
	queued := messages(20, 1100)
	sock := &socketConn{chunks: [][]byte{bytes.Clone(queued)}}
	c := &readAheadConn{Conn: sock}
	got := readAll(t, c, 2048)
	if !bytes.Equal(got, queued) {
		t.Fatalf("read %d bytes, not the %d queued in order", len(got), len(queued))
	}
	// 512 bytes, then 32 KiB holding the rest, then the end.
	if sock.reads > 3 {
		t.Errorf("%d reads of the socket for 20 queued messages, want at most 3", sock.reads)
	}
	if c.buf != nil {
		t.Error("a pooled buffer is kept after its bytes were read")
	}
}

// TestReadAheadIdle: a read that drained the socket makes the next one
// go straight into the reader's buffer, so a connection waiting for its
// next message holds no pooled buffer.
func TestReadAheadIdle(t *testing.T) {
	lone := messages(1, 1100)
	next := messages(1, 100)
	sock := &socketConn{chunks: [][]byte{bytes.Clone(lone), bytes.Clone(next)}}
	c := &readAheadConn{Conn: sock}
	p := make([]byte, connReadBuffer)
	var got []byte
	for len(got) < len(lone) {
		n, err := c.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p[:n]...)
	}
	if !bytes.Equal(got, lone) {
		t.Fatal("the lone message was not read whole")
	}
	if c.busy || c.buf != nil || len(c.pending) > 0 {
		t.Fatalf("after the socket was drained: busy %v, buffer held %v, %d bytes pending", c.busy, c.buf != nil, len(c.pending))
	}
	n, err := c.Read(p)
	if err != nil || !bytes.Equal(p[:n], next) {
		t.Fatalf("next read: %q, %v", p[:n], err)
	}
	if c.buf != nil {
		t.Error("a read straight into the reader's buffer took a pooled one")
	}
}

// TestReadAheadErrorAfterItsBytes: the bytes read with an error are
// returned before it.
func TestReadAheadErrorAfterItsBytes(t *testing.T) {
	want := messages(4, 1100)
	reset := errors.New("connection reset")
	sock := &socketConn{chunks: [][]byte{bytes.Clone(want)}, err: reset}
	c := &readAheadConn{Conn: sock}
	br := bufio.NewReaderSize(c, connReadBuffer)
	got, err := io.ReadAll(br)
	if !errors.Is(err, reset) {
		t.Fatalf("err %v, want %v", err, reset)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d of the %d bytes before the error", len(got), len(want))
	}
}
