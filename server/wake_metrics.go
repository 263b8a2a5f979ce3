package server

import (
	"github.com/switchboard-dev/switchboard/metrics"
	"github.com/switchboard-dev/switchboard/wake"
)

// registerWakes counts the outcomes of the wakes this instance sends in
// switchboard_wakes_total.
func (pm *processMetrics) registerWakes(w *wake.Service) {
	v := metrics.NewCounterVec("switchboard_wakes_total",
		"Attempts of queued wakes this instance made, by outcome: sent (2xx), retried (429, 503 or no answer: queued again after Retry-After), failed (another status, or refused), dropped (retries used up, or the configuration gone).",
		metrics.Label{Name: "outcome", Values: wake.Outcomes})
	pm.reg.MustRegister(v)
	byOutcome := make(map[string]*metrics.Counter, len(wake.Outcomes))
	for _, o := range wake.Outcomes {
		byOutcome[o] = v.With(o)
	}
	w.OnOutcome = func(o string) {
		if c := byOutcome[o]; c != nil {
			c.Inc()
		}
	}
}
