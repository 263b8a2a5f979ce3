package hub

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connproto"
	"go.opentelemetry.io/otel/trace"
)

// refreshEvery is how often a connection rereads its agent, session and
// token without a hint, in case a hint was lost (each connection at its own
// moment within it, so that the rereads of many spread out).
const refreshEvery = 5 * time.Minute

// refreshGap is the least time between two rereads on change hints (see
// switchboard.AgentChangeSubject), so that a burst of changes costs one
// reread; a hint within the gap rereads when it ends. Changes still take
// effect within this gap (plus the bus's delay). Hints of queued work
// reread nothing.
const refreshGap = 250 * time.Millisecond

// The writer owns every write to the socket: it sends the reader's
// answers, offers the agent's queued work (once the agent has said hello,
// and again on every hint, acknowledgement and poll), and pings.
//
// It holds no goroutine while the connection is idle, which is how a
// connection spends its life. What needs the writer (an answer queued, a
// hint on one of the agent's subjects, a timer, a pong, the connection's end) sets
// its event's bit in writer.state with wake; the wake that finds no writer
// running starts one, which handles the events set, again until none is
// left, and then ends. One writer runs at a time, each ordered after the
// last by state, so the writer's fields need no lock. An idle connection
// costs its reader's goroutine, two timers, the wake-up registered on its
// context, its two bus watches and this struct.
//
// A ping waits for its pong in a short-lived goroutine of its own, so that
// waiting does not hold up writes; a ping still unanswered when the next
// one is due means the agent is gone.

// writer is the writer's state.
type writer struct {
	// state holds a bit per event waiting (1 << writerEvent) and
	// writerRunning while a writer goroutine runs. A writer that ended the
	// connection leaves writerRunning set, so that none starts again.
	state atomic.Uint32
	// done is closed when the writer has ended for good.
	done chan struct{}

	// Owned by the running writer.
	ping, slow   *time.Timer
	refreshLater *time.Timer // a reread put off by refreshGap; set while refreshDue
	refreshDue   bool
	helloDone    bool
	pinging      bool      // a ping waits for its pong
	pongErr      error     // the ping's outcome, set before it wakes the writer with evPong
	nextPing     time.Time // when the ping timer is due: each interval after the last, however long the writer took
	lastRefresh  time.Time
}

// writerRunning is the bit of writer.state that says a writer runs.
const writerRunning = 1 << 31

// writerEvent names what needs the writer. The writer handles the events
// set in this order.
type writerEvent uint8

const (
	evDone         writerEvent = iota // the connection ended
	evAnswers                         // answers are queued
	evHello                           // hello was answered
	evHintsEnded                      // the bus closed the watch
	evChange                          // the agent's change subject was notified
	evRefreshLater                    // a reread put off is due
	evMore                            // there may be more work to claim
	evSlow                            // the slow reread is due
	evLost                            // the session could not be renewed
	evPong                            // the pending ping has its outcome (before evPing: a pong and the next ping due in one batch is an answered ping)
	evPing                            // a ping is due
	evCount
)

// errWriterDone ends the writer without an error.
var errWriterDone = errors.New("writer done")

// startWriter arms the writer's timers and its wake-up when the
// connection's context ends. c.ctx is set. It runs as the first writer,
// so that no writer reads the timers before they are stored; a wake
// meanwhile starts the next one as it returns. It must run before the
// connection is registered, which lets others wake it.
func (c *conn) startWriter() {
	w := &c.w
	w.state.Store(writerRunning)
	w.done = make(chan struct{})
	w.lastRefresh = time.Now()
	w.nextPing = time.Now().Add(c.hub.cfg.HeartbeatInterval)
	w.ping = time.AfterFunc(c.hub.cfg.HeartbeatInterval, func() { c.wakeHere(evPing) })
	w.slow = time.AfterFunc(slowRefreshDelay(), func() { c.wakeHere(evSlow) })
	context.AfterFunc(c.ctx, func() { c.wakeHere(evDone) })
	if !w.state.CompareAndSwap(writerRunning, 0) {
		go c.runWriter()
	}
}

// slowRefreshDelay is when the next reread without a hint is due: at most
// refreshEvery from now, at a moment of its own within that.
func slowRefreshDelay() time.Duration { return refreshEvery - rand.N(refreshEvery/2) }

// onWork is the connection's watch of its agent's work subject.
func (c *conn) onWork(closed bool) {
	if closed {
		c.wake(evHintsEnded)
	} else {
		c.wake(evMore)
	}
}

// onChange is the connection's watch of its agent's change subject.
func (c *conn) onChange(closed bool) {
	if closed {
		c.wake(evHintsEnded)
	} else {
		c.wake(evChange)
	}
}

// wake tells the writer of ev, and starts a writer goroutine if none runs.
// It never blocks.
func (c *conn) wake(ev writerEvent) {
	if c.w.state.Or(1<<ev|writerRunning)&writerRunning == 0 {
		go c.runWriter()
	}
}

// wakeHere is wake for a caller on a goroutine of its own that is about to
// end (a timer's, a ping's): it runs the writer itself instead of starting
// another goroutine.
func (c *conn) wakeHere(ev writerEvent) {
	if c.w.state.Or(1<<ev|writerRunning)&writerRunning == 0 {
		c.runWriter()
	}
}

// runWriter handles the events set until none is left. The writer's work
// runs on this short-lived goroutine, so the deep stacks of the store's
// calls go back to the runtime when it ends.
func (c *conn) runWriter() {
	for {
		evs := c.w.state.And(writerRunning) &^ writerRunning
		if evs == 0 {
			if c.w.state.CompareAndSwap(writerRunning, 0) {
				return
			}
			continue // woken meanwhile
		}
		if err := c.handle(evs); err != nil {
			c.stopWriter(err)
			return
		}
	}
}

// stopWriter ends the writer for good after handle returned err, and ends
// the connection with it.
func (c *conn) stopWriter(err error) {
	w := &c.w
	defer close(w.done)
	w.ping.Stop()
	w.slow.Stop()
	if w.refreshLater != nil {
		w.refreshLater.Stop()
	}
	if err == errWriterDone {
		err = nil
	}
	c.end(err)
}

// handle does the work the events evs call for, then claims work if one of
// them asks for it. errWriterDone or another error ends the writer.
func (c *conn) handle(evs uint32) error {
	claim := false
	for ev := range evCount {
		if evs&(1<<ev) == 0 {
			continue
		}
		more, err := c.handleEvent(ev)
		if err != nil {
			return err
		}
		claim = claim || more
	}
	if claim && !c.closing.Load() {
		return c.offer()
	}
	return nil
}

// handleEvent does the work ev calls for and reports whether to claim work
// after it.
func (c *conn) handleEvent(ev writerEvent) (claim bool, err error) {
	w := &c.w
	switch ev {
	case evDone:
		return false, errWriterDone
	case evAnswers:
		return false, c.flush()
	case evHello:
		// The answer to hello is queued before hello is marked done: send
		// it (and anything queued with it) before the first offer.
		if err := c.flush(); err != nil {
			return false, err
		}
		w.helloDone = true
		return true, nil
	case evHintsEnded:
		return false, &closeErr{connproto.CloseRestart, "server restarting"}
	case evChange:
		// The agent's settings, session or token changed.
		if wait := refreshGap - time.Since(w.lastRefresh); wait > 0 {
			if !w.refreshDue {
				w.refreshDue = true
				if w.refreshLater == nil {
					w.refreshLater = time.AfterFunc(wait, func() { c.wakeHere(evRefreshLater) })
				} else {
					w.refreshLater.Reset(wait)
				}
			}
			return w.helloDone, nil
		}
		return w.helloDone, c.reread()
	case evRefreshLater:
		w.refreshDue = false
		if time.Since(w.lastRefresh) < refreshGap {
			return false, nil // a hint in the same batch reread already
		}
		return false, c.reread()
	case evMore:
		return w.helloDone, nil
	case evSlow:
		w.slow.Reset(slowRefreshDelay())
		return w.helloDone, c.reread()
	case evLost:
		// The hub could not renew this connection's session: a newer
		// connection of the agent took it, or the agent is gone.
		if err := c.refresh(); err != nil {
			return false, err // deleted, disabled or revoked: say so
		}
		return false, &closeErr{connproto.CloseReplaced, "replaced by a newer connection of this agent"}
	case evPing:
		// Due an interval after the last, not after this wake-up, so that
		// a busy writer does not push every later ping back.
		interval := c.hub.cfg.HeartbeatInterval
		w.nextPing = w.nextPing.Add(interval)
		if now := time.Now(); w.nextPing.Before(now) {
			w.nextPing = now.Add(interval)
		}
		w.ping.Reset(time.Until(w.nextPing))
		if w.pinging {
			c.log.Info("agent did not answer a ping")
			return false, &closeErr{connproto.CloseHeartbeat, "no answer to a ping"}
		}
		if c.heard.Within(c.hub.cfg.HeartbeatInterval) {
			return false, nil // the agent spoke (or pinged) within the interval: it is there
		}
		w.pinging = true
		go c.ping()
	case evPong:
		err := w.pongErr
		w.pinging, w.pongErr = false, nil
		if err != nil && c.ctx.Err() == nil {
			c.log.Info("agent did not answer a ping", "err", err)
			return false, &closeErr{connproto.CloseHeartbeat, "no answer to a ping"}
		}
	}
	return false, nil
}

// reread rereads the agent, its session and the token (refresh), and
// notes when.
func (c *conn) reread() error {
	if err := c.refresh(); err != nil {
		return err
	}
	c.w.lastRefresh = time.Now()
	return nil
}

// write writes one frame within the write timeout. Corked, the socket's
// deadline bounds it (corkConn.cork): the library's context then needs
// none, which spares a timer and a wake-up registered per frame.
func (c *conn) write(b []byte) error {
	if c.cork == nil {
		ctx, cancel := context.WithTimeout(c.ctx, c.hub.cfg.WriteTimeout)
		defer cancel()
		return c.ws.Write(ctx, websocket.MessageText, b)
	}
	c.cork.cork(time.Now().Add(c.hub.cfg.WriteTimeout))
	err := c.ws.Write(context.Background(), websocket.MessageText, b)
	if uerr := c.cork.uncork(); err == nil {
		err = uerr
	}
	return err
}

// flush writes every answer already queued, the session notes queued in a
// row as one batch (frameQueue.popBatch).
func (c *conn) flush() error {
	bb := batchBufs.Get().(*batchBuf)
	defer batchBufs.Put(bb)
	for {
		bb.notes = c.out.popBatch(bb.notes[:0])
		var b []byte
		switch len(bb.notes) {
		case 0:
			return nil
		case 1:
			b = bb.notes[0]
		default:
			bb.b = connproto.AppendSessionBatch(bb.b[:0], bb.notes)
			b = bb.b
		}
		clear(bb.notes) // the writer keeps no frame
		if err := c.write(b); err != nil {
			return err
		}
	}
}

// batchBuf is what flush needs to join session notes into a batch; the
// writers share them, so that an idle connection holds none.
type batchBuf struct {
	notes [][]byte
	b     []byte
}

var batchBufs = sync.Pool{New: func() any { return new(batchBuf) }}

// ping sends a ping and tells the writer whether the pong came within one
// heartbeat interval.
func (c *conn) ping() {
	ctx, cancel := context.WithTimeout(c.ctx, c.hub.cfg.HeartbeatInterval)
	c.w.pongErr = c.ws.Ping(ctx)
	cancel()
	c.wakeHere(evPong)
}

// refresh rereads the agent and the token the connection holds, and closes
// the connection if either is no longer good.
func (c *conn) refresh() error {
	agent, err := c.hub.Agents.FindAgentByID(c.ctx, c.agentID)
	switch {
	case switchboard.ErrorCode(err) == switchboard.ENOTFOUND:
		return &closeErr{connproto.CloseGone, "the agent was deleted"}
	case err != nil:
		return nil
	case agent.AccountDisabled:
		return &closeErr{connproto.CloseGone, "the agent's account is disabled"}
	case agent.Mode != switchboard.ModeConnector:
		return &closeErr{connproto.CloseGone, "the agent is no longer in connector mode"}
	}
	if c.helloDone() {
		sess, err := c.hub.Service.AgentSession(c.ctx, c.agentID)
		if switchboard.ErrorCode(err) == switchboard.ENOTFOUND || (err == nil && sess.Holder != c.holder) {
			return &closeErr{connproto.CloseReplaced, "replaced by a newer connection of this agent"}
		}
	}
	// Fresh: the hint that led here may be of another instance's change.
	tok, err := c.hub.Tokens.FindTokenByHash(switchboard.FreshRead(c.ctx), c.tokenHash)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND || (err == nil && (tok.Kind != switchboard.TokenAgent || tok.AgentID != c.agentID)) {
		return &closeErr{connproto.CloseUnauthorized, "the agent token was revoked or rotated"}
	} else if err != nil {
		return nil // the store will answer next time
	}
	c.agent.Store(agent)
	return nil
}

// helloDone reports whether the connection's hello was answered.
func (c *conn) helloDone() bool {
	select {
	case <-c.ready:
		return true
	default:
		return false
	}
}

// lateAnswerGrace is how long past its lease an offer is remembered, so
// that a late answer is still recorded.
const lateAnswerGrace = 10 * time.Minute

// pendingOffers counts the offers that hold the agent's window: sent, not
// answered, and within their lease. An offer whose lease ended no longer
// counts (the store gave it back to the queue), so an agent that never
// answers cannot keep its window closed; it is remembered a while longer
// for a late answer. c.mu is held.
func (c *conn) pendingOffers(now time.Time) int {
	n := 0
	for id, d := range c.inflight {
		switch {
		case now.Before(d.NextAttemptAt):
			n++
		case now.After(d.NextAttemptAt.Add(lateAnswerGrace)):
			delete(c.inflight, id)
		}
	}
	return n
}

// countPending counts the offers that wait for an acknowledgement within
// their lease, as pendingOffers does, without forgetting any.
func (c *conn) countPending(now time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, d := range c.inflight {
		if now.Before(d.NextAttemptAt) {
			n++
		}
	}
	return n
}

// dropTaskOffers forgets the offers of a task that has finished: the store
// closed their deliveries. Not a cancel's: it stays open until the agent
// answers it (a cancel and the agent's last update may cross), and an
// answer to an offer forgotten would be lost, and the cancel offered again.
func (c *conn) dropTaskOffers(task string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, d := range c.inflight {
		if string(d.TaskID) == task && d.Kind != switchboard.DeliverCancel {
			delete(c.inflight, id)
		}
	}
}

// offer claims queued work for the agent, as much as the in-flight limit
// allows, and sends each offer as a request whose id is the delivery id.
// It leaves c.claimOnAnswer saying whether an answer to an offer should
// make the writer claim again: when the window held work back, when a claim
// failed, or when it offered a task, whose follow-ups and cancels wait in
// the queue until the task has been offered.
func (c *conn) offer() error {
	for {
		// The claim holds its room while it runs, so that a direct offer
		// made meanwhile cannot take the same room (such a task waits in
		// the queue, and its hint makes the writer claim it next).
		c.mu.Lock()
		room := c.hub.cfg.MaxInflight - c.pendingOffers(time.Now()) - c.reserved
		if room > 0 {
			c.reserved += room
		}
		c.mu.Unlock()
		if room <= 0 {
			c.claimOnAnswer.Store(true)
			return nil
		}
		offers, err := c.hub.Service.ClaimOffers(c.ctx, c.agent.Load(), c.holder, room)
		var spans []trace.Span // with tracing on: each offer's span, until it is written
		if c.hub.Tracer.On() {
			spans = make([]trace.Span, len(offers))
			for i, o := range offers {
				spans[i] = c.startOffer(o.Delivery, true) // before a reader can see the delivery
			}
		}
		c.mu.Lock()
		c.reserved -= room
		for _, o := range offers {
			c.inflight[o.Delivery.ID] = o.Delivery // before the write, so a fast answer finds it
		}
		c.mu.Unlock()
		if err != nil {
			c.claimOnAnswer.Store(true)
			if c.ctx.Err() != nil || errors.Is(err, switchboard.ErrStoreClosed) {
				return nil
			}
			c.log.Error("claim offers", "err", err)
			return nil // the next hint or poll tries again
		}
		// Direct offers wait in c.out; a follow-up or cancel claimed now
		// must not overtake the task it follows.
		if err := c.flush(); err != nil {
			return err
		}
		offeredTask := false
		for i, o := range offers {
			b, err := offerFrame(o)
			if err != nil {
				return err
			}
			err = c.write(b)
			if spans != nil {
				endSpan(spans[i])
			}
			if err != nil {
				return err
			}
			c.hub.met.offers.Inc()
			offeredTask = offeredTask || o.Delivery.Kind == switchboard.DeliverTask
		}
		if len(offers) < room {
			c.claimOnAnswer.Store(offeredTask)
			return nil
		}
	}
}
