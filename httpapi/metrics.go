package httpapi

import (
	"net/http"
	"sort"

	"github.com/switchboard-dev/switchboard/metrics"
)

// The classes the request counter tells methods and statuses apart by: a
// fixed set, so that odd methods or codes cannot grow the series.
var (
	methodClasses = [...]string{"GET", "HEAD", "POST", "PATCH", "DELETE", "OPTIONS", "other"}
	statusClasses = [...]string{"1xx", "2xx", "3xx", "4xx", "5xx"}
)

// serverMetrics are the metrics a Server keeps. Counting is atomic adds on
// counters found without a map look-up (requests) or through the method
// table look-up that dispatch does anyway (JSON-RPC).
type serverMetrics struct {
	requests *metrics.CounterVec
	// byClass holds requests' counters by method class and status class.
	byClass  [len(methodClasses)][len(statusClasses)]*metrics.Counter
	rpc      *metrics.CounterVec
	rpcOther *metrics.Counter // calls of a method not in the table
	streams  *metrics.Gauge
}

// newServerMetrics makes the server's metrics and gives each method of
// table its call counter.
func newServerMetrics(table map[string]rpcMethod) *serverMetrics {
	m := &serverMetrics{
		requests: metrics.NewCounterVec("switchboard_http_requests_total",
			"HTTP requests served, by method and status class, counted when they end (a stream when it closes, an agent's WebSocket when it is upgraded).",
			metrics.Label{Name: "method", Values: methodClasses[:]}, metrics.Label{Name: "code", Values: statusClasses[:]}),
		streams: metrics.NewGauge("switchboard_sse_streams",
			"Server-sent event streams open on this instance (SendStreamingMessage, SubscribeToTask and their 0.3 names)."),
	}
	for i, method := range methodClasses {
		for j, code := range statusClasses {
			m.byClass[i][j] = m.requests.With(method, code)
		}
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

// countRequest counts a request that ended with status (0: nothing was
// written, which net/http answers with 200).
func (m *serverMetrics) countRequest(method string, status int) {
	mi := len(methodClasses) - 1
	for i, c := range methodClasses[:mi] {
		if method == c {
			mi = i
			break
		}
	}
	si := 1
	if status >= 100 && status < 600 {
		si = status/100 - 1
	}
	m.byClass[mi][si].Inc()
}

// countRPC counts a call of rm, the method table's entry for the call (the
// zero rpcMethod for a method that does not exist).
func (m *serverMetrics) countRPC(rm rpcMethod) {
	if rm.calls != nil {
		rm.calls.Inc()
		return
	}
	m.rpcOther.Inc()
}

// Metrics returns the metrics the server keeps, to be registered with the
// process's metrics.Registry: switchboard_http_requests_total,
// switchboard_jsonrpc_requests_total and switchboard_sse_streams.
func (s *Server) Metrics() []metrics.Metric {
	return []metrics.Metric{s.met.requests, s.met.rpc, s.met.streams}
}

// handleMetrics serves /metrics when a MetricsHandler is set.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	if s.MetricsHandler == nil {
		s.NotFound(w, r)
		return
	}
	s.MetricsHandler.ServeHTTP(w, r)
}

// statusRecorder remembers the status a handler answered with. Unwrap lets
// http.ResponseController (deadlines, flushes) and the WebSocket upgrade
// (hijacking) reach the connection's own writer.
type statusRecorder struct {
	http.ResponseWriter
	status int // the final status; 0 until one is written
}

// WriteHeader implements http.ResponseWriter. An informational status
// other than 101 Switching Protocols is not final.
func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap returns the wrapped writer, for http.ResponseController.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// UnwrapRecorder returns the writer a statusRecorder wraps. http.MaxBytesReader
// needs the server's own writer: only that one learns, when a body is too
// large, to close the connection instead of reading the rest.
func UnwrapRecorder(w http.ResponseWriter) http.ResponseWriter {
	if r, ok := w.(*statusRecorder); ok {
		return r.ResponseWriter
	}
	return w
}
