package relay

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// A blocking call's new task, taken at once by a dispatcher that writes on
// answer (DispatchConfig.WriteOnAnswer: a front's), is sent before it is
// written. The task is then written once, with the first answer, the ids
// the upstream named and the message id, where it would otherwise be
// written twice: with its delivery, then with the answer and the
// delivery's acknowledgement. That spares the usual task, which ends its
// turn in one answer, a commit on its path and about half of its writes.
//
// Nothing is given away for it: every id the message names was checked as
// the caller's before (checkReferences), the new task's ids are ours and
// reach the caller only once written, and a message sent again is looked
// up before it is sent. A task whose answer does not come within
// earlyWriteAfter, whose attempt ends without one, or whose caller's wait
// ends first, is written as it would have been (its delivery offered to
// this dispatcher, as sent) and goes on from there as any task does.

// earlyWriteAfter is how long a task sent before it is written may wait
// for its first answer unwritten: it bounds how long a task is unknown to
// every list, and lost with this process.
const earlyWriteAfter = 500 * time.Millisecond

// earlyTask is a new task sent before it is written.
type earlyTask struct {
	s      *Service
	agent  *switchboard.Agent
	t      *switchboard.Task      // as created; written as a copy, so the caller may read it
	change switchboard.TaskChange // as createTask would write it, without the delivery
	d      *switchboard.Delivery  // offered to this instance's dispatcher, and sent
	key    string                 // agent, peer and message id
	timer  *time.Timer

	mu      sync.Mutex
	written bool          // guarded by mu: written, or refused (err)
	err     error         // guarded by mu: why it could not be written
	done    chan struct{} // closed once written is set
}

// writesOnAnswer reports whether the dispatcher that reserved d writes its
// new tasks with their first answer.
func (s *Service) writesOnAnswer(mode switchboard.DeliveryMode) bool {
	v, ok := s.dispatchers.Load(mode)
	return ok && v.(*directDispatcher).cfg.WriteOnAnswer
}

// createEarly sends t, whose delivery d this instance's dispatcher
// reserved, before writing it, and waits until it is written (with its
// first answer, or as created), or refused, or b's wait ends (then it is
// written as created at once). It returns t as created: the caller then
// waits for the turn's end on its watch, handed over already when the
// answer was written.
func (s *Service) createEarly(ctx context.Context, agent *switchboard.Agent, t *switchboard.Task, change *switchboard.TaskChange, d *switchboard.Delivery, b *blocking) (*switchboard.Task, error) {
	e := &earlyTask{s: s, agent: agent, t: t, change: *change, d: d, done: make(chan struct{}),
		key: agent.ID + "\x00" + t.PeerID + "\x00" + change.MessageID}
	e.change.NewDeliveries = nil // written only with the task as created
	if prev, loaded := s.earlyMessages.LoadOrStore(e.key, e); loaded {
		// The same message, sent here a moment ago and not yet written:
		// its caller gets the task, and this one the same once written.
		s.sendDispatch(agent, t, d, switchboard.ErrDuplicateMessage) // gives the room back
		select {
		case <-prev.(*earlyTask).done:
			return nil, switchboard.ErrDuplicateMessage
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	// A message sent again once its task is written must not be sent again.
	_, err := s.tasks.FindTaskByMessageID(ctx, agent.ID, t.PeerID, change.MessageID)
	switch {
	case err == nil:
		err = switchboard.ErrDuplicateMessage
	case switchboard.ErrorCode(err) == switchboard.ENOTFOUND:
		err = nil
	}
	if err != nil {
		s.earlyMessages.CompareAndDelete(e.key, e)
		s.sendDispatch(agent, t, d, err)
		return nil, err
	}
	t.Seq = createdSeq // as the write will number it
	s.early.Store(d.ID, e)
	e.timer = time.AfterFunc(earlyWriteAfter, func() { _ = e.writeCreated() })
	if !s.sendDispatch(agent, t, d, nil) {
		_ = e.writeCreated() // cannot happen: the offer was reserved
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

// earlyOf returns the unwritten task whose delivery is d, or nil.
func (s *Service) earlyOf(d *switchboard.Delivery) *earlyTask {
	if v, ok := s.early.Load(d.ID); ok {
		return v.(*earlyTask)
	}
	return nil
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
	ctx, cancel := context.WithTimeout(context.Background(), dispatchRecordTimeout)
	defer cancel()
	t, d := e.copyTask(), *e.d
	change := e.change
	change.NewDeliveries, change.OfferSent = []*switchboard.Delivery{&d}, true
	_, err := e.s.tasks.CreateTask(ctx, t, &change)
	e.settle(ctx, err)
	return err
}

// answer writes the task with the events that fn applies to it (the first
// answer, or the failure, of the task's upstream) and m, the ids the
// upstream named, if it is not written yet; it reports whether it was
// not. A task written as created meanwhile is the caller's to change as
// any other.
func (e *earlyTask) answer(ctx context.Context, m *switchboard.FrontTaskMap, fn func(t *switchboard.Task) ([]a2a.Event, error)) (bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.written {
		if e.err != nil {
			return true, e.err // refused: there is no task to answer
		}
		return false, nil
	}
	write := func(fn func(t *switchboard.Task) ([]a2a.Event, error)) (*switchboard.Task, []a2a.Event, error) {
		t := e.copyTask()
		created := t.A2A
		created.History = slices.Clone(created.History)
		evs, err := fn(t)
		if err != nil {
			return nil, nil, err
		}
		change := e.change
		change.Events, change.FrontMap, change.Created, change.OfferSent = evs, m, &created, true
		_, err = e.s.tasks.CreateTask(ctx, t, &change)
		return t, evs, err
	}
	t, evs, err := write(fn)
	var tooLarge *switchboard.TaskTooLargeError
	if switchboard.ErrorCode(err) == switchboard.EINVALIDAGENTRESPONSE || errors.As(err, &tooLarge) {
		// An answer that cannot be applied fails the task, as it would
		// once written.
		reason := switchboard.ErrorMessage(err)
		if tooLarge != nil {
			reason = tooLargeText(tooLarge)
		}
		t, evs, err = write(func(t *switchboard.Task) ([]a2a.Event, error) {
			return []a2a.Event{e.s.failStatus(t, reason, invalidAnswerMark)}, nil
		})
	}
	if err != nil {
		e.settle(ctx, err)
		return true, err
	}
	if e.s.OnAck != nil {
		e.s.OnAck(e.agent.Mode, e.d, e.s.Now())
	}
	events := make([]*switchboard.TaskEvent, len(evs))
	for i, ev := range evs {
		events[i] = &switchboard.TaskEvent{TaskID: t.ID(), Seq: createdSeq + 1 + int64(i), Event: ev, CreatedAt: t.UpdatedAt}
	}
	e.s.notifyEvents(ctx, t, events) // the waiting call is handed its turn before it is woken
	e.settle(ctx, nil)
	return true, nil
}

// settle records the outcome of e's write (with mu held) and forgets e.
func (e *earlyTask) settle(ctx context.Context, err error) {
	e.written, e.err = true, err
	e.timer.Stop()
	e.s.early.CompareAndDelete(e.d.ID, e)
	e.s.earlyMessages.CompareAndDelete(e.key, e)
	close(e.done)
	if err == nil {
		e.s.notify(ctx, switchboard.AccountAgentsSubject(e.agent.AccountID)) // open consoles count it
	}
}

// copyTask returns a copy of the task as created that a write may change.
func (e *earlyTask) copyTask() *switchboard.Task {
	t := *e.t
	t.A2A.History = slices.Clone(t.A2A.History)
	t.A2A.Artifacts = slices.Clone(t.A2A.Artifacts)
	return &t
}
