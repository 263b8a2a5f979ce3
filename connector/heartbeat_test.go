package connector_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/internal/pipenet"
	"github.com/switchboard-dev/switchboard/internal/testwait"
)

// pingCountingServer is a bare connector-protocol server on an in-process
// network: it answers hello with the heartbeat interval, pings every
// interval when pings is set, and counts the pings the client sends. It
// returns the client to reach it with.
func pingCountingServer(t *testing.T, interval time.Duration, pings bool) (hc *http.Client, received *atomic.Int64) {
	received = new(atomic.Int64)
	network := pipenet.New()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{connproto.Subprotocol},
			OnPingReceived: func(context.Context, []byte) bool { received.Add(1); return true }})
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx, cancel := context.WithCancel(r.Context()) // its end ends the pings
		defer cancel()
		if _, _, err := ws.Read(ctx); err != nil { // hello
			return
		}
		res, _ := json.Marshal(connproto.HelloResult{HeartbeatMillis: interval.Milliseconds()})
		hello, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": connproto.MethodHello, "result": json.RawMessage(res)})
		if ws.Write(ctx, websocket.MessageText, hello) != nil {
			return
		}
		if pings {
			go func() {
				for {
					select {
					case <-ctx.Done():
						return
					case <-time.After(interval):
					}
					pctx, cancel := context.WithTimeout(ctx, interval)
					_ = ws.Ping(pctx)
					cancel()
				}
			}()
		}
		for {
			if _, _, err := ws.Read(ctx); err != nil {
				return
			}
		}
	})}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(network)
	}()
	tr := &http.Transport{DialContext: network.DialContext}
	t.Cleanup(func() {
		_ = srv.Close()
		<-served
		tr.CloseIdleConnections()
	})
	return &http.Client{Transport: tr}, received
}

// TestConnectorPingsOnlyASilentServer checks the heartbeat rule from the
// connector's side: it does not ping a server that pings it every
// interval, and does ping one it has not heard from. It runs in a synctest
// bubble, on an in-process network: the ten intervals pass on the
// bubble's clock, and the counts are exact.
func TestConnectorPingsOnlyASilentServer(t *testing.T) {
	const interval = 200 * time.Millisecond
	for _, tc := range []struct {
		name        string
		serverPings bool
		want        int64
	}{
		{"server pings", true, 0}, // heard from every interval: never quiet for 1.5
		// Quiet for 1.5 intervals from the second tick on: a ping at each
		// of ticks 2 to 10 (the server's pongs are not frames it sends).
		{"server silent", false, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				hc, received := pingCountingServer(t, interval, tc.serverPings)
				c := &connector.Client{URLs: []string{"http://switchboard.test"}, Token: "sba_test", HTTPClient: hc,
					Handler: connector.HandlerFunc(func(context.Context, *connector.Work) {})}
				runClient(t, c)
				testwait.Advance(10 * interval) // the pings due at the tenth interval are answered
				if n := received.Load(); n != tc.want {
					t.Fatalf("the client pinged %d times in 10 intervals, want %d", n, tc.want)
				}
			})
		})
	}
}
