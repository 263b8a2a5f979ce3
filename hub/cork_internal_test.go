package hub

import (
	"bufio"
	"bytes"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// recordConn records the writes and write deadlines it is given.
type recordConn struct {
	net.Conn
	mu        sync.Mutex
	writes    [][]byte
	deadlines []time.Time
}

func (r *recordConn) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, bytes.Clone(p))
	return len(p), nil
}

func (r *recordConn) SetWriteDeadline(t time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deadlines = append(r.deadlines, t)
	return nil
}

func (r *recordConn) all() (n int, joined string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, w := range r.writes {
		b.Write(w)
	}
	return len(r.writes), b.String()
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestCorkOneWritePerMessage: a message written through the small buffer
// while corked leaves in one write, by the deadline given; uncorked, the
// buffer's flushes pass straight through; an idle connection keeps no
// buffer.
func TestCorkOneWritePerMessage(t *testing.T) {
	rec := &recordConn{}
	c := &corkConn{Conn: rec}
	bw := bufio.NewWriterSize(c, connWriteBuffer)
	msg := strings.Repeat("x", 1000) // four times the buffer

	deadline := time.Now().Add(time.Second)
	c.cork(deadline)
	bw.WriteString("header")
	bw.WriteString(msg)
	must(t, bw.Flush())
	if n, _ := rec.all(); n != 0 {
		t.Fatalf("%d writes while corked", n)
	}
	must(t, c.uncork())
	if n, got := rec.all(); n != 1 || got != "header"+msg {
		t.Fatalf("%d writes of %d bytes, want one of %d", n, len(got), len("header")+len(msg))
	}
	if len(rec.deadlines) != 1 || !rec.deadlines[0].Equal(deadline) {
		t.Errorf("write deadlines %v, want the message's (%v)", rec.deadlines, deadline)
	}
	if c.buf != nil || c.depth != 0 {
		t.Errorf("an idle connection keeps a buffer (%v) or a cork (%d)", c.buf, c.depth)
	}

	bw.WriteString(msg)
	must(t, bw.Flush())
	if n, _ := rec.all(); n < 3 {
		t.Errorf("uncorked, the buffer's flushes were joined: %d writes in all", n)
	}
	if last := rec.deadlines[len(rec.deadlines)-1]; !last.IsZero() {
		t.Errorf("an uncorked write went out under the cork's deadline %v", last)
	}
}

// TestCorkDeadlineKept: corks that follow each other within their slack
// keep the socket's deadline, never later than a cork asked nor earlier
// by more than the slack; one that needs a later deadline sets it.
func TestCorkDeadlineKept(t *testing.T) {
	rec := &recordConn{}
	c := &corkConn{Conn: rec}
	start := time.Now()
	for i := range 100 {
		deadline := start.Add(10*time.Second + time.Duration(i)*time.Millisecond)
		c.cork(deadline)
		_, err := c.Write([]byte("frame"))
		must(t, err)
		must(t, c.uncork())
		if set := rec.deadlines[len(rec.deadlines)-1]; set.After(deadline) || set.Before(deadline.Add(-10*time.Second/8)) {
			t.Fatalf("cork %d: the socket's deadline %v is not within the slack before the one asked, %v", i, set, deadline)
		}
	}
	if n := len(rec.deadlines); n != 1 {
		t.Errorf("%d deadlines set for 100 corks 100 ms apart in all, want 1", n)
	}
	c.cork(start.Add(time.Hour))
	must(t, c.uncork())
	c.cork(start.Add(time.Second))
	must(t, c.uncork())
	if n := len(rec.deadlines); n != 3 {
		t.Errorf("corks that need a later deadline, then an earlier one, did not set them (%d set)", n)
	}
}

// TestCorkKeepsOrder: writes from other goroutines while corked (the
// library's pongs), nested corks and a message past maxCorked all leave
// in the order they were written.
func TestCorkKeepsOrder(t *testing.T) {
	rec := &recordConn{}
	c := &corkConn{Conn: rec}
	var want strings.Builder
	write := func(s string) {
		t.Helper()
		if _, err := c.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
		want.WriteString(s)
	}
	c.cork(time.Now().Add(time.Minute))
	write("a1")
	done := make(chan struct{})
	go func() { // another writer, corked inside the first's cork
		defer close(done)
		c.cork(time.Now().Add(time.Minute))
		if _, err := c.Write([]byte("b1")); err != nil {
			t.Error(err)
		}
		if err := c.uncork(); err != nil {
			t.Error(err)
		}
	}()
	<-done
	want.WriteString("b1")
	if n, _ := rec.all(); n != 0 {
		t.Fatalf("the inner uncork wrote (%d writes): only the last one writes", n)
	}
	write("a2")
	big := strings.Repeat("y", maxCorked)
	write(big) // past the bound: what is kept, then it, at once
	if n, _ := rec.all(); n != 2 {
		t.Fatalf("%d writes after a message past the bound, want the kept bytes and the message", n)
	}
	write("a3")
	must(t, c.uncork())
	if _, got := rec.all(); got != want.String() {
		t.Fatalf("the bytes left out of order (%d bytes, want %d)", len(got), want.Len())
	}
}
