package hub

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
)

// batchRecorder is a Service whose DisconnectAgents records its batches
// and waits for release before the first returns.
type batchRecorder struct {
	Service
	mu      sync.Mutex
	batches [][]string
	first   chan struct{} // closed when the first call began
	release chan struct{}
}

func (r *batchRecorder) DisconnectAgents(_ context.Context, holders []string) error {
	r.mu.Lock()
	r.batches = append(r.batches, append([]string(nil), holders...))
	n := len(r.batches)
	r.mu.Unlock()
	if n == 1 {
		close(r.first)
		<-r.release
	}
	return nil
}

// TestDisconnectsBatched checks that connections that close while a batch
// is written are ended together, at most maxDisconnectBatch at a time,
// each exactly once, and that each close returns once its batch is
// written. It runs in a synctest bubble: synctest.Wait returns once every
// close is parked, so the count of queued closes is exact.
func TestDisconnectsBatched(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &batchRecorder{first: make(chan struct{}), release: make(chan struct{})}
		h := &Hub{Deps: Deps{Service: rec}}
		var wg sync.WaitGroup
		wg.Go(func() {
			if err := h.disconnect("lone"); err != nil {
				t.Error(err)
			}
		})
		<-rec.first
		const n = 2*maxDisconnectBatch + 500
		for i := range n {
			wg.Go(func() {
				if err := h.disconnect(fmt.Sprint("c", i)); err != nil {
					t.Error(err)
				}
			})
		}
		// Every close has queued its holder and waits for its batch, behind
		// the lone one that is being written.
		synctest.Wait()
		h.disconnects.mu.Lock()
		queued := 0
		for _, b := range h.disconnects.queue {
			queued += len(b.holders)
		}
		h.disconnects.mu.Unlock()
		if queued != n {
			t.Fatalf("%d of %d closes queued while the first batch is written", queued, n)
		}
		close(rec.release)
		wg.Wait()
		sizes := []int{}
		seen := map[string]int{}
		for _, b := range rec.batches {
			sizes = append(sizes, len(b))
			for _, holder := range b {
				seen[holder]++
			}
		}
		if fmt.Sprint(sizes) != fmt.Sprint([]int{1, maxDisconnectBatch, maxDisconnectBatch, 500}) {
			t.Fatalf("batches of %v, want [1 %d %d 500]", sizes, maxDisconnectBatch, maxDisconnectBatch)
		}
		if len(seen) != n+1 {
			t.Fatalf("%d holders ended, want %d", len(seen), n+1)
		}
		for holder, k := range seen {
			if k != 1 {
				t.Fatalf("%s ended %d times", holder, k)
			}
		}
	})
}
