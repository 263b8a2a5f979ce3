package gcfloor_test

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/switchboard-dev/switchboard/gcfloor"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name           string
		live, headroom uint64
		base, want     int
	}{
		{"unknown live heap", 0, 64 * mib, 100, 100},
		{"small live heap", 16 * mib, 64 * mib, 100, 384},
		{"live heap as large as the floor", 64 * mib, 64 * mib, 100, 100},
		{"live heap larger than the floor", 640 * mib, 64 * mib, 100, 100},
		{"GOGC above the floor wins", 16 * mib, 64 * mib, 500, 500},
		{"tiny live heap, bounded", 1024, 64 * mib, 100, 8192},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := gcfloor.Percent(tc.live, tc.headroom, tc.base); got != tc.want {
				t.Fatalf("Percent(%d, %d, %d) = %d, want %d", tc.live, tc.headroom, tc.base, got, tc.want)
			}
		})
	}
}

// TestStartAndStop: Start raises the collector's goal for this process's
// small heap, and stop puts the setting back.
func TestStartAndStop(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	runtime.GC()                   // the live heap is known once a collection has run
	stop := gcfloor.Start(1 << 30) // far above this test's live heap
	got := debug.SetGCPercent(100) // the value Start set at once
	debug.SetGCPercent(got)
	stop()
	if got <= 100 {
		t.Fatalf("GOGC under the floor: %d, want more than 100", got)
	}
	if after := debug.SetGCPercent(100); after != 100 {
		t.Fatalf("after stop GOGC is %d, want 100 back", after)
	}
}
