package gcfloor

import (
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// DefaultHeadroom is the floor serve keeps unless told otherwise
// (--gc-headroom-mib).
const DefaultHeadroom = 64 << 20

// every is how often the live heap is read and the goal adjusted.
const every = 500 * time.Millisecond

// maxPercent bounds the GOGC value the floor sets (a live heap of a few
// hundred kilobytes would otherwise ask for hundreds of thousands).
const maxPercent = 10000

// liveHeap is the runtime metric read: the heap that survived the last
// collection.
const liveHeap = "/gc/heap/live:bytes"

// Start keeps the collector's goal at least headroom bytes over the live
// heap, and never below what GOGC (or debug.SetGCPercent before Start)
// asks, until stop is called, which puts that setting back. With GOGC=off,
// or a headroom of 0, it does nothing.
func Start(headroom uint64) (stop func()) {
	base := debug.SetGCPercent(100)
	debug.SetGCPercent(base)
	if base < 0 || headroom == 0 {
		return func() {}
	}
	sample := []metrics.Sample{{Name: liveHeap}}
	current := base
	adjust := func() {
		metrics.Read(sample)
		if want := Percent(sample[0].Value.Uint64(), headroom, base); want != current {
			debug.SetGCPercent(want)
			current = want
		}
	}
	adjust()
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				debug.SetGCPercent(base)
				return
			case <-t.C:
				adjust()
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// Percent is the GOGC value that lets a heap of live bytes grow by
// headroom bytes, and never less than base. It moves in steps of an
// eighth, so that a live heap that wavers does not reset the goal each
// time.
func Percent(live, headroom uint64, base int) int {
	if live == 0 {
		return base
	}
	want := headroom * 100 / live
	if want > maxPercent {
		want = maxPercent
	}
	p := int(want)
	if p <= base {
		return base
	}
	// Round down to the step below: p is a floor, not a target.
	step := 1
	for step*8 < p {
		step *= 2
	}
	return max(base, p/step*step)
}
