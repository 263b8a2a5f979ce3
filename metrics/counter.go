package metrics

import "sync/atomic"

// Counter is a value that only goes up: events, requests, bytes. Its
// methods are safe for concurrent use and cost one atomic add.
type Counter struct {
	family // empty for a counter of a CounterVec, which writes it
	v      atomic.Uint64
}

// NewCounter returns a counter without labels. By convention its name ends
// in _total.
func NewCounter(name, help string) *Counter {
	return &Counter{family: newFamily(name, help, "counter", nil)}
}

// Inc adds one.
func (c *Counter) Inc() { c.v.Add(1) }

// Add adds n.
func (c *Counter) Add(n uint64) { c.v.Add(n) }

// Value returns the count.
func (c *Counter) Value() uint64 { return c.v.Load() }

func (c *Counter) writeText(w *textWriter) {
	w.header(&c.family)
	w.sampleUint(c.name, "", "", "", c.v.Load())
}

// CounterVec is a counter family with labels: one counter per combination
// of the labels' values, all fixed when it is made.
type CounterVec struct {
	family
	counters []Counter
}

// NewCounterVec returns a counter family with the given labels.
func NewCounterVec(name, help string, labels ...Label) *CounterVec {
	f := newFamily(name, help, "counter", labels)
	return &CounterVec{family: f, counters: make([]Counter, len(f.series))}
}

// With returns the counter of the given label values, one per label in
// order. It panics if a value is not one the label was made with. It looks
// the values up, so callers on a hot path keep the counters it returns.
func (v *CounterVec) With(values ...string) *Counter {
	return &v.counters[v.index(values)]
}

func (v *CounterVec) writeText(w *textWriter) {
	w.header(&v.family)
	for i := range v.counters {
		w.sampleUint(v.name, "", v.series[i], "", v.counters[i].v.Load())
	}
}

// CounterFunc is a counter whose value is read at scrape time from a
// function, for counts another component keeps.
type CounterFunc struct {
	family
	fn func() float64
}

// NewCounterFunc returns a counter that reports fn(). fn must be safe to
// call from any goroutine and return quickly.
func NewCounterFunc(name, help string, fn func() float64) *CounterFunc {
	return &CounterFunc{family: newFamily(name, help, "counter", nil), fn: fn}
}

func (c *CounterFunc) writeText(w *textWriter) {
	w.header(&c.family)
	w.sampleFloat(c.name, "", "", "", c.fn())
}
