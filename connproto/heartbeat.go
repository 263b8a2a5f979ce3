package connproto

import (
	"context"
	"sync/atomic"
	"time"
)

// Heartbeats (docs/connector-protocol.md, "Heartbeats"). An idle
// connection costs a ping and its pong every interval, which at 100,000
// agents is most of what a deployment does. Both ends want to know that the
// other is there, and one exchange per interval tells both: so the server
// pings an agent only when it has heard nothing from it (no frame, no ping)
// for a whole interval, and a connector pings only when it has heard
// nothing from the server for ConnectorPingAfter intervals. An idle agent
// is pinged by the server every interval and never pings; the server does
// not ping an agent that pings on its own schedule or is busy with work.

// ConnectorPingAfter is how many heartbeat intervals of silence from the
// server make a connector ping it: more than one, so that the server's
// pings, sent every interval, keep it from pinging.
const ConnectorPingAfter = 1.5

// LastHeard is when the other end last sent a frame or a ping. The zero
// value has heard nothing.
type LastHeard struct{ at atomic.Int64 } // Unix nanoseconds

// Now records that the other end was heard.
func (l *LastHeard) Now() { l.at.Store(time.Now().UnixNano()) }

// Ping records a ping from the other end and lets the WebSocket answer it:
// it is an OnPingReceived for coder/websocket's accept and dial options.
func (l *LastHeard) Ping(context.Context, []byte) bool {
	l.Now()
	return true
}

// Within reports whether the other end was heard within d.
func (l *LastHeard) Within(d time.Duration) bool {
	at := l.at.Load()
	return at != 0 && time.Since(time.Unix(0, at)) < d
}
