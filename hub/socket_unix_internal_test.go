//go:build unix

package hub

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	must(t, err)
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// TestPooledReadLoneMessage: over a socket, a message longer than the
// reader's buffer that arrives alone costs one read of the socket, and
// once its bytes are read no pooled buffer is held while the connection
// waits for the next.
func TestPooledReadLoneMessage(t *testing.T) {
	client, server := tcpPair(t)
	pooled := pooledReader(server)
	if pooled == nil {
		t.Fatal("no pooled reader for a TCP connection")
	}
	reads := 0
	c := &readAheadConn{Conn: server, pooled: func() (*[]byte, int, error) { reads++; return pooled() }}
	lone := messages(1, 1100)
	_, err := client.Write(lone)
	must(t, err)
	p := make([]byte, connReadBuffer)
	var got []byte
	for len(got) < len(lone) {
		n, err := c.Read(p)
		must(t, err)
		got = append(got, p[:n]...)
	}
	if !bytes.Equal(got, lone) {
		t.Fatal("the message was not read whole and in order")
	}
	if reads != 1 {
		t.Errorf("%d reads of the socket for a lone message of %d bytes, want 1", reads, len(lone))
	}
	if c.buf != nil || len(c.pending) > 0 {
		t.Fatal("a pooled buffer is held after its bytes were read")
	}

	// The next read waits for bytes; then the end of the connection.
	done := make(chan error, 1)
	go func() {
		n, err := c.Read(p)
		if err == nil && !bytes.Equal(p[:n], []byte("next")) {
			err = errors.New("read " + string(p[:n]))
		}
		done <- err
	}()
	time.AfterFunc(10*time.Millisecond, func() { _, _ = client.Write([]byte("next")) })
	must(t, <-done)
	client.Close()
	if _, err := c.Read(p); err != io.EOF {
		t.Fatalf("read after the peer closed: %v, want EOF", err)
	}
}

// TestPooledReadQueuedMessages: messages queued in the socket are read in
// order, in few reads, through the reader's small buffer.
func TestPooledReadQueuedMessages(t *testing.T) {
	client, server := tcpPair(t)
	c := &readAheadConn{Conn: server, pooled: pooledReader(server)}
	queued := messages(50, 1100)
	go func() {
		_, _ = client.Write(queued)
		client.Close()
	}()
	got := readAll(t, c, 2048)
	if !bytes.Equal(got, queued) {
		t.Fatalf("read %d bytes, not the %d queued in order", len(got), len(queued))
	}
	if c.buf != nil {
		t.Error("a pooled buffer is kept after its bytes were read")
	}
}

// TestPooledReadClosed: a read of a connection closed under it fails
// and holds no buffer.
func TestPooledReadClosed(t *testing.T) {
	_, server := tcpPair(t)
	c := &readAheadConn{Conn: server, pooled: pooledReader(server)}
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, connReadBuffer))
		done <- err
	}()
	time.AfterFunc(10*time.Millisecond, func() { server.Close() })
	if err := <-done; err == nil {
		t.Fatal("a read of a closed connection succeeded")
	}
	if c.buf != nil {
		t.Error("a failed read holds a pooled buffer")
	}
}

// TestPooledReaderWithoutSocket: a connection without a socket of its own
// (a pipe) reads as before.
func TestPooledReaderWithoutSocket(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if pooledReader(a) != nil {
		t.Fatal("a pooled reader for a pipe")
	}
}
