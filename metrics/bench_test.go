package metrics_test

import (
	"io"
	"testing"

	"github.com/switchboard-dev/switchboard/metrics"
)

func BenchmarkCounterInc(b *testing.B) {
	c := metrics.NewCounter("c_total", "x")
	b.ReportAllocs()
	for b.Loop() {
		c.Inc()
	}
}

func BenchmarkCounterIncParallel(b *testing.B) {
	c := metrics.NewCounter("c_total", "x")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c.Inc()
		}
	})
}

func BenchmarkCounterVecWith(b *testing.B) {
	v := metrics.NewCounterVec("c_total", "x",
		metrics.Label{Name: "method", Values: []string{"GET", "HEAD", "POST", "PATCH", "DELETE", "other"}},
		metrics.Label{Name: "code", Values: []string{"1xx", "2xx", "3xx", "4xx", "5xx"}})
	b.ReportAllocs()
	for b.Loop() {
		v.With("DELETE", "5xx").Inc()
	}
}

func BenchmarkHistogramObserve(b *testing.B) {
	h := metrics.NewHistogram("h_seconds", "x", metrics.LatencyBuckets)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		h.Observe(float64(i%2000) / 1000) // spread over the buckets up to 2 s
		i++
	}
}

func BenchmarkHistogramObserveParallel(b *testing.B) {
	h := metrics.NewHistogram("h_seconds", "x", metrics.LatencyBuckets)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			h.Observe(float64(i%2000) / 1000)
			i++
		}
	})
}

func BenchmarkWriteText(b *testing.B) {
	reg := metrics.NewRegistry()
	for _, name := range []string{"a", "b", "c", "d"} {
		reg.MustRegister(metrics.NewHistogramVec(name+"_seconds", "x", metrics.LatencyBuckets,
			metrics.Label{Name: "mode", Values: []string{"connector", "webhook"}}))
		reg.MustRegister(metrics.NewCounterVec(name+"_total", "x",
			metrics.Label{Name: "method", Values: []string{"GET", "HEAD", "POST", "PATCH", "DELETE", "other"}},
			metrics.Label{Name: "code", Values: []string{"1xx", "2xx", "3xx", "4xx", "5xx"}}))
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := reg.WriteText(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
