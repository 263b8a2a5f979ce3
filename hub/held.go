package hub

import (
	"context"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// An agent that starts on a task at once answers its offer "working", and
// usually reports the end of its turn a moment later. Written as they come,
// that is two transactions, the first setting a state the second replaces
// at once. So the connection holds such an answer back for up to
// Config.HoldWorking (DefaultHoldWorking): an update of the task within
// that time that sets its state is written together with the
// acknowledgement, and the working state is left out (no one could have
// seen it for longer); otherwise (the time is up, or the update is an
// artifact) the answer is written first, as it came, and the task shows
// working that much later. The offer stops counting against the agent's
// window when the answer arrives, as before.
//
// A held answer is written before anything that would release its offer as
// unanswered: the connection's end (flushHeld), and the hello of a newer
// connection of the agent, which requeues the offers of the one it
// replaces (writeHeldNow, called by the newer connection).

// DefaultHoldWorking is Config.HoldWorking's default.
const DefaultHoldWorking = 20 * time.Millisecond

// heldAnswer is an answer to an offer that is held back.
type heldAnswer struct {
	d      *switchboard.Delivery
	answer a2a.Event
	at     time.Time // when it arrived
	timer  *time.Timer
	// taken is set (under c.mu) by whoever writes the answer. The timer
	// leaves it in c.held while it writes, and closes written after, so
	// that an update of the task waits for it rather than overtake it.
	taken   bool
	written chan struct{}
}

// bareWorking reports whether answer, to the offer d, says no more than
// that the agent works on the task: what is held back.
func bareWorking(d *switchboard.Delivery, answer a2a.Event) bool {
	t, ok := answer.(*a2a.Task)
	return ok && d.Kind == switchboard.DeliverTask && t.Status.State == a2a.TaskStateWorking &&
		t.Status.Message == nil && len(t.Artifacts) == 0 && len(t.Metadata) == 0
}

// setsState reports whether an agent's event sets the task's state, and
// so replaces the working state of a held answer: a status update, a
// message (which completes the task), or the task in a state past
// submitted. An artifact update does not; with it the held answer is
// written first.
func setsState(ev a2a.Event) bool {
	switch e := ev.(type) {
	case *a2a.TaskStatusUpdateEvent:
		return e.Status.State != a2a.TaskStateUnspecified && e.Status.State != a2a.TaskStateSubmitted
	case *a2a.Task:
		return e.Status.State != a2a.TaskStateUnspecified && e.Status.State != a2a.TaskStateSubmitted
	case *a2a.Message:
		return true
	}
	return false
}

// hold holds back answer, the agent's answer to the offer d, for up to
// Config.HoldWorking; then the timer writes it, unless takeHeld took it first.
// Whoever sets a held answer's taken writes it.
func (c *conn) hold(d *switchboard.Delivery, answer a2a.Event) {
	h := &heldAnswer{d: d, answer: answer, at: time.Now(), written: make(chan struct{})}
	c.mu.Lock()
	if c.held == nil {
		c.held = make(map[a2a.TaskID]*heldAnswer)
	}
	old := c.held[d.TaskID]
	if old != nil && !old.taken {
		old.taken = true
	} else {
		old = nil // none, or the timer writes it
	}
	c.held[d.TaskID] = h
	h.timer = time.AfterFunc(c.hub.cfg.HoldWorking, func() { c.releaseHeld(h) })
	c.heldWrites.Add(1)
	c.mu.Unlock()
	if old != nil { // an answer to an earlier offer of the task: written first
		old.timer.Stop()
		c.writeHeld(old)
	}
}

// releaseHeld writes h when its time is up, unless it was taken. It keeps
// h in c.held while it writes (see heldAnswer.taken).
func (c *conn) releaseHeld(h *heldAnswer) {
	c.mu.Lock()
	mine := c.held[h.d.TaskID] == h && !h.taken
	h.taken = true
	c.mu.Unlock()
	if !mine {
		return
	}
	c.writeHeld(h)
	c.mu.Lock()
	if c.held[h.d.TaskID] == h {
		delete(c.held, h.d.TaskID)
	}
	c.mu.Unlock()
	close(h.written)
}

// takeHeld takes the answer held for the task, if any; the caller writes
// it, with an update of the task (ApplyAgentEventAcking) or alone
// (writeHeld), and then calls c.heldWrites.Done. If the timer is writing
// it, takeHeld waits until it is written and returns nil.
func (c *conn) takeHeld(task a2a.TaskID) *heldAnswer {
	c.mu.Lock()
	h := c.held[task]
	if h == nil {
		c.mu.Unlock()
		return nil
	}
	if h.taken {
		c.mu.Unlock()
		<-h.written
		return nil
	}
	h.taken = true
	delete(c.held, task)
	c.mu.Unlock()
	h.timer.Stop()
	return h
}

// applyAgentEvent records, under ctx (the connection's, or an answer's
// span below it), an event the agent reports about one of its tasks, with the answer held for the task, if any, when the event takes
// the place of its working state.
func (c *conn) applyAgentEvent(ctx context.Context, id a2a.TaskID, ev a2a.Event) (*switchboard.Task, error) {
	h := c.takeHeld(id)
	if h != nil && !setsState(ev) {
		c.writeHeld(h) // an artifact, say: the answer's working state stays, written first
		h = nil
	}
	if h == nil {
		return c.hub.Service.ApplyAgentEvent(ctx, c.agent.Load(), id, ev)
	}
	t, err := c.hub.Service.ApplyAgentEventAcking(ctx, c.agent.Load(), id, ev, h.d, h.at)
	if err != nil {
		c.writeHeld(h) // the event was not applied: the answer is, as it came
	} else {
		c.heldWrites.Done()
	}
	return t, err
}

// writeHeld writes a held answer as it came, and marks it written. It
// writes even while the connection closes: the answer arrived, and an
// offer left unacknowledged would be offered again.
func (c *conn) writeHeld(h *heldAnswer) {
	defer c.heldWrites.Done()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), 10*time.Second)
	defer cancel()
	if err := c.hub.Service.AckOfferAt(ctx, c.agent.Load(), h.d, h.answer, h.at); err != nil {
		c.log.Error("record the agent's answer", "delivery_id", h.d.ID, "err", err)
	}
}

// flushHeld writes the answers still held and waits for every write of one
// to end: the connection closed (its reader has ended, so no answer is
// held after this), and the offers it leaves are released next.
func (c *conn) flushHeld() {
	c.writeHeldNow()
	c.heldWrites.Wait()
}

// writeHeldNow writes the answers held now and waits for those their timers
// are writing. A newer connection of the agent calls it before its hello
// requeues the offers this one was given, so that those it answered are
// found acknowledged. It does not wait on heldWrites: this connection's
// reader may still be running.
func (c *conn) writeHeldNow() {
	c.mu.Lock()
	var mine, writing []*heldAnswer
	for id, h := range c.held {
		if h.taken { // its timer writes it, and closes written after
			writing = append(writing, h)
			continue
		}
		h.taken = true
		delete(c.held, id)
		mine = append(mine, h)
	}
	c.mu.Unlock()
	for _, h := range mine {
		h.timer.Stop()
		c.writeHeld(h)
	}
	for _, h := range writing {
		<-h.written
	}
}
