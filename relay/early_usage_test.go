package relay

import (
	"context"
	"testing"

	"github.com/switchboard-dev/switchboard"
)

// TestEarlyUsageWriteGivenUp: an unwritten task whose write gives up
// waiting for its turn is refused, and no longer counted toward its
// peer's quotas: once the other task is written, the peer holds none.
func TestEarlyUsageWriteGivenUp(t *testing.T) {
	var u earlyUsage
	q := &switchboard.PeerQuota{MaxOpenTasks: 10}
	for range 2 {
		if gen := u.begin("k"); !u.add("k", gen, q, 0, 0, nil) {
			t.Fatal("a task was not counted")
		}
	}
	_, end, err := u.write(context.Background(), "k", true) // the first task's write holds the turn
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := u.write(ctx, "k", true); err == nil {
		t.Fatal("the second task's write did not give up")
	}
	end()
	u.mu.Lock()
	defer u.mu.Unlock()
	if p := u.peers["k"]; p != nil {
		t.Fatalf("the peer still holds %d unwritten tasks, %d writers", p.n, p.writers)
	}
}
