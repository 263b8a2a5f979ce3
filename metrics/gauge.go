package metrics

import (
	"fmt"
	"math"
	"slices"
	"strings"
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

// Sample is one series of a GaugeSetFunc: the value of its label and its
// value.
type Sample struct {
	Label string
	Value float64
}

// GaugeSetFunc is a gauge family with one label whose values are not known
// when it is made (the names the server holds certificates for, say): its
// series are read at scrape time from a function. Unlike the other
// families of this package, it has no series until the function gives
// some.
type GaugeSetFunc struct {
	family
	label string
	fn    func() []Sample
}

// NewGaugeSetFunc returns a gauge family with the one label named label.
// On each scrape fn returns its series, which are written sorted by label
// value; a label value given twice is written once, with its first value.
// fn must be safe to call from any goroutine.
func NewGaugeSetFunc(name, help, label string, fn func() []Sample) *GaugeSetFunc {
	if !ValidLabelName(label) || strings.HasPrefix(label, "__") {
		panic(fmt.Sprintf("metrics: %s: invalid label name %q", name, label))
	}
	return &GaugeSetFunc{family: newFamily(name, help, "gauge", nil), label: label, fn: fn}
}

func (g *GaugeSetFunc) writeText(w *textWriter) {
	samples := slices.Clone(g.fn())
	slices.SortStableFunc(samples, func(a, b Sample) int { return strings.Compare(a.Label, b.Label) })
	w.header(&g.family)
	for i, s := range samples {
		if i > 0 && samples[i-1].Label == s.Label {
			continue
		}
		w.sampleFloat(g.name, "", g.label+`="`+escapeLabel(s.Label)+`"`, "", s.Value)
	}
}
