package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/testwait"
)

// syncBuffer is a log that loops write from their goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestSupervisorRetriesWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs syncBuffer
		s := newSupervisor(slog.New(slog.NewTextHandler(&logs, nil)))
		var runs atomic.Int32
		var starts []time.Time
		var mu sync.Mutex
		s.Go("flaky", func(ctx context.Context) error {
			mu.Lock()
			starts = append(starts, time.Now())
			mu.Unlock()
			if runs.Add(1) < 4 {
				return errors.New("store away")
			}
			<-ctx.Done()
			return nil
		})
		testwait.Advance(10 * time.Minute)
		if got := runs.Load(); got != 4 {
			t.Fatalf("runs: got %d, want 4 (three failures, then steady)", got)
		}
		// Each wait is between half and the whole of 1 s, 2 s, 4 s.
		for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
			gap := starts[i+1].Sub(starts[i])
			if gap < want/2 || gap > want {
				t.Errorf("wait %d: got %s, want within [%s, %s]", i+1, gap, want/2, want)
			}
		}
		for _, want := range []string{"loop=flaky", `err="store away"`, "failures=3", "level=ERROR"} {
			if !strings.Contains(logs.String(), want) {
				t.Errorf("log lacks %q:\n%s", want, logs.String())
			}
		}
		select {
		case err := <-s.Fatal():
			t.Fatalf("a loop that recovers is fatal: %v", err)
		default:
		}
		s.stop()
	})
}

func TestSupervisorLoopThatReturnsEarlyRunsAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs syncBuffer
		s := newSupervisor(slog.New(slog.NewTextHandler(&logs, nil)))
		var runs atomic.Int32
		s.Go("quitter", func(ctx context.Context) error {
			if runs.Add(1) == 1 {
				return nil // ended on its own while the server runs
			}
			<-ctx.Done()
			return nil
		})
		testwait.Advance(time.Minute)
		if got := runs.Load(); got != 2 {
			t.Fatalf("runs: got %d, want 2", got)
		}
		if !strings.Contains(logs.String(), "returned while the server runs") {
			t.Errorf("log: %s", logs.String())
		}
		s.stop()
	})
}

func TestSupervisorFatalEndsEveryLoop(t *testing.T) {
	for name, fatal := range map[string]error{
		"bus closed": fmt.Errorf("watch: %w", switchboard.ErrBusClosed),
		"marked":     fmt.Errorf("store gone: %w", errFatal),
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newSupervisor(slog.New(slog.DiscardHandler))
				other := make(chan error, 1)
				s.Go("other", func(ctx context.Context) error {
					<-ctx.Done()
					other <- context.Cause(ctx)
					return nil
				})
				var runs atomic.Int32
				s.Go("doomed", func(ctx context.Context) error {
					runs.Add(1)
					return fatal
				})
				err := <-s.Fatal()
				if !errors.Is(err, fatal) || !strings.Contains(err.Error(), "doomed") {
					t.Fatalf("fatal: got %v, want %v named by its loop", err, fatal)
				}
				if cause := <-other; !errors.Is(cause, fatal) {
					t.Fatalf("the other loop ended with %v, want the fatal error", cause)
				}
				testwait.Advance(time.Hour)
				if got := runs.Load(); got != 1 {
					t.Fatalf("a fatal loop ran %d times, want 1", got)
				}
				s.stop()
			})
		})
	}
}

func TestSupervisorStopEndsLoopsInBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSupervisor(slog.New(slog.DiscardHandler))
		var runs atomic.Int32
		s.Go("failing", func(ctx context.Context) error {
			runs.Add(1)
			return errors.New("no")
		})
		synctest.Wait() // it failed once and waits its backoff
		s.stop()        // returns without waiting the backoff out
		s.stop()        // idempotent
		if got := runs.Load(); got != 1 {
			t.Fatalf("runs after stop: %d", got)
		}
	})
}
