package session

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connproto"
)

// Connections drop and come back; sessions outlive that within the grace.
// When an agent's connection ends, each of its ends tells the peer's end
// (kindAway, naming the connection) and is forgotten: the instance keeps
// nothing for a connection that is gone. The peer's end starts the grace.
// The agent reconnects (to any instance) and sends SessionResume with the
// last frame it received and acknowledged; the new end subscribes to the
// agent's subject and tells the peer's end (kindAttach), which stops the
// grace, asks its own agent to send again what the returning agent did not
// receive, and answers with where it stands (kindAttached); from that, the
// new end answers the SessionResume: the returning agent sends again from
// there. A peer's end that hears nothing for three keepalives (its
// instance stopped, and no kindAway came) starts the grace as well. When
// the grace ends, the end's agent is told peer_disconnected.

// resume handles an agent's SessionResume.
func (s *Service) resume(ctx context.Context, ep Endpoint, id, params json.RawMessage) {
	if len(id) == 0 {
		return
	}
	var p connproto.SessionResumeParams
	if err := json.Unmarshal(params, &p); err != nil || p.SessionID == "" || p.Peer == "" || p.Acked > p.Received {
		replyError(ep, id, connproto.CodeInvalidParams, `SessionResume params must be {"sessionId", "peer", "received", "acked"} with acked <= received`)
		return
	}
	if !validSessionID(p.SessionID) {
		// It names a subject of the Carrier: no separators or wildcards
		// of the bus's in it.
		replyError(ep, id, connproto.CodeSessionUnknown, "no such session: a session id is 1-128 characters of A-Z a-z 0-9 _ : -")
		return
	}
	self := ep.SessionAgent()
	peer, err := s.Agents.FindAgentByID(ctx, p.Peer)
	switch {
	case switchboard.ErrorCode(err) == switchboard.ENOTFOUND || (err == nil && (peer.AccountDisabled || peer.ID == self.ID)):
		replyError(ep, id, connproto.CodeSessionUnknown, "the session ended: its other agent no longer exists")
		return
	case err != nil:
		s.Logger.Error("session: find the other agent of a resumed session", "err", err)
		replyError(ep, id, connproto.CodeInternal, "internal error")
		return
	}
	if ok, err := s.maySession(ctx, self, peer); err != nil || !ok {
		if err != nil {
			s.Logger.Error("session: ask the policy", "err", err)
			replyError(ep, id, connproto.CodeInternal, "internal error")
			return
		}
		replyError(ep, id, connproto.CodeSessionNotAllowed, self.Handle+" and "+peer.Handle+" no longer share a community")
		// The peer's end checks that this comes from its agent.
		closing := &envelope{kind: kindClose, from: self.ID, s1: connproto.SessionReasonNotAllowed, s2: "the agents no longer share a community"}
		s.publish(switchboard.LiveSessionSubject(p.SessionID, peer.ID), closing.encode())
		return
	}
	e := newEnd(s, p.SessionID, peer.ID, ep, stateResuming, p.Received, p.Acked)
	e.reqID = id
	e.peer = connproto.SessionPeer{ID: peer.ID, Handle: peer.Handle, Name: peer.Name}
	old, ok := s.register(e, e.holder)
	if !ok {
		replyError(ep, id, connproto.CodeSessionLimit, fmt.Sprintf("this connection holds %d sessions, as many as it may", s.cfg.MaxSessions))
		return
	}
	// The new end subscribes before the end it replaces lets go of the
	// same subject: across instances, a subject nobody holds for a moment
	// can be forgotten by the peer's instance, and the peer's answer lost.
	subscribed := e.subscribe()
	if old != nil {
		old.finish() // the end of an older connection of the agent, here: this one takes over
	}
	if !subscribed {
		s.forget(e)
		replyError(ep, id, connproto.CodeInternal, "internal error")
		return
	}
	e.mu.Lock()
	if e.state == stateResuming {
		e.timer = time.AfterFunc(s.cfg.ResumeTimeout, e.resumeTimedOut)
	}
	out := e.env(kindAttach, p.Received, p.Acked, "", "")
	e.mu.Unlock()
	s.publish(e.subject, out)
}

// attachLocked: the peer's agent resumed the session on a new connection.
// The end stops the grace, has its own agent send again what the peer did
// not receive, and answers with where it stands.
func (e *end) attachLocked(env *envelope) []byte {
	switch e.state {
	case stateOpen:
	case stateResuming:
		// Both connections dropped and came back: the peer's word is as
		// good as an answer.
		e.resumedLocked(env.n1, env.n2)
	default:
		return nil
	}
	e.peerConn = env.conn
	if e.peerAway {
		e.peerAway = false
		e.stopTimerLocked()
	}
	e.ackFromPeerLocked(env.n2)
	if from := env.n1 + 1; from <= e.sent {
		notify(e.ep, connproto.MethodSessionResend, connproto.SessionResendParams{SessionID: e.key.session, From: from})
	}
	e.lastSent = time.Now()
	return e.env(kindAttached, e.next-1, e.acked, "", "")
}

// resumedLocked completes the agent's SessionResume: the peer received
// this end's frames up to received and took in those up to acked.
func (e *end) resumedLocked(received, acked uint64) {
	e.state = stateOpen
	e.stopTimerLocked()
	e.sent = received // the agent sends again from received+1, in order
	e.ackFromPeerLocked(acked)
	e.lastHeard, e.lastSent = time.Now(), time.Now()
	e.answerLocked(connproto.SessionResumeResult{From: received + 1, Acked: e.peerAcked})
}

// resumeTimedOut: the peer's end did not answer the SessionResume.
func (e *end) resumeTimedOut() {
	e.mu.Lock()
	if e.state != stateResuming {
		e.mu.Unlock()
		return
	}
	e.failLocked(connproto.CodeSessionUnknown, "the session ended: its other end did not answer")
	e.finishLocked()
	e.mu.Unlock()
	e.svc.forget(e)
}

// awayLocked: the peer's connection dropped. Word of a connection that
// is no longer the peer's (an older one that ended after the agent came
// back) is ignored.
func (e *end) awayLocked(env *envelope) {
	if e.state != stateOpen || (e.peerConn != "" && env.conn != e.peerConn) {
		return
	}
	e.startGraceLocked()
}

// startGraceLocked starts the grace the peer has to come back.
func (e *end) startGraceLocked() {
	if e.peerAway {
		return
	}
	e.peerAway = true
	e.timer = time.AfterFunc(e.svc.cfg.Grace, e.graceEnded)
}

// graceEnded: the peer did not come back in time.
func (e *end) graceEnded() {
	e.mu.Lock()
	if e.state != stateOpen || !e.peerAway {
		e.mu.Unlock()
		return
	}
	msg := fmt.Sprintf("%s's connection dropped and it did not come back within %s", e.peerName(), e.svc.cfg.Grace)
	e.notifyClosedLocked(connproto.SessionReasonPeerDisconnected, msg)
	e.finishLocked()
	out := e.closeEnv(connproto.SessionReasonPeerDisconnected, msg)
	e.mu.Unlock()
	e.svc.forget(e)
	e.svc.publish(e.subject, out) // in case it comes back after all
}

// peerName names the peer for a message.
func (e *end) peerName() string {
	if e.peer.Handle != "" {
		return e.peer.Handle
	}
	return "the other agent"
}

// detach ends the end of a connection that ended, and tells the peer's
// end: the session waits for the agent to come back, an open one fails.
func (e *end) detach(holder string) {
	e.mu.Lock()
	if e.holder != holder || e.state == stateDone {
		e.mu.Unlock()
		return
	}
	var out []byte
	switch e.state {
	case stateOpening:
		out = e.closeEnv(connproto.SessionReasonPeerDisconnected, "the agent that asked disconnected")
	case stateOffered:
		out = e.env(kindRefuse, uint64(-connproto.CodeSessionPeerOffline), 0, "the agent disconnected before it answered", "")
	default:
		out = e.env(kindAway, 0, 0, "", "")
	}
	e.finishLocked()
	e.mu.Unlock()
	e.svc.forget(e)
	e.svc.publish(e.subject, out)
}

// closeFromAgent handles an agent's SessionClose.
func (s *Service) closeFromAgent(ep Endpoint, id, params json.RawMessage) {
	var p connproto.SessionCloseParams
	if err := json.Unmarshal(params, &p); err != nil || p.SessionID == "" {
		replyError(ep, id, connproto.CodeInvalidParams, `SessionClose params must be {"sessionId", "message"?}`)
		return
	}
	e := s.end(p.SessionID, ep.SessionAgent().ID)
	if e == nil || e.holder != ep.SessionHolder() {
		if len(id) > 0 {
			replyError(ep, id, connproto.CodeSessionUnknown, "no session "+switchboard.Truncate(p.SessionID, 64)+" on this connection")
		}
		return
	}
	msg := switchboard.Truncate(p.Message, 500)
	e.mu.Lock()
	var out []byte
	switch e.state {
	case stateOffered: // closing instead of answering refuses
		out = e.env(kindRefuse, uint64(-connproto.CodeSessionRefused), 0, firstNonEmpty(msg, "the agent closed the session"), "")
	case stateOpening:
		e.failLocked(connproto.CodeSessionRefused, "closed before "+e.peerName()+" answered")
		out = e.closeEnv(connproto.SessionReasonClosed, msg)
	default:
		e.failLocked(connproto.CodeSessionUnknown, "the session was closed")
		out = e.closeEnv(connproto.SessionReasonClosed, msg)
	}
	e.finishLocked()
	e.mu.Unlock()
	s.forget(e)
	s.publish(e.subject, out)
	reply(ep, id, struct{}{})
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// keepalive runs until stop closes: every half keepalive, each open end
// that published nothing for a keepalive pings the peer's end, and one
// that heard nothing from the peer's end for three starts its grace.
func (s *Service) keepalive(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(s.cfg.Keepalive / 2)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			s.mu.Lock()
			ends := make([]*end, 0, len(s.ends))
			for _, e := range s.ends {
				ends = append(ends, e)
			}
			s.mu.Unlock()
			for _, e := range ends {
				e.tick(now)
			}
		}
	}
}

// tick is one keepalive round of an end.
func (e *end) tick(now time.Time) {
	k := e.svc.cfg.Keepalive
	e.mu.Lock()
	if e.state != stateOpen {
		e.mu.Unlock()
		return
	}
	if !e.peerAway && now.Sub(e.lastHeard) >= 3*k {
		e.svc.Logger.Info("session: the other end went silent; waiting for it", "session_id", e.key.session, "grace", e.svc.cfg.Grace)
		e.startGraceLocked()
	}
	var out []byte
	if now.Sub(e.lastSent) >= k {
		e.lastSent = now
		out = e.env(kindPing, e.acked, e.sent, "", "")
	}
	e.mu.Unlock()
	if out != nil {
		e.svc.publish(e.subject, out)
	}
}

// validSessionID reports whether s may be a session's id: the ids the
// server makes (switchboard.NewID) are, and one that could change the
// Carrier's subjects (a "." or a NATS wildcard) is not.
func validSessionID(s string) bool {
	return switchboard.ValidRef(s) && !strings.Contains(s, ".")
}
