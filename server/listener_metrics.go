package server

import (
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/metrics"
)

// registerListeners exports what the main listeners (plain HTTP, and
// HTTPS when served) refuse and fail, summed.
func (pm *processMetrics) registerListeners(lns []*httpapi.Listener) {
	sum := func(f func(*httpapi.Listener) int64) func() float64 {
		return func() float64 {
			var n int64
			for _, ln := range lns {
				n += f(ln)
			}
			return float64(n)
		}
	}
	pm.reg.MustRegister(
		metrics.NewCounterFunc("switchboard_http_accept_errors_total",
			"Connections the main listeners failed to accept (out of file descriptors, say); each is logged at WARN, at most once a second.",
			sum((*httpapi.Listener).AcceptErrors)),
		metrics.NewCounterFunc("switchboard_http_connections_refused_total",
			"Connections refused (503, or closed before TLS) because their address held --max-unauthenticated-conns connections on which no request had presented a valid token.",
			sum((*httpapi.Listener).Refused)),
	)
}
