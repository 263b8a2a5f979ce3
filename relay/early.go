package relay

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// A blocking call's new task, taken at once by a dispatcher that writes on
// answer (DispatchConfig.WriteOnAnswer: a front's) or offered at once to
// its connector agent's connection on this instance (Service.WriteOnAnswer,
// early_conn.go), is sent before it is written. The task is then written
// once, with the first answer, the ids the upstream named and the message
// id, where it would otherwise be written twice: with its delivery, then with the answer and the
// delivery's acknowledgement. That spares the usual task, which ends its
// turn in one answer, a commit on its path and about half of its writes.
//
// Nothing is given away for it:
//   - every id the message names was checked as the caller's before
//     (checkReferences), and the new task's ids are ours and reach the
//     caller only once written;
//   - a message sent again is looked up before it is sent, and a copy that
//     comes meanwhile waits for the task to be written (hold.go);
//   - every message of the peer counts it toward its quotas while it is
//     unwritten (earlyUsage), and a peer whose quotas may not pass has its
//     task written first, as usual; the write checks the open-task quota
//     as if the task were still open (its bytes were admitted when sent);
//   - a write that is refused all the same (the agent deleted, a store
//     failure) is the caller's answer, and the deliverer, told so with
//     ErrTaskUnwritten (by the answer's record, or by the end of its
//     attempt), cancels the work it started, which is not recorded as the
//     agent's failure.
//
// A task whose answer does not come within Service.EarlyWriteAfter, whose
// attempt ends without one, or whose caller's wait ends first, is written
// as it would have been (its delivery offered to this dispatcher or
// connection, as sent) and goes on from there as any task does.
//
// The holds and counts are this process's: a deployment that may have
// several instances must not set WriteOnAnswer.

// DefaultEarlyWriteAfter is Service.EarlyWriteAfter unless set.
const DefaultEarlyWriteAfter = 500 * time.Millisecond

// earlyWriteTimeout bounds the write of a task as created.
const earlyWriteTimeout = 30 * time.Second

// earlyTask is a new task sent before it is written.
type earlyTask struct {
	s      *Service
	agent  *switchboard.Agent
	t      *switchboard.Task      // as created; written as a copy, so the caller may read it
	change switchboard.TaskChange // as createTask would write it, without the delivery
	d      *switchboard.Delivery  // offered to this instance's dispatcher, and sent
	use    string                 // its key in s.earlyUse
	hold   *messageHold           // of its message, freed once it is written or refused

	mu      sync.Mutex
	timer   *time.Timer             // guarded by mu: writes it as created, if it is not answered in time
	stop    context.CancelCauseFunc // guarded by mu: ends the attempt that sent it, once it is refused
	written bool                    // guarded by mu: written, or refused (err)
	err     error                   // guarded by mu: why it could not be written
	done    chan struct{}           // closed once written is set
}

// writesOnAnswer reports whether new tasks for agents of mode are written
// with their first answer: a connector agent's when WriteOnAnswer is set
// and connections here are offered tasks directly, others' when their
// mode's dispatcher runs here with DispatchConfig.WriteOnAnswer.
func (s *Service) writesOnAnswer(mode switchboard.DeliveryMode) bool {
	if mode == switchboard.ModeConnector {
		return s.WriteOnAnswer && s.direct != nil
	}
	v, ok := s.dispatchers.Load(mode)
	return ok && v.(*directDispatcher).cfg.WriteOnAnswer
}

// sendsEarly returns the new task t, made by createTask with change, as a
// task to send before it is written, or nil if it must be written first:
// when its peer's quotas are too near to be sure it passes them. It
// returns ErrDuplicateMessage if the message's task is written already:
// a message sent again must not be sent again.
func (s *Service) sendsEarly(ctx context.Context, agent *switchboard.Agent, t *switchboard.Task, change *switchboard.TaskChange) (*earlyTask, error) {
	e := &earlyTask{s: s, agent: agent, t: t, change: *change, done: make(chan struct{}), use: peerKey(agent.ID, t.PeerID)}
	e.change.NewDeliveries = nil // written only with the task as created
	q := change.Quota
	var gen uint64
	if q != nil {
		gen = s.earlyUse.begin(e.use)
	}
	sent, open, bytes, err := s.tasks.MessageUsage(ctx, agent.ID, t.PeerID, change.MessageID)
	if err == nil && sent {
		err = switchboard.ErrDuplicateMessage
	}
	if q != nil {
		// add ends the read begun above, whatever it found.
		if !s.earlyUse.add(e.use, gen, q, open, bytes, err) && err == nil {
			return nil, nil // written first: the store checks the quotas as it writes
		}
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}

// createEarly sends e, whose delivery d this instance's dispatcher
// reserved, before writing it, and waits until it is written (with its
// first answer, or as created), or refused, or b's wait ends (then it is
// written as created at once). It returns the task as created: the caller
// then waits for the turn's end on its watch, handed over already when
// the answer was written.
func (s *Service) createEarly(ctx context.Context, e *earlyTask, d *switchboard.Delivery, b *blocking) (*switchboard.Task, error) {
	t := e.t
	e.d, e.hold = d, b.hold
	b.hold.keep()      // until e is written: a copy of the message waits for it
	t.Seq = createdSeq // as the write will number it
	s.early.Store(d.ID, e)
	s.earlyTasks.Store(t.ID(), e)
	e.mu.Lock()
	e.timer = time.AfterFunc(s.EarlyWriteAfter, func() { _ = e.writeCreated() })
	e.mu.Unlock()
	if !s.sendEarly(e) {
		s.unsent(ctx, e)
	}
	select {
	case <-e.done:
	case <-b.wait.Done():
		_ = e.writeCreated()
	case <-ctx.Done():
		return nil, ctx.Err() // the task goes on, and is written as it would be
	}
	if err := e.result(); err != nil {
		return nil, err
	}
	return t, nil
}

// result returns why e could not be written, once it is settled.
func (e *earlyTask) result() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// earlyOf returns the task sent before it was written whose delivery is
// d, while the attempt that sent it runs (written since, or refused), or
// nil.
func (s *Service) earlyOf(d *switchboard.Delivery) *earlyTask {
	if v, ok := s.early.Load(d.ID); ok {
		return v.(*earlyTask)
	}
	return nil
}

// attempt returns ctx, the context of the attempt that sends e, ended
// with a cause that wraps ErrTaskUnwritten once e is refused.
func (e *earlyTask) attempt(ctx context.Context) context.Context {
	ctx, stop := context.WithCancelCause(ctx)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stop = stop
	if e.written && e.err != nil {
		stop(unwritten(e.err))
	}
	return ctx
}

// writeEarly writes the task of delivery d as created, if it was sent
// before it was written and is not written yet, so that what follows
// finds it and its delivery in the store.
func (s *Service) writeEarly(d *switchboard.Delivery) error {
	if e := s.earlyOf(d); e != nil {
		return e.writeCreated()
	}
	return nil
}

// writeCreated writes the task as created, with its delivery offered to
// this instance's dispatcher and sent, unless it is written already.
func (e *earlyTask) writeCreated() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.written {
		return e.err
	}
	ctx, cancel := context.WithTimeout(context.Background(), earlyWriteTimeout)
	defer cancel()
	err := func() error {
		held, done, err := e.lockPeer(ctx)
		if err != nil {
			return err
		}
		defer done()
		t, d := e.copyTask(), *e.d
		change := e.writeChange(held)
		change.NewDeliveries, change.OfferSent = []*switchboard.Delivery{&d}, true
		_, err = e.s.tasks.CreateTask(ctx, t, &change)
		return err
	}()
	e.settle(ctx, err)
	return err
}

// answer writes the task with the events that fn applies to it (the first
// answer, or the failure, of the task's agent or upstream) and m, the ids
// a front's upstream named, if it is not written yet; it returns the task
// as written and reports whether it was not written before. A task
// written as created meanwhile is the caller's to change as any other.
//
// The answer arrived at at. A connector agent's task written still open
// is written with its delivery acknowledged: the agent confirmed it holds
// the work, which is offered again if it connects without it.
func (e *earlyTask) answer(ctx context.Context, at time.Time, m *switchboard.FrontTaskMap, fn func(t *switchboard.Task) ([]a2a.Event, error)) (*switchboard.Task, bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.written {
		if e.err != nil {
			return nil, true, unwritten(e.err) // refused: there is no task to answer
		}
		return nil, false, nil
	}
	ctx, cancel := recordContext(ctx)
	defer cancel()
	var held int
	write := func(fn func(t *switchboard.Task) ([]a2a.Event, error)) (*switchboard.Task, []a2a.Event, error) {
		t := e.copyTask()
		created := t.A2A
		created.History = slices.Clone(created.History)
		evs, err := fn(t)
		if err != nil {
			return nil, nil, err
		}
		change := e.writeChange(held)
		change.Events, change.FrontMap, change.Created, change.OfferSent = evs, m, &created, true
		if e.agent.Mode == switchboard.ModeConnector && !t.State().Terminal() {
			d := *e.d
			d.State, d.Holder = switchboard.DeliveryAcked, ""
			change.NewDeliveries = []*switchboard.Delivery{&d}
		}
		_, err = e.s.tasks.CreateTask(ctx, t, &change)
		return t, evs, err
	}
	// The write ends (done) before the caller is woken, whose next message
	// may be the peer's.
	t, evs, err := func() (*switchboard.Task, []a2a.Event, error) {
		h, done, err := e.lockPeer(ctx)
		if err != nil {
			return nil, nil, err
		}
		defer done()
		held = h
		t, evs, err := write(fn)
		var tooLarge *switchboard.TaskTooLargeError
		if switchboard.ErrorCode(err) == switchboard.EINVALIDAGENTRESPONSE || errors.As(err, &tooLarge) {
			// An answer that cannot be applied fails the task, as it
			// would once written.
			reason := switchboard.ErrorMessage(err)
			if tooLarge != nil {
				reason = tooLargeText(tooLarge)
			}
			t, evs, err = write(func(t *switchboard.Task) ([]a2a.Event, error) {
				return []a2a.Event{e.s.failStatus(t, reason, invalidAnswerMark)}, nil
			})
		}
		return t, evs, err
	}()
	if err != nil {
		e.settle(ctx, err)
		return nil, true, unwritten(err)
	}
	if e.s.OnAck != nil {
		e.s.OnAck(e.agent.Mode, e.d, at)
	}
	events := make([]*switchboard.TaskEvent, len(evs))
	for i, ev := range evs {
		events[i] = &switchboard.TaskEvent{TaskID: t.ID(), Seq: createdSeq + 1 + int64(i), Event: ev, CreatedAt: t.UpdatedAt}
	}
	e.s.notifyEvents(ctx, t, events) // the waiting call is handed its turn before it is woken
	e.settle(ctx, nil)
	return t, true, nil
}

// unwritten is the error of an answer to a task that err kept from being
// written: the deliverer stops, and stops the agent's work on it.
func unwritten(err error) error {
	return fmt.Errorf("%w: %w", switchboard.ErrTaskUnwritten, err)
}

// settle records the outcome of e's write (with mu held) and forgets e.
func (e *earlyTask) settle(ctx context.Context, err error) {
	e.written, e.err = true, err
	if e.timer != nil {
		e.timer.Stop()
	}
	if err != nil && e.stop != nil {
		e.stop(unwritten(err)) // no one will read what the agent does
	}
	e.hold.free() // a copy of the message now finds the task, or is sent itself
	e.s.earlyTasks.Delete(e.t.ID())
	if e.agent.Mode == switchboard.ModeConnector {
		e.s.early.Delete(e.d.ID) // a dispatcher's attempt forgets its own when it ends
	}
	close(e.done)
	if err == nil {
		e.s.notify(ctx, switchboard.AccountAgentsSubject(e.agent.AccountID)) // open consoles count it
	}
}

// lockPeer takes the lock of e's peer's writes (earlyUsage.write) for
// e's write, and returns how many other tasks of the peer are unwritten,
// and the function that ends the write: e is then no longer counted.
func (e *earlyTask) lockPeer(ctx context.Context) (held int, done func(), err error) {
	if e.change.Quota == nil {
		return 0, func() {}, nil // not counted
	}
	return e.s.earlyUse.write(ctx, e.use, true)
}

// writeChange returns the change that writes e, with held of the peer's
// other tasks unwritten counted toward its open-task quota. Its bytes
// were admitted when it was sent (earlyUsage.add): the agent's answers to
// the peer's other tasks, which may pass the byte quota, do not refuse it
// since.
func (e *earlyTask) writeChange(held int) switchboard.TaskChange {
	change := e.change
	if change.Quota != nil {
		q := e.s.quota(held)
		q.MaxBytes, q.HeldBytes = 0, 0
		change.Quota = q
	}
	return change
}

// copyTask returns a copy of the task as created that a write may change.
func (e *earlyTask) copyTask() *switchboard.Task {
	t := *e.t
	t.A2A.History = slices.Clone(t.A2A.History)
	t.A2A.Artifacts = slices.Clone(t.A2A.Artifacts)
	return &t
}

// earlyUsage keeps, for each peer of each agent, what the store's counts
// of its usage (PeerUsage, MessageUsage) do not hold yet: its tasks sent
// before they are written. Every message of the peer on this instance counts them toward
// its quotas (PeerQuota.HeldOpen, HeldBytes), and the writes of the peer's
// messages and early tasks on this instance take turns (write), so that
// what one counts as held is not written meanwhile, and counted twice. A
// send that would go early reads the store's counts between begin and
// add; a write of the peer's that began before add, or a change of the
// counts after begin, makes add refuse, since the read may not hold it and
// the write does not hold the new task. So a task is sent early only if
// no message of the peer written on this instance can take its place in
// the quotas.
type earlyUsage struct {
	mu    sync.Mutex
	peers map[string]*peerEarly // agent and peer → its tasks in flight unwritten
}

// peerEarly is one peer's entry in earlyUsage.
type peerEarly struct {
	n       int    // tasks sent and not yet written
	readers int    // sends between begin and add
	writers int    // writes of the peer's messages waiting for, or holding, turn
	gen     uint64 // changes of the peer's usage on this instance

	turn chan struct{} // one slot: held by the peer's write in progress
}

// begin registers a send about to read the peer key's usage, and returns
// what add needs to know whether it changed since.
func (u *earlyUsage) begin(key string) uint64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	p := u.entry(key)
	p.readers++
	return p.gen
}

// add ends the read begun with gen and counts one more unwritten task of
// the peer key, whose written tasks hold open and bytes, if nothing
// changed them since on this instance and its quotas q surely pass: every
// unwritten task counted open, and as big as a task may be. It returns
// false, and leaves the count as it was, otherwise (or on an error err of
// the read).
func (u *earlyUsage) add(key string, gen uint64, q *switchboard.PeerQuota, open int, bytes int64, err error) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	p := u.peers[key]
	p.readers--
	n := p.n + 1
	// Bytes: room for the unwritten tasks, and for one message more, so
	// that what is held never refuses a message by itself.
	ok := err == nil && p.gen == gen && p.writers == 0 &&
		(q.MaxOpenTasks <= 0 || open+n <= q.MaxOpenTasks) &&
		(q.MaxBytes <= 0 || bytes+int64(n+1)*switchboard.MaxTaskBytes <= q.MaxBytes)
	if ok {
		p.n = n
	}
	u.forget(key, p)
	return ok
}

// write waits for the turn of a write of the peer key's (a message, or,
// with self, one of its unwritten tasks), and returns how many of its
// other tasks are unwritten, to hold toward its quotas, and the function
// that ends the write once it is committed or refused (self then no
// longer counted).
//
// A write waits for its turn only while the peer has tasks unwritten: with
// none, none can be sent early before it ends (add refuses while a write
// is in progress), and writes of the peer go together. It gives up when
// ctx ends, with ctx's error; a task that gives up its write (self) is
// refused, and no longer counted.
func (u *earlyUsage) write(ctx context.Context, key string, self bool) (held int, end func(), err error) {
	u.mu.Lock()
	p := u.entry(key)
	p.writers++
	turn := self || p.n > 0
	u.mu.Unlock()
	if turn {
		select {
		case p.turn <- struct{}{}:
		case <-ctx.Done():
			u.mu.Lock()
			if self {
				p.n--
				p.gen++
			}
			p.writers--
			u.forget(key, p)
			u.mu.Unlock()
			return 0, nil, ctx.Err()
		}
	}
	u.mu.Lock()
	held = p.n
	if self {
		held--
	}
	u.mu.Unlock()
	return held, func() {
		u.mu.Lock()
		defer u.mu.Unlock()
		if self {
			p.n--
		}
		p.writers--
		p.gen++
		if turn {
			<-p.turn
		}
		u.forget(key, p)
	}, nil
}

// entry returns the entry of key, made if missing.
func (u *earlyUsage) entry(key string) *peerEarly {
	if u.peers == nil {
		u.peers = make(map[string]*peerEarly)
	}
	p := u.peers[key]
	if p == nil {
		p = &peerEarly{turn: make(chan struct{}, 1)}
		u.peers[key] = p
	}
	return p
}

// forget drops p, the entry of key, once nothing counts on it.
func (u *earlyUsage) forget(key string, p *peerEarly) {
	if p.n == 0 && p.readers == 0 && p.writers == 0 && u.peers[key] == p {
		delete(u.peers, key)
	}
}

// peerKey is the key of a peer of an agent in earlyUsage.
func peerKey(agentID, peerID string) string { return agentID + "\x00" + peerID }
