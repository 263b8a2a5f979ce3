package hub_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/testwait"
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
	testwait.ForErr(t, "the connections to idle", func() error {
		if readers, others, stacks := connGoroutines(); readers != n || others != 0 {
			return fmt.Errorf("%d idle connections: %d readers and %d other goroutines of theirs, want %d and 0:\n%s", n, readers, others, n, stacks)
		}
		return nil
	})
}

// waitWritersIdle waits until no connection's writer runs: the claim that
// follows a hello has ended, for one.
func waitWritersIdle(t *testing.T) {
	t.Helper()
	testwait.For(t, "no connection's writer to run", func() bool {
		_, others, _ := connGoroutines()
		return others == 0
	})
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
