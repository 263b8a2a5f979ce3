package metrics

import (
	"math"
	"sync/atomic"
)

// Gauge is a value that goes up and down. Its methods are safe for
// concurrent use; Set is one atomic store, Add a compare-and-swap loop.
type Gauge struct {
	family
	bits atomic.Uint64 // math.Float64bits of the value
}

// NewGauge returns a gauge without labels.
func NewGauge(name, help string) *Gauge {
	return &Gauge{family: newFamily(name, help, "gauge", nil)}
}

// Set sets the value.
func (g *Gauge) Set(v float64) { g.bits.Store(math.Float64bits(v)) }

// Add adds d (which may be negative).
func (g *Gauge) Add(d float64) { addFloat(&g.bits, d) }

// Inc adds one.
func (g *Gauge) Inc() { g.Add(1) }

// Dec subtracts one.
func (g *Gauge) Dec() { g.Add(-1) }

// Value returns the value.
func (g *Gauge) Value() float64 { return math.Float64frombits(g.bits.Load()) }

func (g *Gauge) writeText(w *textWriter) {
	w.header(&g.family)
	w.sampleFloat(g.name, "", "", "", g.Value())
}

// addFloat adds d to the float64 whose bits a holds.
func addFloat(a *atomic.Uint64, d float64) {
	for {
		old := a.Load()
		if a.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+d)) {
			return
		}
	}
}

// GaugeFunc is a gauge whose value is read at scrape time from a function.
type GaugeFunc struct {
	family
	fn func() float64
}

// NewGaugeFunc returns a gauge that reports fn(). fn must be safe to call
// from any goroutine; it runs on every scrape.
func NewGaugeFunc(name, help string, fn func() float64) *GaugeFunc {
	return &GaugeFunc{family: newFamily(name, help, "gauge", nil), fn: fn}
}

func (g *GaugeFunc) writeText(w *textWriter) {
	w.header(&g.family)
	w.sampleFloat(g.name, "", "", "", g.fn())
}

// GaugeVecFunc is a gauge family with labels whose values are read at
// scrape time, all at once, from a function: for values that come from one
// query, such as rows counted by state.
type GaugeVecFunc struct {
	family
	fn func(values []float64)
}

// NewGaugeVecFunc returns a gauge family with the given labels. On each
// scrape fn fills values, one per series in the order Label describes
// (zeroed before the call). fn must be safe to call from any goroutine.
func NewGaugeVecFunc(name, help string, fn func(values []float64), labels ...Label) *GaugeVecFunc {
	return &GaugeVecFunc{family: newFamily(name, help, "gauge", labels), fn: fn}
}

func (g *GaugeVecFunc) writeText(w *textWriter) {
	values := make([]float64, len(g.series))
	g.fn(values)
	w.header(&g.family)
	for i, v := range values {
		w.sampleFloat(g.name, "", g.series[i], "", v)
	}
}
