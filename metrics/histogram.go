package metrics

import (
	"fmt"
	"math"
	"strconv"
	"sync/atomic"
	"time"
)

// LatencyBuckets are upper bounds, in seconds, for latencies from a
// millisecond to minutes: work handed between processes, a database
// round trip, an agent's answer.
var LatencyBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

// Histogram counts observations in buckets fixed when it is made, and
// keeps their sum. Observe is safe for concurrent use and costs a scan of
// the bucket bounds, one atomic add and one compare-and-swap; it never
// locks or allocates.
type Histogram struct {
	family
	upper  []float64       // bucket upper bounds, increasing; +Inf is implied
	le     []string        // upper rendered as le label pairs, then +Inf
	counts []atomic.Uint64 // per bucket (not cumulative), the last for +Inf
	sum    atomic.Uint64   // math.Float64bits of the sum
}

// NewHistogram returns a histogram without labels. buckets are the upper
// bounds, strictly increasing; a last +Inf bucket is added. By convention
// its name ends in the unit (_seconds).
func NewHistogram(name, help string, buckets []float64) *Histogram {
	h := &Histogram{family: newFamily(name, help, "histogram", nil)}
	h.init(buckets, makeLE(name, buckets))
	return h
}

func (h *Histogram) init(buckets []float64, le []string) {
	h.upper, h.le = buckets, le
	h.counts = make([]atomic.Uint64, len(buckets)+1)
}

// makeLE checks the bucket bounds and renders their le label pairs.
func makeLE(name string, buckets []float64) []string {
	le := make([]string, 0, len(buckets)+1)
	for i, b := range buckets {
		if math.IsNaN(b) || math.IsInf(b, 0) || (i > 0 && b <= buckets[i-1]) {
			panic(fmt.Sprintf("metrics: %s: bucket bounds must be finite and strictly increasing", name))
		}
		le = append(le, `le="`+strconv.FormatFloat(b, 'g', -1, 64)+`"`)
	}
	return append(le, `le="+Inf"`)
}

// Observe records one value.
func (h *Histogram) Observe(v float64) {
	i := 0
	for i < len(h.upper) && v > h.upper[i] {
		i++
	}
	h.counts[i].Add(1)
	addFloat(&h.sum, v)
}

// ObserveDuration records a duration in seconds.
func (h *Histogram) ObserveDuration(d time.Duration) { h.Observe(d.Seconds()) }

// Count returns how many values were observed.
func (h *Histogram) Count() uint64 {
	var n uint64
	for i := range h.counts {
		n += h.counts[i].Load()
	}
	return n
}

// Sum returns the sum of the observed values.
func (h *Histogram) Sum() float64 { return math.Float64frombits(h.sum.Load()) }

func (h *Histogram) writeText(w *textWriter) {
	w.header(&h.family)
	h.writeSeries(w, h.name, "")
}

// writeSeries writes the cumulative buckets, sum and count of one series.
// The count is the +Inf bucket, so the two always agree; the sum may be a
// concurrent observation ahead or behind.
func (h *Histogram) writeSeries(w *textWriter, name, labels string) {
	var cum uint64
	for i := range h.counts {
		cum += h.counts[i].Load()
		w.sampleUint(name, "_bucket", labels, h.le[i], cum)
	}
	w.sampleFloat(name, "_sum", labels, "", h.Sum())
	w.sampleUint(name, "_count", labels, "", cum)
}

// HistogramVec is a histogram family with labels: one histogram per
// combination of the labels' values, all with the same buckets.
type HistogramVec struct {
	family
	hs []Histogram
}

// NewHistogramVec returns a histogram family with the given buckets and
// labels. No label may be called le.
func NewHistogramVec(name, help string, buckets []float64, labels ...Label) *HistogramVec {
	for _, l := range labels {
		if l.Name == "le" {
			panic(fmt.Sprintf("metrics: %s: a histogram's label cannot be called le", name))
		}
	}
	f := newFamily(name, help, "histogram", labels)
	v := &HistogramVec{family: f, hs: make([]Histogram, len(f.series))}
	le := makeLE(name, buckets)
	for i := range v.hs {
		v.hs[i].init(buckets, le)
	}
	return v
}

// With returns the histogram of the given label values, one per label in
// order. It panics if a value is not one the label was made with. Callers
// on a hot path keep the histograms it returns.
func (v *HistogramVec) With(values ...string) *Histogram {
	return &v.hs[v.index(values)]
}

func (v *HistogramVec) writeText(w *textWriter) {
	w.header(&v.family)
	for i := range v.hs {
		v.hs[i].writeSeries(w, v.name, v.series[i])
	}
}
