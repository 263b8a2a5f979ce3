package metrics

import (
	"runtime"
	rtmetrics "runtime/metrics"
	"time"
)

// RuntimeMetrics returns gauges of the Go runtime and the process under
// the names Prometheus' own Go client uses, so that existing dashboards
// read them: go_goroutines, go_memstats_heap_alloc_bytes and
// process_start_time_seconds. They are read at scrape time, without
// stopping the world.
func RuntimeMetrics() []Metric {
	start := float64(processStart.UnixNano()) / 1e9
	return []Metric{
		NewGaugeFunc("go_goroutines", "Number of goroutines that currently exist.",
			func() float64 { return float64(runtime.NumGoroutine()) }),
		NewGaugeFunc("go_memstats_heap_alloc_bytes", "Number of heap bytes allocated and still in use.",
			heapBytes),
		NewGaugeFunc("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
			func() float64 { return start }),
	}
}

// processStart is when the package was initialised: at the start of the
// process.
var processStart = time.Now()

// heapBytes reads the bytes of live heap objects (runtime.MemStats'
// HeapAlloc, without ReadMemStats' stop of the world).
func heapBytes() float64 {
	s := []rtmetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	rtmetrics.Read(s)
	if s[0].Value.Kind() != rtmetrics.KindUint64 {
		return 0
	}
	return float64(s[0].Value.Uint64())
}
