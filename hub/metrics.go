package hub

import (
	"time"

	"github.com/coder/websocket"
	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/metrics"
)

// closeReasons name why connections end, for switchboard_hub_closes_total:
// the server's close codes, and "agent" for a connection the agent (or the
// network) ended.
var closeReasons = []string{"normal", "restart", "protocol", "replaced", "unauthorized", "gone", "slow", "heartbeat", "agent"}

// closeReason returns the index in closeReasons of a close code; 0 (no
// code) is a connection the agent ended.
func closeReason(code websocket.StatusCode) int {
	switch code {
	case connproto.CloseNormal:
		return 0
	case connproto.CloseRestart:
		return 1
	case connproto.CloseProtocol:
		return 2
	case connproto.CloseReplaced:
		return 3
	case connproto.CloseUnauthorized:
		return 4
	case connproto.CloseGone:
		return 5
	case connproto.CloseSlow:
		return 6
	case connproto.CloseHeartbeat:
		return 7
	}
	return 8
}

// hubMetrics are the counters a Hub keeps; its gauges are read from the
// registry at scrape time.
type hubMetrics struct {
	connections *metrics.Counter
	offers      *metrics.Counter
	closes      *metrics.CounterVec
	byReason    []*metrics.Counter // closes' counters in closeReasons order
}

func newHubMetrics() *hubMetrics {
	m := &hubMetrics{
		connections: metrics.NewCounter("switchboard_hub_connections_total",
			"Connector WebSocket connections accepted by this instance."),
		offers: metrics.NewCounter("switchboard_hub_offers_total",
			"Offers (tasks, follow-up messages, cancels) written to connector agents by this instance, first offers and repeats."),
		closes: metrics.NewCounterVec("switchboard_hub_closes_total",
			"Connector connections ended, by reason: the server's close code, or agent when the agent or the network ended it.",
			metrics.Label{Name: "reason", Values: closeReasons}),
	}
	for _, r := range closeReasons {
		m.byReason = append(m.byReason, m.closes.With(r))
	}
	return m
}

// Metrics returns the hub's metrics, to be registered with the process's
// metrics.Registry: the counters above and, read at scrape time,
// switchboard_agents_connected, switchboard_hub_outbound_frames and
// switchboard_hub_pending_offers.
func (h *Hub) Metrics() []metrics.Metric {
	return []metrics.Metric{
		h.met.connections, h.met.offers, h.met.closes,
		metrics.NewGaugeFunc("switchboard_agents_connected",
			"Connector agents whose active connection is on this instance.",
			func() float64 { return float64(h.connectedCount()) }),
		metrics.NewGaugeFunc("switchboard_hub_outbound_frames",
			"Answers queued for connector agents' writers on this instance, summed over connections (each queue holds at most QueueSize).",
			func() float64 { frames, _ := h.queueDepths(); return float64(frames) }),
		metrics.NewGaugeFunc("switchboard_hub_pending_offers",
			"Offers written by this instance that wait for the agent's acknowledgement within their lease, summed over connections.",
			func() float64 { _, offers := h.queueDepths(); return float64(offers) }),
	}
}

// connectedCount returns how many agents have their active connection here.
func (h *Hub) connectedCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

// queueDepths sums, over the active connections, the answers waiting for
// the writer and the offers waiting for an acknowledgement. Each
// connection's lock is taken after the hub's is released.
func (h *Hub) queueDepths() (frames, offers int) {
	h.mu.Lock()
	conns := make([]*conn, 0, len(h.conns))
	for _, c := range h.conns {
		conns = append(conns, c)
	}
	h.mu.Unlock()
	now := time.Now()
	for _, c := range conns {
		frames += c.out.size()
		offers += c.countPending(now)
	}
	return frames, offers
}
