package a2aedge

import (
	"sort"

	"github.com/switchboard-dev/switchboard/metrics"
)

// edgeMetrics are the metrics the edge keeps. Counting is an atomic add on
// a counter found through the method table look-up that dispatch does
// anyway.
type edgeMetrics struct {
	rpc      *metrics.CounterVec
	rpcOther *metrics.Counter // calls of a method not in the table
	streams  *metrics.Gauge
}

// newEdgeMetrics makes the edge's metrics and gives each method of table
// its call counter.
func newEdgeMetrics(table map[string]rpcMethod) *edgeMetrics {
	m := &edgeMetrics{
		streams: metrics.NewGauge("switchboard_sse_streams",
			"Server-sent event streams open on this instance (SendStreamingMessage, SubscribeToTask and their 0.3 names)."),
	}
	names := make([]string, 0, len(table)+1)
	for name := range table {
		names = append(names, name)
	}
	sort.Strings(names)
	m.rpc = metrics.NewCounterVec("switchboard_jsonrpc_requests_total",
		"A2A JSON-RPC requests by method, counted once the envelope is read (after authentication and the rate limit); other: a method that does not exist.",
		metrics.Label{Name: "method", Values: append(names, "other")})
	for _, name := range names {
		rm := table[name]
		rm.calls = m.rpc.With(name)
		table[name] = rm
	}
	m.rpcOther = m.rpc.With("other")
	return m
}

// countRPC counts a call of rm, the method table's entry for the call (the
// zero rpcMethod for a method that does not exist).
func (m *edgeMetrics) countRPC(rm rpcMethod) {
	if rm.calls != nil {
		rm.calls.Inc()
		return
	}
	m.rpcOther.Inc()
}

// Metrics returns the metrics the edge keeps, to be registered with the
// process's metrics.Registry: switchboard_jsonrpc_requests_total and
// switchboard_sse_streams.
func (s *Edge) Metrics() []metrics.Metric { return []metrics.Metric{s.met.rpc, s.met.streams} }
