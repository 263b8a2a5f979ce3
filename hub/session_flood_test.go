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
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/hub"
	"github.com/switchboard-dev/switchboard/metrics"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/session"
)

// TestSessionQueueBoundClosesFlood: an agent that reads nothing after its
// hello and sends frames of sessions it does not hold, each answered with
// a notice queued for it, is closed as too slow once what waits for it
// passes the sessions' bound, rather than growing the server's memory
// without end. Nothing else may close it first: the agent, which reads
// nothing, answers no ping, and the writes to it wait, so the heartbeat
// and the write timeout are an hour, past any run of the test however
// slow the machine. The sessions are bounded to 4 (a bound of some 3 MiB
// rather than the default 37), so that a loaded machine need not work
// through a dozen batches of notices before the bound is passed.
func TestSessionQueueBoundClosesFlood(t *testing.T) {
	s := newServerWithSessions(t, session.Config{MaxSessions: 4}, func(_ *relay.Service, h *hub.Config, _ *httpapi.Config) {
		h.HeartbeatInterval, h.WriteTimeout = time.Hour, time.Hour
	})
	bound := s.sessions.QueueBound()
	reg := metrics.NewRegistry()
	reg.MustRegister(s.hub.Metrics()...)
	_, tok := s.agent("flood")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // only a hang outlasts it
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
	// About 30,000 notices a batch, some 4 MiB queued: past the bound
	// within a few batches, once the socket's buffers are full. The server
	// closes the connection as slow; the agent learns it when a write
	// fails, or (its kernel still taking what it writes while the server
	// waits for a close handshake the agent never reads) from the count.
	slow := `switchboard_hub_closes_total{reason="slow"}`
	closed, sent := false, 0
	for range 40 {
		if s.hubSamples(reg)[slow] > 0 {
			closed = true
			break
		}
		sent++
		if err := ws.Write(ctx, websocket.MessageText, b.Bytes()); err != nil {
			closed = true
			break
		}
	}
	if !closed {
		t.Fatalf("the connection took 120 MiB of frames that queue notices, past a bound of %d bytes, without being closed", bound)
	}
	t.Logf("closed at batch %d", sent)
	s.wantSamples(reg, map[string]float64{`switchboard_hub_closes_total{reason="slow"}`: 1, `switchboard_hub_closes_total{reason="heartbeat"}`: 0})
}
