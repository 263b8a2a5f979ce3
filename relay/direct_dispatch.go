package relay

import (
	"context"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// directDispatcher lets a running dispatcher (RunDispatcher) take a new
// task of its mode straight from the task's creation on this instance,
// as DirectOffers does for connections: the delivery is written already
// offered to the dispatcher, in the transaction that creates the task, and
// the attempt starts from the task in memory. That saves the claim's write
// transaction, the read of the task and the wait for the hint. Attempts
// beyond its room stay queued, for any instance's dispatcher to claim.
type directDispatcher struct {
	ctx    context.Context // the dispatcher's: its end cuts attempts short
	d      switchboard.Deliverer
	cfg    DispatchConfig
	holder string
	room   chan struct{}  // a slot per attempt in flight
	wg     sync.WaitGroup // attempts reserved and not yet ended

	mu     sync.Mutex
	closed bool // guarded by mu: the dispatcher stops; no more reservations
}

// registerDispatch makes the dispatcher of mode take new tasks directly
// until the returned function is called; that function waits for the
// attempts it started.
func (s *Service) registerDispatch(ctx context.Context, mode switchboard.DeliveryMode, d switchboard.Deliverer, cfg DispatchConfig, holder string) func() {
	r := &directDispatcher{ctx: ctx, d: d, cfg: cfg, holder: holder, room: make(chan struct{}, cfg.Concurrency)}
	s.dispatchers.Store(mode, r)
	return func() {
		r.mu.Lock()
		r.closed = true
		r.mu.Unlock()
		r.wg.Wait() // the registration stays until the last reservation is sent or given back
		s.dispatchers.CompareAndDelete(mode, r)
	}
}

// reserveDispatch makes d an attempt of this instance's dispatcher of mode,
// if it runs and has room, and returns its holder ("" when d stays
// queued). Its lease is the dispatcher's (Timeout + 30 s).
func (s *Service) reserveDispatch(mode switchboard.DeliveryMode, d *switchboard.Delivery, now time.Time) string {
	v, ok := s.dispatchers.Load(mode)
	if !ok {
		return ""
	}
	r := v.(*directDispatcher)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ""
	}
	select {
	case r.room <- struct{}{}:
	default:
		return ""
	}
	r.wg.Add(1)
	d.State, d.Holder, d.Attempts, d.OfferedAt, d.NextAttemptAt = switchboard.DeliveryOffered, r.holder, 1, &now, now.Add(r.cfg.Timeout+30*time.Second)
	return r.holder
}

// sendDispatch starts the attempt reserveDispatch reserved, once the
// task's change was committed (err nil) and left the delivery offered;
// otherwise it gives the room back. It reports whether the attempt began.
func (s *Service) sendDispatch(agent *switchboard.Agent, t *switchboard.Task, d *switchboard.Delivery, err error) bool {
	mode := agent.Mode
	v, _ := s.dispatchers.Load(mode)
	r, _ := v.(*directDispatcher)
	if r == nil {
		return false // cannot happen: a registration stays until its reservations end
	}
	release := func() {
		<-r.room
		r.wg.Done()
	}
	if err != nil || d.State != switchboard.DeliveryOffered {
		release() // not created, or the store queued it behind older work
		return false
	}
	o := s.offerFor(d, t)
	if o == nil {
		release()
		return false // cannot happen (offerFor logs it); the lease ends it
	}
	go func() {
		defer release()
		s.dispatchTo(r.ctx, mode, r.d, agent, o, r.cfg)
	}()
	return true
}
