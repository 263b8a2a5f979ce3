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
// holdWorking: an update of the task within that time is written together
// with the acknowledgement, and the working state is left out (no one
// could have seen it for longer); otherwise the answer is written when the
// time is up, and the task shows working that much later. The offer stops
// counting against the agent's window when the answer arrives, as before.
const holdWorking = 20 * time.Millisecond

// heldAnswer is an answer to an offer that is held back.
type heldAnswer struct {
	d      *switchboard.Delivery
	answer a2a.Event
	at     time.Time // when it arrived
	timer  *time.Timer
}

// bareWorking reports whether answer, to the offer d, says no more than
// that the agent works on the task: what is held back.
func bareWorking(d *switchboard.Delivery, answer a2a.Event) bool {
	t, ok := answer.(*a2a.Task)
	return ok && d.Kind == switchboard.DeliverTask && t.Status.State == a2a.TaskStateWorking &&
		t.Status.Message == nil && len(t.Artifacts) == 0 && len(t.History) == 0 && len(t.Metadata) == 0
}

// hold holds back answer, the agent's answer to the offer d, for up to
// holdWorking; then the timer writes it, unless takeHeld took it first.
// Whoever removes a held answer from c.held owns it and must write it.
func (c *conn) hold(d *switchboard.Delivery, answer a2a.Event) {
	h := &heldAnswer{d: d, answer: answer, at: time.Now()}
	c.mu.Lock()
	if c.held == nil {
		c.held = make(map[a2a.TaskID]*heldAnswer)
	}
	old := c.held[d.TaskID]
	c.held[d.TaskID] = h
	h.timer = time.AfterFunc(holdWorking, func() { c.releaseHeld(h) })
	c.heldWrites.Add(1)
	c.mu.Unlock()
	if old != nil { // an answer to an earlier offer of the task: written first
		old.timer.Stop()
		c.writeHeld(old)
	}
}

// releaseHeld writes h when its time is up, unless it was taken.
func (c *conn) releaseHeld(h *heldAnswer) {
	c.mu.Lock()
	mine := c.held[h.d.TaskID] == h
	if mine {
		delete(c.held, h.d.TaskID)
	}
	c.mu.Unlock()
	if mine {
		c.writeHeld(h)
	}
}

// takeHeld takes the answer held for the task, if any; the caller writes
// it, with an update of the task (ApplyAgentEventAcking) or alone
// (writeHeld), and then calls c.heldWrites.Done.
func (c *conn) takeHeld(task a2a.TaskID) *heldAnswer {
	c.mu.Lock()
	h := c.held[task]
	if h != nil {
		delete(c.held, task)
	}
	c.mu.Unlock()
	if h != nil {
		h.timer.Stop()
	}
	return h
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

// flushHeld writes the answers still held and waits for those being
// written: the connection closed, and the offers it leaves are released
// next.
func (c *conn) flushHeld() {
	c.mu.Lock()
	var hs []*heldAnswer
	for id, h := range c.held {
		delete(c.held, id)
		hs = append(hs, h)
	}
	c.mu.Unlock()
	for _, h := range hs {
		h.timer.Stop()
		c.writeHeld(h)
	}
	c.heldWrites.Wait()
}
