package bustest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// Run runs the contract suite. open returns a new bus for each subtest; the
// suite closes it.
func Run(t *testing.T, open func(t *testing.T) switchboard.Bus) {
	tests := map[string]func(*testing.T, switchboard.Bus){
		"NotifyWakesWatcher":   testNotify,
		"NotifyCoalesces":      testCoalesce,
		"OtherTaskStaysQuiet":  testOtherTask,
		"WatchCloseStops":      testWatchClose,
		"CloseEndsWatches":     testClose,
		"ManyWatchersSameTask": testManyWatchers,
		"WatchFunc":            testWatchFunc,
		"WatchFuncClose":       testWatchFuncClose,
	}
	for name, fn := range tests {
		t.Run(name, func(t *testing.T) {
			b := open(t)
			t.Cleanup(func() { _ = b.Close() })
			fn(t, b)
		})
	}
}

// waitFor returns true if the channel yields a value within a second.
func waitFor(c <-chan struct{}) bool {
	select {
	case _, ok := <-c:
		return ok
	case <-time.After(time.Second):
		return false
	}
}

// quiet returns true if the channel yields nothing for a short while.
func quiet(c <-chan struct{}) bool {
	select {
	case <-c:
		return false
	case <-time.After(50 * time.Millisecond):
		return true
	}
}

func watch(t *testing.T, b switchboard.Bus, subject string) switchboard.Watch {
	t.Helper()
	w, err := b.Watch(context.Background(), subject)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func notify(t *testing.T, b switchboard.Bus, subject string) {
	t.Helper()
	if err := b.Notify(context.Background(), subject); err != nil {
		t.Fatal(err)
	}
}

func testNotify(t *testing.T, b switchboard.Bus) {
	w := watch(t, b, "t1")
	defer w.Close()
	notify(t, b, "t1")
	if !waitFor(w.C()) {
		t.Fatal("watcher not woken")
	}
}

func testCoalesce(t *testing.T, b switchboard.Bus) {
	w := watch(t, b, "t1")
	defer w.Close()
	const n = 100
	for range n {
		notify(t, b, "t1") // must not block although nobody reads
	}
	if !waitFor(w.C()) {
		t.Fatal("watcher not woken")
	}
	// Signals still in flight on a networked bus may add a few more, but
	// pending signals merge: far fewer than n arrive.
	requireMerged(t, w, n)
}

func testOtherTask(t *testing.T, b switchboard.Bus) {
	w := watch(t, b, "t1")
	defer w.Close()
	notify(t, b, "t2")
	if !quiet(w.C()) {
		t.Fatal("woken by another task's event")
	}
}

func testWatchClose(t *testing.T, b switchboard.Bus) {
	w := watch(t, b, "t1")
	w.Close()
	w.Close() // idempotent
	notify(t, b, "t1")
	select {
	case _, ok := <-w.C():
		if ok {
			t.Fatal("closed watch still signalled")
		}
	case <-time.After(50 * time.Millisecond):
	}
}

func testClose(t *testing.T, b switchboard.Bus) {
	w := watch(t, b, "t1")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case _, ok := <-w.C():
		if ok {
			t.Fatal("watch channel not closed by Close")
		}
	case <-time.After(time.Second):
		t.Fatal("watch channel not closed by Close")
	}
	w.Close()
	if _, err := b.Watch(context.Background(), "t2"); !errors.Is(err, switchboard.ErrBusClosed) {
		t.Fatalf("watch after close: %v", err)
	}
	if err := b.Notify(context.Background(), "t1"); !errors.Is(err, switchboard.ErrBusClosed) {
		t.Fatalf("notify after close: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}

func testManyWatchers(t *testing.T, b switchboard.Bus) {
	ws := make([]switchboard.Watch, 10)
	for i := range ws {
		ws[i] = watch(t, b, "t1")
		defer ws[i].Close()
	}
	notify(t, b, "t1")
	for i, w := range ws {
		if !waitFor(w.C()) {
			t.Fatalf("watcher %d not woken", i)
		}
	}
}

// funcWatch watches subject with WatchFunc and turns its calls into values
// on a channel: false for a notification, true for the bus's close.
func funcWatch(t *testing.T, b switchboard.Bus, subject string) (switchboard.Watch, <-chan bool) {
	t.Helper()
	calls := make(chan bool, 1000)
	w, err := b.WatchFunc(context.Background(), subject, func(closed bool) {
		select {
		case calls <- closed:
		default:
			t.Error("notify called more than 1000 times")
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if w.C() != nil {
		t.Error("a WatchFunc watch has a channel")
	}
	return w, calls
}

// nextCall returns the next call of a funcWatch within a second; ok is false
// when none came.
func nextCall(calls <-chan bool) (closed, ok bool) {
	select {
	case closed = <-calls:
		return closed, true
	case <-time.After(time.Second):
		return false, false
	}
}

// quietCalls reports whether a funcWatch gets no call for a short while.
func quietCalls(calls <-chan bool) bool {
	select {
	case <-calls:
		return false
	case <-time.After(50 * time.Millisecond):
		return true
	}
}

func testWatchFunc(t *testing.T, b switchboard.Bus) {
	w, calls := funcWatch(t, b, "agent.f")
	notify(t, b, "agent.other")
	if !quietCalls(calls) {
		t.Fatal("called for another subject")
	}
	notify(t, b, "agent.f")
	if closed, ok := nextCall(calls); !ok || closed {
		t.Fatalf("after a notify: call %v, closed %v", ok, closed)
	}
	w.Close()
	w.Close()
	notify(t, b, "agent.f")
	if !quietCalls(calls) {
		t.Fatal("called after the watch closed")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if !quietCalls(calls) {
		t.Fatal("a closed watch told of the bus's close")
	}
}

func testWatchFuncClose(t *testing.T, b switchboard.Bus) {
	w, calls := funcWatch(t, b, "agent.f")
	defer w.Close()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if closed, ok := nextCall(calls); !ok || !closed {
		t.Fatalf("after the bus closed: call %v, closed %v", ok, closed)
	}
	if !quietCalls(calls) {
		t.Fatal("called again after the bus closed")
	}
	if _, err := b.WatchFunc(context.Background(), "agent.g", func(bool) {}); !errors.Is(err, switchboard.ErrBusClosed) {
		t.Fatalf("WatchFunc after close: %v", err)
	}
}

// RunAcross runs the part of the contract that spans instances. open
// returns two buses of one deployment, ready to carry hints between them
// (for NATS: on two servers of a cluster, with the routes up).
func RunAcross(t *testing.T, open func(t *testing.T) (a, b switchboard.Bus)) {
	tests := map[string]func(*testing.T, switchboard.Bus, switchboard.Bus){
		"NotifyWakesOtherInstance": testAcrossNotify,
		"AcrossOtherSubjectQuiet":  testAcrossOther,
		"AcrossBothWatchersWoken":  testAcrossBoth,
		"AcrossCoalesces":          testAcrossCoalesce,
		"AcrossWatchFunc":          testAcrossWatchFunc,
	}
	for name, fn := range tests {
		t.Run(name, func(t *testing.T) {
			a, b := open(t)
			t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
			fn(t, a, b)
		})
	}
}

func testAcrossNotify(t *testing.T, a, b switchboard.Bus) {
	w := watch(t, b, "task.x")
	defer w.Close()
	notify(t, a, "task.x")
	if !waitFor(w.C()) {
		t.Fatal("a hint on one instance did not wake a watcher on the other")
	}
	notify(t, b, "task.x") // and back, on the same instance
	if !waitFor(w.C()) {
		t.Fatal("a hint did not wake a watcher on its own instance")
	}
}

func testAcrossOther(t *testing.T, a, b switchboard.Bus) {
	w := watch(t, b, "task.x")
	defer w.Close()
	notify(t, a, "task.y")
	notify(t, a, "agent.x")
	if !quiet(w.C()) {
		t.Fatal("woken by another subject's hint")
	}
}

func testAcrossBoth(t *testing.T, a, b switchboard.Bus) {
	wa, wb := watch(t, a, "agent.z"), watch(t, b, "agent.z")
	defer wa.Close()
	defer wb.Close()
	notify(t, a, "agent.z")
	if !waitFor(wa.C()) || !waitFor(wb.C()) {
		t.Fatal("a hint did not wake the watchers of both instances")
	}
}

func testAcrossCoalesce(t *testing.T, a, b switchboard.Bus) {
	w := watch(t, b, "task.c")
	defer w.Close()
	const n = 500
	for range n {
		notify(t, a, "task.c")
	}
	if !waitFor(w.C()) {
		t.Fatal("watcher not woken")
	}
	requireMerged(t, w, n)
}

func testAcrossWatchFunc(t *testing.T, a, b switchboard.Bus) {
	w, calls := funcWatch(t, b, "agent.f")
	defer w.Close()
	notify(t, a, "agent.f")
	if closed, ok := nextCall(calls); !ok || closed {
		t.Fatalf("a hint on one instance: call %v, closed %v", ok, closed)
	}
	notify(t, a, "agent.other")
	if !quietCalls(calls) {
		t.Fatal("called for another subject's hint")
	}
}

// requireMerged drains the signals still arriving at w after the first,
// and fails when they are not far fewer than the n notifications sent.
func requireMerged(t *testing.T, w switchboard.Watch, n int) {
	t.Helper()
	got := 1
	for !quiet(w.C()) {
		got++
		if got >= n {
			t.Fatalf("%d signals for %d notifications: they do not merge", got, n)
		}
	}
}
