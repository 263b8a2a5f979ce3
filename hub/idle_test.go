package hub_test

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestIdleConnectionHoldsOnlyItsReader checks what an idle connection costs
// in goroutines: its reader's, and no writer's (writer.go starts one only
// while there is something to write).
func TestIdleConnectionHoldsOnlyItsReader(t *testing.T) {
	s := newServer(t)
	const n = 10
	for i := range n {
		_, tok := s.agent("idle" + string(rune('a'+i)))
		s.connect(tok)
	}
	var readers, others int
	var stacks string
	for start := time.Now(); time.Since(start) < 5*time.Second; time.Sleep(20 * time.Millisecond) {
		readers, others, stacks = connGoroutines()
		if readers == n && others == 0 {
			return
		}
	}
	t.Fatalf("%d idle connections: %d readers and %d other goroutines of theirs, want %d and 0:\n%s", n, readers, others, n, stacks)
}

// waitWritersIdle waits until no connection's writer runs: the claim that
// follows a hello has ended, for one.
func waitWritersIdle(t *testing.T) {
	t.Helper()
	for start := time.Now(); time.Since(start) < 5*time.Second; time.Sleep(5 * time.Millisecond) {
		if _, others, _ := connGoroutines(); others == 0 {
			return
		}
	}
	t.Fatal("a connection's writer still runs after 5 s")
}

// connGoroutines counts the goroutines running a connection's code: those
// in its read loop, and the others, whose stacks it returns.
func connGoroutines() (readers, others int, stacks string) {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var b strings.Builder
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		switch {
		case !strings.Contains(g, "hub.(*conn)"):
		case strings.Contains(g, "hub.(*conn).readLoop"):
			readers++
		default:
			others++
			b.WriteString(g + "\n\n")
		}
	}
	return readers, others, b.String()
}
