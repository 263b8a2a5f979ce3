package httpapi

import (
	"net/http"

	"github.com/switchboard-dev/switchboard/metrics"
)

// The classes the request counter tells methods and statuses apart by: a
// fixed set, so that odd methods or codes cannot grow the series.
var (
	methodClasses = [...]string{"GET", "HEAD", "POST", "PATCH", "DELETE", "OPTIONS", "other"}
	statusClasses = [...]string{"1xx", "2xx", "3xx", "4xx", "5xx"}
)

// requestMetrics count the requests a server answers. Counting is an
// atomic add on a counter found without a map look-up.
type requestMetrics struct {
	requests *metrics.CounterVec
	// byClass holds requests' counters by method class and status class.
	byClass [len(methodClasses)][len(statusClasses)]*metrics.Counter
}

// newRequestMetrics makes the request counter.
func newRequestMetrics() *requestMetrics {
	m := &requestMetrics{
		requests: metrics.NewCounterVec("switchboard_http_requests_total",
			"HTTP requests served, by method and status class, counted when they end (a stream when it closes, an agent's WebSocket when it is upgraded).",
			metrics.Label{Name: "method", Values: methodClasses[:]}, metrics.Label{Name: "code", Values: statusClasses[:]}),
	}
	for i, method := range methodClasses {
		for j, code := range statusClasses {
			m.byClass[i][j] = m.requests.With(method, code)
		}
	}
	return m
}

// countRequest counts a request that ended with status (0: nothing was
// written, which net/http answers with 200).
func (m *requestMetrics) countRequest(method string, status int) {
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

// Observe serves r with h, its body read under the body timeout
// (Config.BodyTimeout, body.go), and counts it in
// switchboard_http_requests_total once h returns.
func (s *Env) Observe(w http.ResponseWriter, r *http.Request, h http.Handler) {
	rec := &statusRecorder{ResponseWriter: w}
	body := watchBody(w, r, s.Cfg.BodyTimeout, s.Cfg.MaxBody)
	h.ServeHTTP(rec, r)
	body.finish()
	s.requests.countRequest(r.Method, rec.status)
}

// Metrics returns the metrics the server keeps, to be registered with the
// process's metrics.Registry: switchboard_http_requests_total.
func (s *Server) Metrics() []metrics.Metric { return []metrics.Metric{s.requests.requests} }

// handleMetrics serves /metrics with Deps.MetricsHandler.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
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
