package membus

import (
	"context"
	"sync"

	"github.com/switchboard-dev/switchboard"
)

var _ switchboard.Bus = (*Bus)(nil)

// Bus is an in-process switchboard.Bus.
type Bus struct {
	mu      sync.Mutex
	watches map[string]map[*watch]struct{} // guarded by mu: watches by subject
	subs    map[string][]*subscription     // guarded by mu: Carrier subscriptions by subject (carrier.go)
	closed  bool                           // guarded by mu
}

// New returns an open Bus.
func New() *Bus {
	return &Bus{watches: make(map[string]map[*watch]struct{})}
}

// Notify implements switchboard.Bus. It never blocks: a watcher that has a
// signal pending keeps that one.
func (b *Bus) Notify(_ context.Context, subject string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return switchboard.ErrBusClosed
	}
	for w := range b.watches[subject] {
		if w.fn != nil {
			w.fn(false)
			continue
		}
		select {
		case w.c <- struct{}{}:
		default:
		}
	}
	return nil
}

// Watch implements switchboard.Bus.
func (b *Bus) Watch(_ context.Context, subject string) (switchboard.Watch, error) {
	return b.add(&watch{bus: b, subject: subject, c: make(chan struct{}, 1)})
}

// WatchFunc implements switchboard.Bus. notify runs with the bus's lock
// held.
func (b *Bus) WatchFunc(_ context.Context, subject string, notify func(closed bool)) (switchboard.Watch, error) {
	return b.add(&watch{bus: b, subject: subject, fn: notify})
}

// add registers w.
func (b *Bus) add(w *watch) (switchboard.Watch, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, switchboard.ErrBusClosed
	}
	subject := w.subject
	set := b.watches[subject]
	if set == nil {
		set = make(map[*watch]struct{})
		b.watches[subject] = set
	}
	set[w] = struct{}{}
	return w, nil
}

// Close implements switchboard.Bus. It closes every watch's channel.
func (b *Bus) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	for _, set := range b.watches {
		for w := range set {
			if w.fn != nil {
				w.fn(true)
			} else {
				close(w.c)
			}
		}
	}
	b.watches = nil
	b.subs = nil
	return nil
}

// watch is one open switchboard.Watch.
type watch struct {
	bus     *Bus
	subject string
	c       chan struct{}     // capacity 1: pending signals merge; closed by Bus.Close (nil for fn)
	fn      func(closed bool) // set by WatchFunc instead of c
}

// C implements switchboard.Watch.
func (w *watch) C() <-chan struct{} { return w.c }

// Close implements switchboard.Watch.
func (w *watch) Close() {
	b := w.bus
	b.mu.Lock()
	defer b.mu.Unlock()
	set, ok := b.watches[w.subject]
	if !ok {
		return
	}
	if _, ok := set[w]; !ok {
		return
	}
	delete(set, w)
	if len(set) == 0 {
		delete(b.watches, w.subject)
	}
}
