package pipenet_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchboard-dev/switchboard/internal/pipenet"
)

// TestServesHTTPOnTheBubblesClock: an HTTP server on the network answers
// a client that dials it, and a handler's wait of an hour passes on the
// bubble's clock, which only runs because nothing blocks on a real socket.
func TestServesHTTPOnTheBubblesClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := pipenet.New()
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			time.Sleep(time.Hour)
			_, _ = io.WriteString(w, "late")
		})}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(n) }()
		tr := &http.Transport{DialContext: n.DialContext}
		defer tr.CloseIdleConnections()
		start := time.Now()
		resp, err := (&http.Client{Transport: tr}).Get("http://anywhere.test/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if string(body) != "late" || time.Since(start) != time.Hour {
			t.Fatalf("got %q after %v, want late after an hour", body, time.Since(start))
		}
		_ = srv.Close()
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Fatalf("Serve returned %v", err)
		}
		if _, err := n.DialContext(context.Background(), "tcp", "x"); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("a dial after Close: %v, want net.ErrClosed", err)
		}
	})
}

// TestCableCutSilently: once its cable is cut, a connection's reads and
// writes wait, and the other end sees nothing, until it is closed.
func TestCableCutSilently(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		near, far := net.Pipe()
		defer far.Close()
		c := pipenet.NewCable(near)
		go func() { _, _ = far.Write([]byte("before")) }()
		buf := make([]byte, 16)
		if n, err := c.Read(buf); err != nil || string(buf[:n]) != "before" {
			t.Fatalf("read %q, %v before the cut", buf[:n], err)
		}
		c.Cut()
		read, wrote := make(chan error, 1), make(chan error, 1)
		go func() { _, err := c.Read(buf); read <- err }()
		go func() { _, err := c.Write([]byte("after")); wrote <- err }()
		go func() { _, _ = far.Write([]byte("lost")) }()
		synctest.Wait() // each of them returned, or waits for good
		if len(read) != 0 || len(wrote) != 0 {
			t.Fatal("a read or write returned after the cut, before the close")
		}
		_ = far.SetReadDeadline(time.Now())
		if n, err := far.Read(buf); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("the far end read %q, %v after the cut, want nothing", buf[:n], err)
		}
		must(t, c.Close())
		if err := <-read; !errors.Is(err, net.ErrClosed) {
			t.Fatalf("the read ended with %v, want net.ErrClosed", err)
		}
		if err := <-wrote; !errors.Is(err, net.ErrClosed) {
			t.Fatalf("the write ended with %v, want net.ErrClosed", err)
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
