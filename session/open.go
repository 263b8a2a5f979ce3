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

// Opening a session, in four messages. The agent asking (A) sends
// SessionOpen; its instance checks the other agent (B) and the policy,
// finds B's connection in the store (AgentSession), creates A's end
// (subscribed to its subject before anything is published, so that the
// answer finds it) and publishes an open envelope on the subject of B's
// instance. That instance creates B's end and asks B with a SessionOpen
// request of its own. B's answer goes back as an accept or refuse
// envelope to A's end, which answers A. A that hears nothing within the
// open timeout gets CodeSessionTimeout, and B's end is told to drop the
// offer.

// open handles an agent's SessionOpen.
func (s *Service) open(ctx context.Context, ep Endpoint, id, params json.RawMessage) {
	if len(id) == 0 {
		return // a SessionOpen must be a request: nothing to answer
	}
	var p connproto.SessionOpenParams
	if err := json.Unmarshal(params, &p); err != nil || strings.TrimSpace(p.To) == "" {
		replyError(ep, id, connproto.CodeInvalidParams, `SessionOpen params must be {"to": "<handle or address>", "metadata"?: {…}}`)
		return
	}
	if len(p.Metadata) > MaxMetadataBytes || (len(p.Metadata) > 0 && !isObject(p.Metadata)) {
		replyError(ep, id, connproto.CodeInvalidParams, fmt.Sprintf("SessionOpen metadata must be a JSON object of at most %d bytes", MaxMetadataBytes))
		return
	}
	self := ep.SessionAgent()
	target, conn, code, msg := s.reachable(ctx, self, p.To)
	if code != 0 {
		replyError(ep, id, code, msg)
		return
	}
	e := newEnd(s, switchboard.NewID(), target.ID, ep, stateOpening, 0, 0)
	e.reqID = id
	e.peer = connproto.SessionPeer{ID: target.ID, Handle: target.Handle, Name: target.Name}
	if _, ok := s.register(e, e.holder); !ok {
		replyError(ep, id, connproto.CodeSessionLimit, fmt.Sprintf("this connection holds %d sessions, as many as it may", s.cfg.MaxSessions))
		return
	}
	if !e.subscribe() {
		s.forget(e)
		replyError(ep, id, connproto.CodeInternal, "internal error")
		return
	}
	body, err := json.Marshal(connproto.SessionOffer{
		SessionID: e.key.session, From: connproto.SessionPeer{ID: self.ID, Handle: self.Handle, Name: self.Name},
		Metadata: p.Metadata, Window: s.cfg.Window, MaxFrameBytes: connproto.MaxSessionFrameBytes, GraceMillis: s.cfg.Grace.Milliseconds(),
	})
	if err != nil {
		e.finish()
		replyError(ep, id, connproto.CodeInternal, "internal error")
		return
	}
	e.mu.Lock()
	if e.state == stateOpening {
		e.timer = time.AfterFunc(s.cfg.OpenTimeout, e.openTimedOut)
	}
	e.mu.Unlock()
	open := &envelope{kind: kindOpen, from: self.ID, conn: e.holder, s1: target.ID, s2: conn.Holder, body: body}
	s.publish(switchboard.LiveSessionInstanceSubject(conn.InstanceID), open.encode())
}

// reachable finds the agent of the handle to that self asks for a
// session, checks that the policy allows it, and finds its connection. On
// failure it returns the JSON-RPC error to answer with. to is a handle: the
// endpoint's hub reads an address URL into its handle before it hands the
// SessionOpen on (hub/session.go), and a URL that reaches here names
// nobody.
func (s *Service) reachable(ctx context.Context, self *switchboard.Agent, to string) (*switchboard.Agent, *switchboard.AgentSession, int, string) {
	handle := strings.ToLower(strings.TrimSpace(to))
	target, err := s.Agents.FindAgentByHandle(ctx, handle)
	switch {
	case handle == "" || switchboard.ErrorCode(err) == switchboard.ENOTFOUND || (err == nil && target.AccountDisabled):
		return nil, nil, connproto.CodeSessionPeerNotFound, "no agent at " + switchboard.Truncate(to, 200) + " on this deployment"
	case err != nil:
		s.Logger.Error("session: find the agent asked", "err", err)
		return nil, nil, connproto.CodeInternal, "internal error"
	case target.ID == self.ID:
		return nil, nil, connproto.CodeSessionNotAllowed, "an agent cannot open a session with itself"
	}
	ok, err := s.maySession(ctx, self, target)
	if err != nil {
		s.Logger.Error("session: ask the policy", "err", err)
		return nil, nil, connproto.CodeInternal, "internal error"
	}
	if !ok {
		return nil, nil, connproto.CodeSessionNotAllowed, self.Handle + " and " + target.Handle + " share no community"
	}
	if target.Mode != switchboard.ModeConnector {
		return nil, nil, connproto.CodeSessionPeerOffline, target.Handle + " is not a connector agent: it holds no connection to hold a session on"
	}
	conn, err := s.Agents.FindSession(ctx, target.ID)
	switch {
	case switchboard.ErrorCode(err) == switchboard.ENOTFOUND || (err == nil && !conn.Live(time.Now())):
		return nil, nil, connproto.CodeSessionPeerOffline, target.Handle + " is not connected"
	case err != nil:
		s.Logger.Error("session: find the connection of the agent asked", "err", err)
		return nil, nil, connproto.CodeInternal, "internal error"
	}
	return target, conn, 0, ""
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

// onInstanceMessage handles an open envelope on this instance's subject:
// it asks the agent, if it is connected here.
func (s *Service) onInstanceMessage(data []byte) {
	env, err := decodeEnvelope(data)
	if err != nil || env.kind != kindOpen {
		return
	}
	var offer connproto.SessionOffer
	if json.Unmarshal(env.body, &offer) != nil || offer.SessionID == "" {
		return
	}
	refuse := func(code int, msg string) {
		r := &envelope{kind: kindRefuse, n1: uint64(-code), from: env.s1, s1: msg}
		s.publish(switchboard.LiveSessionSubject(offer.SessionID, env.from), r.encode())
	}
	ep := s.connOf(env.s1)
	if ep == nil {
		refuse(connproto.CodeSessionPeerOffline, "the agent is not connected")
		return
	}
	e := newEnd(s, offer.SessionID, env.from, ep, stateOffered, 0, 0)
	e.peerConn = env.conn
	e.peer = offer.From
	if old, ok := s.register(e, e.holder); !ok {
		refuse(connproto.CodeSessionLimit, "the agent holds as many sessions as it may")
		return
	} else if old != nil {
		old.finish() // an offer of the same id again: the newer one stands
	}
	if !e.subscribe() {
		s.forget(e)
		refuse(connproto.CodeSessionPeerOffline, "the agent could not be asked")
		return
	}
	e.mu.Lock()
	if !request(ep, connproto.SessionRequestPrefix+offer.SessionID, connproto.MethodSessionOpen, env.body) {
		e.finishLocked()
		e.mu.Unlock()
		s.forget(e)
		refuse(connproto.CodeSessionPeerOffline, "the agent's connection is closing")
		return
	}
	// The asking end times out first and says so; this one forgets the
	// offer a little later in case that word is lost.
	e.timer = time.AfterFunc(s.cfg.OpenTimeout+s.cfg.Keepalive, e.offerTimedOut)
	e.mu.Unlock()
}

// Answer takes an agent's answer to a session request the server sent it
// (a SessionOpen), and reports whether the id was one of those.
func (s *Service) Answer(ep Endpoint, id string, result json.RawMessage, rpcErr *connproto.Error) bool {
	sid, ok := strings.CutPrefix(id, connproto.SessionRequestPrefix)
	if !ok {
		return false
	}
	e := s.end(sid, ep.SessionAgent().ID)
	if e == nil || e.holder != ep.SessionHolder() {
		return true // an answer too late, or from an older connection
	}
	var a connproto.SessionAnswer
	accepted := rpcErr == nil && json.Unmarshal(result, &a) == nil && a.Accepted
	reason := a.Reason
	if rpcErr != nil {
		reason = rpcErr.Message
	}
	e.mu.Lock()
	if e.state != stateOffered {
		e.mu.Unlock()
		return true
	}
	if !accepted {
		e.finishLocked()
		e.mu.Unlock()
		s.forget(e)
		if reason == "" {
			reason = "the agent refused the session"
		}
		s.publish(e.subject, e.env(kindRefuse, uint64(-connproto.CodeSessionRefused), 0, switchboard.Truncate(reason, 500), ""))
		return true
	}
	e.state = stateOpen
	e.stopTimerLocked()
	e.lastHeard, e.lastSent = time.Now(), time.Now()
	out := e.env(kindAccept, 0, 0, "", "")
	e.mu.Unlock()
	s.publish(e.subject, out)
	return true
}

// acceptedLocked: the agent asked accepted; the asking agent is answered.
func (e *end) acceptedLocked(env *envelope) {
	if e.state != stateOpening {
		return
	}
	e.state = stateOpen
	e.stopTimerLocked()
	e.peerConn = env.conn
	e.lastSent = time.Now()
	e.svc.stats.opened.Add(1)
	cfg := e.svc.cfg
	e.answerLocked(connproto.SessionOpenResult{SessionID: e.key.session, Peer: e.peer, Window: cfg.Window,
		MaxFrameBytes: connproto.MaxSessionFrameBytes, GraceMillis: cfg.Grace.Milliseconds()})
}

// refusedLocked: the agent asked refused, or could not be asked.
func (e *end) refusedLocked(env *envelope) {
	if e.state != stateOpening {
		return
	}
	code := -int(env.n1)
	if code > -32000 || code < -32099 {
		code = connproto.CodeSessionRefused
	}
	msg := env.s1
	if code == connproto.CodeSessionRefused {
		msg = e.peer.Handle + " refused the session: " + env.s1
	}
	e.failLocked(code, msg)
	e.finishLocked()
}

// openTimedOut: the agent asked did not answer in time.
func (e *end) openTimedOut() {
	e.mu.Lock()
	if e.state != stateOpening {
		e.mu.Unlock()
		return
	}
	e.failLocked(connproto.CodeSessionTimeout, fmt.Sprintf("%s did not answer within %s", e.peer.Handle, e.svc.cfg.OpenTimeout))
	e.finishLocked()
	out := e.closeEnv(connproto.SessionReasonTimeout, "the agent that asked stopped waiting for the answer")
	e.mu.Unlock()
	e.svc.forget(e)
	e.svc.publish(e.subject, out)
}

// offerTimedOut forgets an offer the agent did not answer.
func (e *end) offerTimedOut() {
	e.mu.Lock()
	if e.state != stateOffered {
		e.mu.Unlock()
		return
	}
	e.notifyClosedLocked(connproto.SessionReasonTimeout, "the session was not answered in time")
	e.finishLocked()
	e.mu.Unlock()
	e.svc.forget(e)
}
