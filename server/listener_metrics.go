package server

import (
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/metrics"
)

// registerListener exports what the main listener refuses and fails.
func (pm *processMetrics) registerListener(ln *httpapi.Listener) {
	pm.reg.MustRegister(
		metrics.NewCounterFunc("switchboard_http_accept_errors_total",
			"Connections the main listener failed to accept (out of file descriptors, say); each is logged at WARN, at most once a second.",
			func() float64 { return float64(ln.AcceptErrors()) }),
		metrics.NewCounterFunc("switchboard_http_connections_refused_total",
			"Connections refused (503) because their address held --max-unauthenticated-conns connections on which no request had presented a valid token.",
			func() float64 { return float64(ln.Refused()) }),
	)
}
