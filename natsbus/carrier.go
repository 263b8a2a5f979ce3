package natsbus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/switchboard-dev/switchboard"
)

var _ switchboard.Carrier = (*Bus)(nil)

// The Carrier's messages travel on subjects of their own, outside the
// hints' "<prefix>.>": every instance subscribes to all hints with one
// wildcard, but a message goes only to the instances that subscribed to
// its subject (the holder of a session's end), so that a cluster does not
// copy every frame of every session to every instance. The subject of a
// message is "<prefix>-msg.<subject>"; NATS permissions must allow it.
//
// An instance holds one NATS subscription per subject that has local
// subscribers, and all of them deliver into one channel that one goroutine
// drains (nats.go would otherwise run a goroutine per subscription). The
// channel is bounded: when it is full, NATS drops the message (a slow
// consumer) rather than queue it, as the Carrier's contract allows.

// carrierQueue bounds the messages from other instances waiting for the
// dispatcher.
const carrierQueue = 8192

// carrier is a Bus's Carrier state.
type carrier struct {
	mu     sync.Mutex
	subs   map[string]*remoteSub // guarded by mu: the NATS subscription of each subject with local subscribers
	ch     chan *nats.Msg        // immutable after the first Subscribe: messages of every subscription
	done   chan struct{}         // closed by stop: the dispatcher ends
	ended  chan struct{}         // closed when the dispatcher has ended
	closed bool                  // guarded by mu
}

// remoteSub is the NATS subscription of a subject and how many local
// subscriptions share it.
type remoteSub struct {
	sub *nats.Subscription
	n   int
}

// msgSubject returns the NATS subject of a Carrier subject.
func (b *Bus) msgSubject(subject string) string {
	return strings.TrimSuffix(b.prefix, ".") + "-msg." + subject
}

// Publish implements switchboard.Carrier: it hands data to this instance's
// subscribers, then publishes it for the others (without waiting for
// them; the client buffers it while reconnecting).
func (b *Bus) Publish(ctx context.Context, subject string, data []byte) error {
	if err := b.local.Publish(ctx, subject, data); err != nil {
		return err
	}
	if err := b.nc.Publish(b.msgSubject(subject), data); err != nil {
		if errors.Is(err, nats.ErrConnectionClosed) {
			return switchboard.ErrBusClosed
		}
		return fmt.Errorf("natsbus: publish a message on %s: %w", subject, err)
	}
	return nil
}

// Subscribe implements switchboard.Carrier.
func (b *Bus) Subscribe(ctx context.Context, subject string, fn func(data []byte)) (switchboard.Subscription, error) {
	local, err := b.local.Subscribe(ctx, subject, fn)
	if err != nil {
		return nil, err
	}
	c := &b.carrier
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		local.Close()
		return nil, switchboard.ErrBusClosed
	}
	if c.ch == nil {
		c.ch, c.done, c.ended = make(chan *nats.Msg, carrierQueue), make(chan struct{}), make(chan struct{})
		c.subs = make(map[string]*remoteSub)
		go b.dispatch()
	}
	rs := c.subs[subject]
	if rs == nil {
		// The SUB precedes on the connection whatever this instance
		// publishes next, so an answer to that finds the subscription.
		sub, err := b.nc.ChanSubscribe(b.msgSubject(subject), c.ch)
		if err != nil {
			local.Close()
			if errors.Is(err, nats.ErrConnectionClosed) {
				return nil, switchboard.ErrBusClosed
			}
			return nil, fmt.Errorf("natsbus: subscribe to messages on %s: %w", subject, err)
		}
		rs = &remoteSub{sub: sub}
		c.subs[subject] = rs
	}
	rs.n++
	return &subscription{bus: b, subject: subject, local: local}, nil
}

// dispatch hands the messages from other instances to this instance's
// subscribers, until the bus closes.
func (b *Bus) dispatch() {
	c := &b.carrier
	defer close(c.ended)
	prefix := b.msgSubject("")
	for {
		select {
		case <-c.done:
			return
		case m := <-c.ch:
			b.carried.Add(1)
			_ = b.local.Publish(context.Background(), strings.TrimPrefix(m.Subject, prefix), m.Data)
		}
	}
}

// stopCarrier ends the dispatcher, once the connection is closed.
func (b *Bus) stopCarrier() {
	c := &b.carrier
	c.mu.Lock()
	started := c.ch != nil && !c.closed
	c.closed = true
	c.mu.Unlock()
	if started {
		close(c.done)
		<-c.ended
	}
}

// subscription is one open switchboard.Subscription.
type subscription struct {
	bus     *Bus
	subject string
	local   switchboard.Subscription
	once    sync.Once
}

// Close implements switchboard.Subscription: it ends the local
// subscription, and the NATS subscription with the subject's last one.
func (s *subscription) Close() {
	s.once.Do(func() {
		s.local.Close()
		c := &s.bus.carrier
		c.mu.Lock()
		defer c.mu.Unlock()
		rs := c.subs[s.subject]
		if rs == nil {
			return
		}
		if rs.n--; rs.n == 0 {
			delete(c.subs, s.subject)
			_ = rs.sub.Unsubscribe()
		}
	})
}

// Carried returns how many Carrier messages the bus received from other
// instances since it started.
func (b *Bus) Carried() uint64 { return b.carried.Load() }
