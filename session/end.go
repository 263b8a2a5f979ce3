package session

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connproto"
)

// endState is where an end stands.
type endState uint8

const (
	// stateOpening: the end's agent asked for the session; the peer's
	// answer is awaited (reqID is the agent's SessionOpen).
	stateOpening endState = iota
	// stateOffered: the end's agent was asked; its answer is awaited.
	stateOffered
	// stateResuming: the end's agent resumed the session on this
	// connection; the peer's end is asked where it stands (reqID is the
	// agent's SessionResume).
	stateResuming
	// stateOpen: frames flow.
	stateOpen
	// stateDone: the end is finished and forgotten.
	stateDone
)

// end is one agent's end of a session, held by the instance that holds
// the agent's connection. It writes to its agent through the connection,
// and publishes to the peer's end on the peer's subject; it receives the
// peer's messages on its own subject.
//
// Of the frames to its agent it keeps their order (it passes on frame
// seq == next only, asks the peer for what a gap lost, and drops what it
// already passed on) and the receiver's window (frames passed on and not
// yet acknowledged by the agent, and their bytes). Of the frames from its
// agent it checks their numbering and size, and passes them on.
type end struct {
	svc     *Service
	key     endKey   // immutable
	peerID  string   // immutable: the other agent
	holder  string   // immutable: the connection holding this end
	ep      Endpoint // immutable
	subject string   // immutable: the peer's end's subject, where this end publishes

	mu    sync.Mutex
	sub   switchboard.Subscription // guarded by mu: this end's subject
	state endState                 // guarded by mu
	reqID json.RawMessage          // guarded by mu: the agent's request that waits for the peer
	timer *time.Timer              // guarded by mu: the open, offer or resume timeout, or the peer's grace
	peer  connproto.SessionPeer    // guarded by mu: the other agent, as the agent is told

	peerConn  string    // guarded by mu: the connection of the peer's end, as last heard
	peerAway  bool      // guarded by mu: the peer's connection dropped; timer runs its grace
	lastHeard time.Time // guarded by mu: when the peer's end was last heard
	lastSent  time.Time // guarded by mu: when this end last published to the peer's end

	// Frames to the agent.
	next       uint64    // guarded by mu: the seq of the next frame to pass on
	acked      uint64    // guarded by mu: the agent took in the frames up to this seq
	base       uint64    // immutable: frames after it were passed on by this end
	sizes      []int32   // guarded by mu: the bytes of the frames in (acked, next), by seq modulo the window
	bytes      int       // guarded by mu: their sum
	wantedFrom uint64    // guarded by mu: the seq a resend was last asked from (0: none)
	wantedAt   time.Time // guarded by mu: when

	// Frames from the agent.
	sent      uint64 // guarded by mu: the last seq passed on
	peerAcked uint64 // guarded by mu: the peer's agent took in the frames up to this seq
}

// newEnd returns an end of session sid held by ep for its agent, with the
// agent peerID at the other end. Frames to the agent start after received.
func newEnd(s *Service, sid, peerID string, ep Endpoint, state endState, received, acked uint64) *end {
	agentID := ep.SessionAgent().ID
	now := time.Now()
	return &end{
		svc: s, key: endKey{sid, agentID}, peerID: peerID, holder: ep.SessionHolder(), ep: ep,
		subject: switchboard.LiveSessionSubject(sid, peerID), state: state,
		next: received + 1, acked: acked, base: received, sizes: make([]int32, s.cfg.Window.Frames),
		lastHeard: now, lastSent: now,
	}
}

// subscribe subscribes the end to its subject. It reports false when the
// carrier refused; an end that finished meanwhile drops the subscription.
func (e *end) subscribe() bool {
	sub, err := e.svc.Carrier.Subscribe(context.Background(), switchboard.LiveSessionSubject(e.key.session, e.key.agent), e.onMessage)
	if err != nil {
		e.svc.Logger.Warn("session: subscribe to an end's subject", "session_id", e.key.session, "err", err)
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.state == stateDone {
		sub.Close()
		return true
	}
	e.sub = sub
	return true
}

// finishLocked ends the end: no more messages reach it. The caller then
// calls forget, without e.mu.
func (e *end) finishLocked() {
	if e.state == stateDone {
		return
	}
	e.state = stateDone
	if e.timer != nil {
		e.timer.Stop()
	}
	if e.sub != nil {
		e.sub.Close()
	}
	if e.next-1 > max(e.acked, e.base) {
		e.svc.stats.buffered.Add(-int64(e.next - 1 - max(e.acked, e.base)))
	}
}

// finish ends the end and forgets it.
func (e *end) finish() {
	e.mu.Lock()
	e.finishLocked()
	e.mu.Unlock()
	e.svc.forget(e)
}

// env returns an envelope of kind from this end.
func (e *end) env(k kind, n1, n2 uint64, s1, s2 string) []byte {
	return (&envelope{kind: k, n1: n1, n2: n2, from: e.key.agent, conn: e.holder, s1: s1, s2: s2}).encode()
}

// closeEnv returns the envelope that tells the peer's end that the
// session ended.
func (e *end) closeEnv(reason, message string) []byte {
	return e.env(kindClose, 0, 0, reason, message)
}

// notifyClosedLocked tells the end's agent that the session ended.
func (e *end) notifyClosedLocked(reason, message string) {
	notify(e.ep, connproto.MethodSessionClose, connproto.SessionCloseParams{SessionID: e.key.session, Reason: reason, Message: message})
	if e.svc.OnClosed != nil {
		e.svc.OnClosed(reason)
	}
}

// answerLocked answers the agent's request that waits, if any.
func (e *end) answerLocked(result any) {
	if e.reqID != nil {
		reply(e.ep, e.reqID, result)
		e.reqID = nil
	}
}

// failLocked answers the agent's request that waits with an error, if any.
func (e *end) failLocked(code int, message string) {
	if e.reqID != nil {
		replyError(e.ep, e.reqID, code, message)
		e.reqID = nil
	}
}

// onMessage handles a message from the peer's end (or, for an end
// being opened, from the instance of the agent asked).
func (e *end) onMessage(data []byte) {
	env, err := decodeEnvelope(data)
	if err != nil {
		e.svc.Logger.Debug("session: unreadable message", "session_id", e.key.session, "err", err)
		return
	}
	if env.from != e.peerID {
		// Only the session's other agent speaks on this subject; another
		// agent that claimed the session (a resume naming it) is ignored.
		e.svc.Logger.Debug("session: a message from an agent not of the session", "session_id", e.key.session, "from", env.from)
		return
	}
	e.mu.Lock()
	if e.state == stateDone {
		e.mu.Unlock()
		return
	}
	e.lastHeard = time.Now()
	out := e.handleLocked(env)
	done := e.state == stateDone
	e.mu.Unlock()
	if done {
		e.svc.forget(e)
	}
	if out != nil {
		e.svc.publish(e.subject, out)
	}
}

// handleLocked handles one of the peer's messages and returns what to
// publish in answer, if anything.
func (e *end) handleLocked(env *envelope) []byte {
	switch env.kind {
	case kindAccept:
		e.acceptedLocked(env)
	case kindRefuse:
		e.refusedLocked(env)
	case kindFrame:
		return e.frameFromPeerLocked(env)
	case kindAck:
		e.ackFromPeerLocked(env.n1)
	case kindPing:
		e.ackFromPeerLocked(env.n1)
		if e.state == stateOpen && env.n2 >= e.next {
			return e.wantLocked() // a frame lost at the tail
		}
	case kindWant:
		if e.state == stateOpen && env.n1 > e.peerAcked && env.n1 <= e.sent {
			notify(e.ep, connproto.MethodSessionResend, connproto.SessionResendParams{SessionID: e.key.session, From: env.n1})
		}
	case kindAttach:
		return e.attachLocked(env)
	case kindAttached:
		if e.state == stateResuming {
			e.peerConn = env.conn
			e.resumedLocked(env.n1, env.n2)
		}
	case kindAway:
		e.awayLocked(env)
	case kindClose:
		e.closedByPeerLocked(env)
	}
	return nil
}

// closedByPeerLocked ends the end on the peer's word.
func (e *end) closedByPeerLocked(env *envelope) {
	reason, message := env.s1, env.s2
	if reason == connproto.SessionReasonPeerDisconnected {
		// The peer gave up waiting for this end's agent: for it, it was
		// its own connection that dropped.
		reason = connproto.SessionReasonDisconnected
	}
	switch e.state {
	case stateOpening:
		e.failLocked(connproto.CodeSessionRefused, "the session ended before it opened: "+reason)
	case stateResuming:
		e.failLocked(connproto.CodeSessionUnknown, "the session ended: "+reason)
		e.notifyClosedLocked(reason, message)
	default:
		e.notifyClosedLocked(reason, message)
	}
	e.finishLocked()
}

// closeBothLocked ends the session on this end's decision: its agent and
// the peer's end are told why. It returns the envelope for the peer.
func (e *end) closeBothLocked(reason, message string) []byte {
	e.notifyClosedLocked(reason, message)
	e.failLocked(connproto.CodeSessionUnknown, "the session ended: "+reason)
	e.finishLocked()
	return e.closeEnv(reason, message)
}

// stopTimerLocked stops the end's timer, if it has one.
func (e *end) stopTimerLocked() {
	if e.timer != nil {
		e.timer.Stop()
	}
}
