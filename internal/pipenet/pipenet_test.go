package pipenet_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
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
