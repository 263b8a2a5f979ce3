package hub_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/metrics"
)

// TestSessionQueueBoundClosesFlood: an agent that reads nothing after its
// hello and sends frames of sessions it does not hold, each answered with
// a notice queued for it, is closed as too slow once what waits for it
// passes the sessions' bound, rather than growing the server's memory
// without end.
func TestSessionQueueBoundClosesFlood(t *testing.T) {
	s := newServer(t)
	reg := metrics.NewRegistry()
	reg.MustRegister(s.hub.Metrics()...)
	_, tok := s.agent("flood")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.srv.URL, "http")+"/connect", &websocket.DialOptions{
		HTTPHeader: map[string][]string{"Authorization": {"Bearer " + tok}}, Subprotocols: []string{connproto.Subprotocol}})
	must(t, err)
	defer ws.CloseNow()
	must(t, ws.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":"h","method":"hello","params":{"holding":[],"sessionBatches":true}}`)))
	if _, _, err := ws.Read(ctx); err != nil { // the answer to hello; from now on the agent reads nothing
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i := 0; b.Len() < 3<<20; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"nope-%d","seq":1,"text":"x"}}`, i)
	}
	b.WriteByte(']')
	// About 30,000 notices a batch, some 4 MiB queued: past the default
	// bound (37 MiB) within 10 batches.
	closed := false
	for range 40 {
		if err := ws.Write(ctx, websocket.MessageText, b.Bytes()); err != nil {
			closed = true
			break
		}
	}
	if !closed {
		t.Fatal("the connection took 120 MiB of frames that queue notices without being closed")
	}
	s.wantSamples(reg, map[string]float64{`switchboard_hub_closes_total{reason="slow"}`: 1})
}
