package membus

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/switchboard-dev/switchboard"
)

var _ switchboard.Carrier = (*Bus)(nil)

// Publish implements switchboard.Carrier: it calls the subject's
// subscribers one after the other on the caller's goroutine, before it
// returns, and so never drops a message. It calls them without the bus's
// lock held, so that they may publish in turn.
func (b *Bus) Publish(_ context.Context, subject string, data []byte) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return switchboard.ErrBusClosed
	}
	subs := b.subs[subject] // never changed in place (see add and remove)
	b.mu.Unlock()
	for _, s := range subs {
		if !s.closed.Load() {
			s.fn(data)
		}
	}
	return nil
}

// Subscribe implements switchboard.Carrier.
func (b *Bus) Subscribe(_ context.Context, subject string, fn func(data []byte)) (switchboard.Subscription, error) {
	s := &subscription{bus: b, subject: subject, fn: fn}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, switchboard.ErrBusClosed
	}
	if b.subs == nil {
		b.subs = make(map[string][]*subscription)
	}
	// A new slice each time: Publish reads the old one without the lock.
	b.subs[subject] = append(slices.Clip(b.subs[subject]), s)
	return s, nil
}

// subscription is one open switchboard.Subscription.
type subscription struct {
	bus     *Bus
	subject string
	fn      func(data []byte)
	closed  atomic.Bool // set by Close: a Publish that took the list before stops calling fn
}

// Close implements switchboard.Subscription.
func (s *subscription) Close() {
	if s.closed.Swap(true) {
		return
	}
	b := s.bus
	b.mu.Lock()
	defer b.mu.Unlock()
	list := b.subs[s.subject]
	i := slices.Index(list, s)
	if i < 0 {
		return
	}
	if len(list) == 1 {
		delete(b.subs, s.subject)
		return
	}
	b.subs[s.subject] = slices.Delete(slices.Clone(list), i, i+1)
}
