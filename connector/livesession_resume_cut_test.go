package connector_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/internal/pipenet"
)

// TestSessionEndsWhenResumeIsCut: a session whose connection drops is
// suspended for its grace; the next connection asks to resume it, and
// drops before the answer, and no server answers after that: the session
// ends when its grace runs out (disconnected), as if no resume had been
// asked. It runs in a synctest bubble, on the in-process network: the
// grace runs out on the bubble's clock, which a loaded machine does not
// stretch.
func TestSessionEndsWhenResumeIsCut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var conns atomic.Int32
		network := pipenet.New()
		srv := &httptest.Server{Listener: network, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := conns.Add(1)
			if n > 2 {
				http.Error(w, "down", http.StatusBadGateway) // the server stays unreachable
				return
			}
			ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{connproto.Subprotocol}})
			if err != nil {
				return
			}
			defer ws.CloseNow()
			ctx := context.Background()
			_, hello, err := ws.Read(ctx)
			if err != nil {
				return
			}
			var f connproto.Frame
			_ = json.Unmarshal(hello, &f)
			res, _ := connproto.Encode(connproto.Result{JSONRPC: "2.0", ID: f.ID, Result: connproto.HelloResult{Server: "fake", HeartbeatMillis: 60000}})
			_ = ws.Write(ctx, websocket.MessageText, res)
			if n == 1 {
				offer, _ := json.Marshal(connproto.SessionOffer{SessionID: "s1", From: connproto.SessionPeer{ID: "p", Handle: "p"},
					Window: connproto.SessionWindow{Frames: 8, Bytes: 1 << 20}, MaxFrameBytes: connproto.MaxSessionFrameBytes, GraceMillis: 1500})
				req, _ := connproto.Encode(connproto.Request{JSONRPC: "2.0", ID: connproto.SessionRequestPrefix + "s1", Method: connproto.MethodSessionOpen, Params: json.RawMessage(offer)})
				_ = ws.Write(ctx, websocket.MessageText, req)
				_, _, _ = ws.Read(ctx) // the accept
				return                 // connection 1 drops
			}
			for { // connection 2: drop as soon as the SessionResume arrives, unanswered
				_, data, err := ws.Read(ctx)
				if err != nil || strings.Contains(string(data), connproto.MethodSessionResume) {
					return
				}
			}
		})}}
		srv.Start()
		defer srv.Close()
		tr := &http.Transport{DialContext: network.DialContext}
		defer tr.CloseIdleConnections()

		got := make(chan *connector.Session, 1)
		c := &connector.Client{URLs: []string{srv.URL}, Token: "sba_x", Logger: testLogger(), HTTPClient: &http.Client{Transport: tr},
			Sessions: connector.SessionHandlerFunc(func(_ context.Context, r *connector.SessionRequest) {
				s, err := r.Accept()
				if err == nil {
					got <- s
				}
			})}
		ctx, cancel := context.WithCancel(context.Background())
		ran := make(chan struct{})
		go func() {
			defer close(ran)
			_ = c.Run(ctx)
		}()
		defer func() { cancel(); <-ran }()
		var sess *connector.Session
		select {
		case sess = <-got:
		case <-time.After(5 * time.Second):
			t.Fatal("no session")
		}
		select {
		case <-sess.Done():
			var se *connector.SessionError
			if !errors.As(sess.Err(), &se) || se.Reason != connproto.SessionReasonDisconnected {
				t.Fatalf("ended with %v", sess.Err())
			}
		case <-time.After(8 * time.Second): // the grace is 1.5 s
			t.Fatalf("the session is still open 8 s after its connection dropped (grace 1.5 s, %d connection attempts)", conns.Load())
		}
	})
}
