package connector

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// countConn counts the writes made to it.
type countConn struct {
	net.Conn
	writes atomic.Int64
}

func (c *countConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestCorkKeepsOrderAndWritesOnce: corked writes leave in one write, in
// order, at the last uncork; uncorked ones pass straight through; past
// maxCorked the kept bytes leave at once.
func TestCorkKeepsOrderAndWritesOnce(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	cc := &countConn{Conn: a}
	c := &corkConn{Conn: cc}
	var got bytes.Buffer
	var wg sync.WaitGroup
	wg.Go(func() {
		buf := make([]byte, 1<<16)
		for {
			n, err := b.Read(buf)
			got.Write(buf[:n])
			if err != nil {
				return
			}
		}
	})
	deadline := time.Now().Add(time.Minute)
	c.cork(deadline)
	c.cork(deadline)
	for _, s := range []string{"one ", "two ", "three "} {
		if _, err := c.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	must(t, c.uncork())
	if n := cc.writes.Load(); n != 0 {
		t.Fatalf("%d writes before the last uncork", n)
	}
	must(t, c.uncork())
	if n := cc.writes.Load(); n != 1 {
		t.Fatalf("%d writes at the last uncork, want 1", n)
	}
	if _, err := c.Write([]byte("four ")); err != nil {
		t.Fatal(err)
	}
	if n := cc.writes.Load(); n != 2 {
		t.Fatalf("an uncorked write was kept (%d writes)", n)
	}
	c.cork(deadline)
	big := strings.Repeat("x", maxCorked)
	for _, s := range []string{"five ", big, "six "} {
		if _, err := c.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if n := cc.writes.Load(); n != 4 {
		t.Fatalf("past maxCorked: %d writes, want the kept bytes each time (4)", n)
	}
	huge := strings.Repeat("h", maxCorked+1)
	if _, err := c.Write([]byte(huge)); err != nil {
		t.Fatal(err)
	}
	if n := cc.writes.Load(); n != 6 {
		t.Fatalf("a write over maxCorked: %d writes, want the kept bytes and the write (6)", n)
	}
	must(t, c.uncork())
	if n := cc.writes.Load(); n != 6 {
		t.Fatalf("nothing kept, yet uncork wrote (%d writes)", n)
	}
	a.Close()
	wg.Wait()
	if want := "one two three four five " + big + "six " + huge; got.String() != want {
		t.Fatalf("read %.60q…, want %.60q…", got.String(), want)
	}
	var nilCork *corkConn
	nilCork.cork(deadline)
	must(t, nilCork.uncork())
}

// TestCorkingClient: a connection the corking client dials for a
// handshake is corked, and a message longer than the WebSocket library's
// buffer then leaves in one write; a client whose transport is not an
// *http.Transport is used as it is.
func TestCorkingClient(t *testing.T) {
	received := make(chan int, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ws.SetReadLimit(1 << 20)
		_, data, err := ws.Read(r.Context())
		if err == nil {
			received <- len(data)
		}
	}))
	defer srv.Close()
	var dialed *countConn
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		dialed = &countConn{Conn: nc}
		return dialed, nil
	}}
	hc, done := corking(&http.Client{Transport: tr})
	defer done()
	at := new(atomic.Pointer[corkConn])
	ctx := context.WithValue(context.Background(), dialedKey{}, at)
	ws, _, err := websocket.Dial(ctx, srv.URL, &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	cork := at.Load()
	if cork == nil || cork.Conn != dialed {
		t.Fatal("the dialed connection is not corked")
	}
	if !cork.carries() {
		t.Fatal("the handshake did not pass through the cork of the connection dialed for it")
	}
	if (&corkConn{}).carries() || (*corkConn)(nil).carries() {
		t.Fatal("a cork no write passed through carries the connection")
	}
	before := dialed.writes.Load()
	msg := bytes.Repeat([]byte("y"), 20<<10) // five times the library's buffer
	cork.cork(time.Now().Add(time.Minute))
	must(t, ws.Write(ctx, websocket.MessageText, msg))
	must(t, cork.uncork())
	if n := dialed.writes.Load() - before; n != 1 {
		t.Errorf("a 20 KiB message left in %d writes, want 1", n)
	}
	if n := <-received; n != len(msg) {
		t.Errorf("the server read %d bytes, want %d", n, len(msg))
	}

	other := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) { return tr.RoundTrip(r) })}
	if got, _ := corking(other); got != other {
		t.Error("a client with a transport of its own was changed")
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// deadlineConn records the write deadlines it is given.
type deadlineConn struct {
	net.Conn
	deadlines []time.Time
}

func (d *deadlineConn) Write(p []byte) (int, error) { return len(p), nil }

func (d *deadlineConn) SetWriteDeadline(t time.Time) error {
	d.deadlines = append(d.deadlines, t)
	return nil
}

// TestCorkDeadlineKept: corks that follow each other within their slack
// keep the socket's deadline, never later than asked nor earlier by more
// than the slack; one that needs a later one sets it; an uncorked write
// clears it.
func TestCorkDeadlineKept(t *testing.T) {
	d := &deadlineConn{}
	c := &corkConn{Conn: d}
	start := time.Now()
	for i := range 100 {
		deadline := start.Add(writeTimeout + time.Duration(i)*time.Millisecond)
		c.cork(deadline)
		_, err := c.Write([]byte("frame"))
		must(t, err)
		must(t, c.uncork())
		if set := d.deadlines[len(d.deadlines)-1]; set.After(deadline) || set.Before(deadline.Add(-writeTimeout/8)) {
			t.Fatalf("cork %d: the socket's deadline %v is not within the slack before the one asked, %v", i, set, deadline)
		}
	}
	if n := len(d.deadlines); n != 1 {
		t.Errorf("%d deadlines set for 100 corks within 100 ms, want 1", n)
	}
	c.cork(start.Add(time.Hour))
	must(t, c.uncork())
	if n := len(d.deadlines); n != 2 {
		t.Errorf("a cork that needs a later deadline did not set it (%d set)", n)
	}
	_, err := c.Write([]byte("ping"))
	must(t, err)
	if last := d.deadlines[len(d.deadlines)-1]; len(d.deadlines) != 3 || !last.IsZero() {
		t.Errorf("an uncorked write went out under the deadline %v", last)
	}
}
