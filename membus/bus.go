// Package membus implements switchboard.Bus inside one process: the
// single-binary default. NotifyTask calls the watchers registered in the same
// process directly, the way a NATS bus delivers to the instances that
// subscribed to a subject.
package membus

import (
	"context"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

var _ switchboard.Bus = (*Bus)(nil)

// Bus is an in-process switchboard.Bus.
type Bus struct {
	mu      sync.Mutex
	watches map[a2a.TaskID]map[*watch]struct{} // guarded by mu
	closed  bool                               // guarded by mu
}

// New returns an open Bus.
func New() *Bus {
	return &Bus{watches: make(map[a2a.TaskID]map[*watch]struct{})}
}

// NotifyTask implements switchboard.Bus. It never blocks: a watcher that has
// a signal pending keeps that one.
func (b *Bus) NotifyTask(_ context.Context, id a2a.TaskID, _ int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return switchboard.ErrBusClosed
	}
	for w := range b.watches[id] {
		select {
		case w.c <- struct{}{}:
		default:
		}
	}
	return nil
}

// WatchTask implements switchboard.Bus.
func (b *Bus) WatchTask(_ context.Context, id a2a.TaskID) (switchboard.TaskWatch, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, switchboard.ErrBusClosed
	}
	w := &watch{bus: b, id: id, c: make(chan struct{}, 1)}
	set := b.watches[id]
	if set == nil {
		set = make(map[*watch]struct{})
		b.watches[id] = set
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
			close(w.c)
		}
	}
	b.watches = nil
	return nil
}

// watch is one open TaskWatch.
type watch struct {
	bus *Bus
	id  a2a.TaskID
	c   chan struct{} // capacity 1: pending signals merge; closed by Bus.Close
}

// C implements switchboard.TaskWatch.
func (w *watch) C() <-chan struct{} { return w.c }

// Close implements switchboard.TaskWatch.
func (w *watch) Close() {
	b := w.bus
	b.mu.Lock()
	defer b.mu.Unlock()
	set, ok := b.watches[w.id]
	if !ok {
		return
	}
	if _, ok := set[w]; !ok {
		return
	}
	delete(set, w)
	if len(set) == 0 {
		delete(b.watches, w.id)
	}
}
