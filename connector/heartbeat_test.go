package connector_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/connproto"
)

// pingCountingServer is a bare connector-protocol server: it answers hello
// with the heartbeat interval, pings every interval when pings is set, and
// counts the pings the client sends.
func pingCountingServer(t *testing.T, interval time.Duration, pings bool) (url string, received *atomic.Int64) {
	received = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{connproto.Subprotocol},
			OnPingReceived: func(context.Context, []byte) bool { received.Add(1); return true }})
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx := r.Context()
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
				for ctx.Err() == nil {
					time.Sleep(interval)
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
	}))
	t.Cleanup(srv.Close)
	return srv.URL, received
}

// TestConnectorPingsOnlyASilentServer checks the heartbeat rule from the
// connector's side: it does not ping a server that pings it every
// interval, and does ping one it has not heard from.
func TestConnectorPingsOnlyASilentServer(t *testing.T) {
	const interval = 200 * time.Millisecond
	for _, tc := range []struct {
		name          string
		serverPings   bool
		atLeast, most int64
	}{
		{"server pings", true, 0, 2}, // a stalled server goroutine may let one or two through
		{"server silent", false, 4, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, received := pingCountingServer(t, interval, tc.serverPings)
			c := &connector.Client{URLs: []string{url}, Token: "sba_test",
				Handler: connector.HandlerFunc(func(context.Context, *connector.Work) {})}
			runClient(t, c)
			time.Sleep(10 * interval)
			if n := received.Load(); n < tc.atLeast || n > tc.most {
				t.Fatalf("the client pinged %d times in 10 intervals, want %d to %d", n, tc.atLeast, tc.most)
			}
		})
	}
}
