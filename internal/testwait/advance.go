package testwait

import (
	"testing/synctest"
	"time"
)

// Advance lets d pass on the clock of the calling goroutine's
// testing/synctest bubble, then waits until every other goroutine of the
// bubble is durably blocked (synctest.Wait): whatever fell due within d
// has run, and a check made next sees its effect, exactly. Nothing waits
// on the real clock. It panics outside a bubble.
//
// Deadlines are tested with it at their bounds: Advance(timeout - 1ns),
// nothing happened; Advance(1ns), it happened.
func Advance(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}
