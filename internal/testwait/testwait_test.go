package testwait

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fatalRecorder is a testing.TB whose Fatalf records the message and ends
// the goroutine, as the real one does.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run runs f with a recorder on a goroutine of its own and returns what
// it failed with ("" if it did not).
func run(f func(testing.TB)) string {
	r := &fatalRecorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r.msg
}

func TestForReturnsOnceTheConditionHolds(t *testing.T) {
	n := 0
	For(t, "the third call", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Fatalf("cond called %d times, want 3", n)
	}
	if msg := run(func(tb testing.TB) { ForErr(tb, "nil", func() error { return nil }) }); msg != "" {
		t.Fatalf("a check that passes failed with %q", msg)
	}
}

func TestWithinFailsAfterItsBound(t *testing.T) {
	start := time.Now()
	msg := run(func(tb testing.TB) { Within(tb, 30*time.Millisecond, "nothing", func() error { return errFalse }) })
	if msg != "timed out waiting for nothing (30ms)" {
		t.Fatalf("failed with %q", msg)
	}
	if took := time.Since(start); took < 30*time.Millisecond {
		t.Fatalf("gave up after %s, before its bound", took)
	}
}

func TestWithinReportsTheLastError(t *testing.T) {
	n := 0
	msg := run(func(tb testing.TB) {
		Within(tb, 30*time.Millisecond, "a good answer", func() error { n++; return fmt.Errorf("answer %d", n) })
	})
	if want := fmt.Sprintf("answer %d", n); !strings.HasPrefix(msg, "timed out waiting for a good answer (30ms): ") || !strings.HasSuffix(msg, want) {
		t.Fatalf("failed with %q, want the last error %q", msg, want)
	}
}
