package hub

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/coder/websocket"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connproto"
)

// refreshEvery is how often a connection rereads its agent, session and
// token without a hint, in case a hint was lost (each connection at its own
// moment within it, so that the rereads of many spread out).
const refreshEvery = 5 * time.Minute

// refreshGap is the least time between two rereads on hints. The hint that
// says "work queued" is the one that says "settings or token changed", so
// an agent receiving many tasks would otherwise reread three rows per task;
// a hint within the gap rereads when it ends. Changes still take effect
// within this gap (plus the bus's delay).
const refreshGap = 250 * time.Millisecond

// writeLoop owns every write to the socket: it sends the reader's answers,
// offers the agent's queued work (once the agent has said hello, and again
// on every hint, acknowledgement and poll), and pings. It returns when the
// connection ends; its error closes the connection.
//
// A ping waits for its pong in a short-lived goroutine of its own, so that
// waiting does not hold up writes; a ping still unanswered when the next
// one is due means the agent is gone.
//
// The goroutine spends days waiting in wait; its state lives in a writer
// and the work of each wake-up runs in handle, so that the frames on its
// stack while it waits stay under the quarter of 4 KiB below which the
// garbage collector shrinks the stack to the runtime's 2 KiB minimum.
func (c *conn) writeLoop(watch switchboard.Watch) error {
	w := c.newWriter()
	for {
		if err := c.handle(w, c.wait(w, watch)); err != nil {
			w.stop()
			if err == errWriterDone {
				return nil
			}
			return err
		}
	}
}

// newWriter starts the writer's tickers.
func (c *conn) newWriter() *writer {
	return &writer{
		ping:        time.NewTicker(c.hub.cfg.HeartbeatInterval),
		slow:        time.NewTicker(refreshEvery - rand.N(refreshEvery/2)), // at most refreshEvery apart
		ready:       c.ready,
		lastRefresh: time.Now(),
	}
}

// stop stops the writer's tickers.
func (w *writer) stop() {
	w.ping.Stop()
	w.slow.Stop()
}

// writer is the writer goroutine's state between wake-ups.
type writer struct {
	ping, slow  *time.Ticker
	ready       chan struct{} // c.ready until hello was answered, then nil
	helloDone   bool
	lastRefresh time.Time
	// pong carries the pending ping's outcome; nil when none is pending. A
	// ping still waiting when the loop ends returns as soon as the
	// connection closes (or its interval passes).
	pong    chan error
	pongErr error // the outcome received, for handle
	// refreshLater fires when a reread put off by refreshGap is due; nil
	// while none is.
	refreshLater <-chan time.Time
}

// writerEvent names what woke the writer.
type writerEvent uint8

const (
	evDone         writerEvent = iota // the connection ended
	evAnswers                         // answers are queued
	evHello                           // hello was answered
	evHint                            // the agent's subject was notified
	evHintsEnded                      // the bus closed the watch
	evRefreshLater                    // a reread put off is due
	evMore                            // there may be more work to claim
	evSlow                            // the slow reread is due
	evLost                            // the session could not be renewed
	evPing                            // a ping is due
	evPong                            // the pending ping has its outcome
)

// errWriterDone ends the write loop without an error.
var errWriterDone = errors.New("writer done")

// wait blocks until something needs the writer.
func (c *conn) wait(w *writer, watch switchboard.Watch) writerEvent {
	select {
	case <-c.ctx.Done():
		return evDone
	case <-c.out.ready:
		return evAnswers
	case <-w.ready:
		return evHello
	case _, ok := <-watch.C():
		if !ok {
			return evHintsEnded
		}
		return evHint
	case <-w.refreshLater:
		return evRefreshLater
	case <-c.more:
		return evMore
	case <-w.slow.C:
		return evSlow
	case <-c.lost:
		return evLost
	case <-w.ping.C:
		return evPing
	case w.pongErr = <-w.pong:
		return evPong
	}
}

// handle does the work ev calls for. errWriterDone or another error ends
// the loop.
func (c *conn) handle(w *writer, ev writerEvent) error {
	claim := false
	switch ev {
	case evDone:
		return errWriterDone
	case evAnswers:
		if err := onFreshStackErr(c.flush); err != nil {
			return err
		}
	case evHello:
		// The answer to hello is queued before ready closes: send it
		// (and anything queued with it) before the first offer.
		if err := onFreshStackErr(c.flush); err != nil {
			return err
		}
		w.ready, w.helloDone, claim = nil, true, true
	case evHintsEnded:
		return &closeErr{connproto.CloseRestart, "server restarting"}
	case evHint:
		// Something changed for this agent: work, settings or its token.
		claim = w.helloDone
		if wait := refreshGap - time.Since(w.lastRefresh); wait > 0 {
			if w.refreshLater == nil {
				w.refreshLater = time.After(wait)
			}
			break
		}
		if err := onFreshStackErr(c.refresh); err != nil {
			return err
		}
		w.lastRefresh = time.Now()
	case evRefreshLater:
		w.refreshLater = nil
		if err := onFreshStackErr(c.refresh); err != nil {
			return err
		}
		w.lastRefresh = time.Now()
	case evMore:
		claim = w.helloDone
	case evSlow:
		if err := onFreshStackErr(c.refresh); err != nil {
			return err
		}
		w.lastRefresh, claim = time.Now(), w.helloDone
	case evLost:
		// The hub could not renew this connection's session: a newer
		// connection of the agent took it, or the agent is gone.
		if err := onFreshStackErr(c.refresh); err != nil {
			return err // deleted, disabled or revoked: say so
		}
		return &closeErr{connproto.CloseReplaced, "replaced by a newer connection of this agent"}
	case evPing:
		if w.pong != nil {
			c.log.Info("agent did not answer a ping")
			return &closeErr{connproto.CloseHeartbeat, "no answer to a ping"}
		}
		if c.heard.Within(c.hub.cfg.HeartbeatInterval) {
			break // the agent spoke (or pinged) within the interval: it is there
		}
		w.pong = make(chan error, 1)
		go c.ping(w.pong)
	case evPong:
		err := w.pongErr
		w.pong, w.pongErr = nil, nil
		if err != nil && c.ctx.Err() == nil {
			c.log.Info("agent did not answer a ping", "err", err)
			return &closeErr{connproto.CloseHeartbeat, "no answer to a ping"}
		}
	}
	if claim && !c.closing.Load() {
		return onFreshStackErr(c.offer)
	}
	return nil
}

// write writes one frame within the write timeout.
func (c *conn) write(b []byte) error {
	ctx, cancel := context.WithTimeout(c.ctx, c.hub.cfg.WriteTimeout)
	defer cancel()
	return c.ws.Write(ctx, websocket.MessageText, b)
}

// flush writes every answer already queued.
func (c *conn) flush() error {
	for {
		b, ok := c.out.pop()
		if !ok {
			return nil
		}
		if err := c.write(b); err != nil {
			return err
		}
	}
}

// ping sends a ping and reports on done whether the pong came within one
// heartbeat interval.
func (c *conn) ping(done chan<- error) {
	ctx, cancel := context.WithTimeout(c.ctx, c.hub.cfg.HeartbeatInterval)
	defer cancel()
	done <- c.ws.Ping(ctx)
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
	tok, err := c.hub.Tokens.FindTokenByHash(c.ctx, c.tokenHash)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND || (err == nil && (tok.Kind != switchboard.TokenAgent || tok.AgentID != c.agentID)) {
		return &closeErr{connproto.CloseUnauthorized, "the agent token was revoked or rotated"}
	} else if err != nil {
		return nil // the store will answer next time
	}
	c.agent.Store(agent)
	return nil
}

// sessionLost tells the writer that the hub could not renew the
// connection's session.
func (c *conn) sessionLost() {
	select {
	case c.lost <- struct{}{}:
	default:
	}
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
// closed their deliveries.
func (c *conn) dropTaskOffers(task string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, d := range c.inflight {
		if string(d.TaskID) == task {
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
		c.mu.Lock()
		room := c.hub.cfg.MaxInflight - c.pendingOffers(time.Now()) - c.reserved
		c.mu.Unlock()
		if room <= 0 {
			c.claimOnAnswer.Store(true)
			return nil
		}
		offers, err := c.hub.Service.ClaimOffers(c.ctx, c.agent.Load(), c.holder, room)
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
		for _, o := range offers {
			b, err := offerFrame(o)
			if err != nil {
				return err
			}
			c.mu.Lock()
			c.inflight[o.Delivery.ID] = o.Delivery // before the write, so a fast answer finds it
			c.mu.Unlock()
			if err := c.write(b); err != nil {
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
