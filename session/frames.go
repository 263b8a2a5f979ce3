package session

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connproto"
)

// Frames and flow control. Each direction of a session numbers its frames
// from 1. The sending agent keeps every frame until the peer acknowledges
// it, and has at most the window in flight (frames and bytes): its sends
// wait for credit, which comes as SessionAck. The receiving agent
// acknowledges what it has taken in (its application read it), not what
// it received, so that a reader that stops reading stops its sender.
//
// The server passes frames on and holds none beyond the window: the end
// of the receiving agent checks, before it queues a frame for the agent,
// that the frames it queued and the agent did not acknowledge stay within
// the window, and ends the session (flow_control) for a sender that goes
// past it. It passes on frame seq == next only: a frame lost between
// instances (the carrier is at most once) shows as a gap, which it asks
// the sending end to fill (kindWant, which becomes a SessionResend for the
// sending agent), or at the tail as a ping whose last seq it has not seen.

// frameFromAgent handles a SessionFrame from the end's agent.
func (s *Service) frameFromAgent(ep Endpoint, id, params json.RawMessage) {
	var p connproto.SessionFrameParams
	if err := json.Unmarshal(params, &p); err != nil || p.SessionID == "" {
		replyError(ep, id, connproto.CodeInvalidParams, `SessionFrame params must be {"sessionId", "seq", "text" | "data"}`)
		return
	}
	s.frame(ep, id, &p)
}

// Frame handles a SessionFrame notification from an agent whose
// connection read it already (connproto.ParseSessionFrame): the same as
// Handle, without reading it again.
func (s *Service) Frame(ep Endpoint, p *connproto.SessionFrameParams) { s.frame(ep, nil, p) }

// frame handles a SessionFrame from the end's agent; id is the request's,
// empty for a notification.
func (s *Service) frame(ep Endpoint, id json.RawMessage, p *connproto.SessionFrameParams) {
	e := s.end(p.SessionID, ep.SessionAgent().ID)
	if e == nil || e.holder != ep.SessionHolder() {
		unknownSession(ep, id, p.SessionID)
		return
	}
	e.mu.Lock()
	out := e.frameFromAgentLocked(p)
	done := e.state == stateDone
	e.mu.Unlock()
	if done {
		s.forget(e)
	}
	if out != nil {
		s.publish(e.subject, out)
	}
	reply(ep, id, struct{}{})
}

// unknownSession tells an agent that a session it names is not one of
// its connection's.
func unknownSession(ep Endpoint, id json.RawMessage, sessionID string) {
	if len(id) > 0 {
		replyError(ep, id, connproto.CodeSessionUnknown, "no session "+switchboard.Truncate(sessionID, 64)+" on this connection")
		return
	}
	notify(ep, connproto.MethodSessionClose, connproto.SessionCloseParams{SessionID: switchboard.Truncate(sessionID, 64),
		Reason: connproto.SessionReasonUnknown, Message: "no such session on this connection"})
}

// frameFromAgentLocked checks a frame of the end's agent and returns the
// envelope that passes it on, or the one that ends the session.
func (e *end) frameFromAgentLocked(p *connproto.SessionFrameParams) []byte {
	switch e.state {
	case stateOpen:
	case stateResuming:
		return nil // sent before the answer to SessionResume: it is sent again after it
	default:
		return e.closeBothLocked(connproto.SessionReasonProtocol, "a frame before the session opened")
	}
	field, raw := "text", []byte(p.Text)
	switch {
	case p.Text != nil && p.Data != nil, p.Text == nil && p.Data == nil:
		return e.closeBothLocked(connproto.SessionReasonProtocol, fmt.Sprintf("frame %d: a frame holds exactly one of text and data", p.Seq))
	case p.Data != nil:
		field, raw = "data", p.Data
	case len(raw) == 0 || raw[0] != '"':
		return e.closeBothLocked(connproto.SessionReasonProtocol, fmt.Sprintf("frame %d: text must be a JSON string", p.Seq))
	}
	if len(raw) > connproto.MaxSessionFrameBytes {
		return e.closeBothLocked(connproto.SessionReasonFrameTooLarge,
			fmt.Sprintf("frame %d: its content is %d bytes of JSON, more than the %d allowed", p.Seq, len(raw), connproto.MaxSessionFrameBytes))
	}
	switch {
	case p.Seq == 0 || p.Seq > e.sent+1:
		return e.closeBothLocked(connproto.SessionReasonProtocol,
			fmt.Sprintf("frame %d after frame %d: frames are numbered 1, 2, 3 … without gaps", p.Seq, e.sent))
	case p.Seq <= e.peerAcked:
		return nil // a resend of what the peer already took in
	case p.Seq == e.sent+1:
		e.sent = p.Seq
	}
	e.lastSent = time.Now()
	env := envelope{kind: kindFrame, n1: p.Seq, n2: uint64(len(raw)), from: e.key.agent}
	b := appendEnvelope(make([]byte, 0, 64+frameBytes(e.key.session, field, raw)), &env)
	return appendFrame(b, e.key.session, p.Seq, field, raw)
}

// frameFromPeerLocked queues a frame of the peer for the end's agent, in
// order and within the window.
func (e *end) frameFromPeerLocked(env *envelope) []byte {
	if e.state != stateOpen && e.state != stateResuming {
		return nil
	}
	seq, size := env.n1, int(min(env.n2, 1<<31))
	switch {
	case seq < e.next:
		return nil // passed on already (a resend)
	case seq > e.next:
		return e.wantLocked() // frames were lost on the way
	}
	w := e.svc.cfg.Window
	if e.next-1-e.acked >= uint64(w.Frames) || (e.bytes > 0 && e.bytes+size > w.Bytes) {
		e.svc.Logger.Warn("session: an agent sent past its window; ending the session", "session_id", e.key.session, "sender", e.peerID)
		return e.closeBothLocked(connproto.SessionReasonFlowControl,
			fmt.Sprintf("frame %d went past the window of %d frames and %d bytes", seq, w.Frames, w.Bytes))
	}
	if !e.ep.SessionWrite(env.body) {
		return nil // the connection is closing: the agent resumes from what it received
	}
	e.sizes[seq%uint64(len(e.sizes))] = int32(size)
	e.bytes += size
	e.next++
	e.wantedFrom = 0
	e.svc.stats.frames.Add(1)
	e.svc.stats.buffered.Add(1)
	return nil
}

// wantLocked returns the envelope that asks the peer's end for the frames
// from next on again, at most twice a second for the same seq.
func (e *end) wantLocked() []byte {
	now := time.Now()
	if e.wantedFrom == e.next && now.Sub(e.wantedAt) < 500*time.Millisecond {
		return nil
	}
	e.wantedFrom, e.wantedAt = e.next, now
	e.lastSent = now
	return e.env(kindWant, e.next, 0, "", "")
}

// ackFromAgent handles a SessionAck from the end's agent: it took in the
// peer's frames up to seq, which frees their room in the window.
func (s *Service) ackFromAgent(ep Endpoint, params json.RawMessage) {
	var p connproto.SessionAckParams
	if json.Unmarshal(params, &p) != nil || p.SessionID == "" {
		return
	}
	s.Ack(ep, &p)
}

// Ack handles a SessionAck notification from an agent whose connection
// read it already (in a batch, connproto.ParseSessionBatch): the same as
// Handle, without reading it again.
func (s *Service) Ack(ep Endpoint, p *connproto.SessionAckParams) {
	e := s.end(p.SessionID, ep.SessionAgent().ID)
	if e == nil || e.holder != ep.SessionHolder() {
		return
	}
	e.mu.Lock()
	var out []byte
	if (e.state == stateOpen || e.state == stateResuming) && e.takeAckLocked(p.Seq) {
		e.lastSent = time.Now()
		out = e.env(kindAck, e.acked, 0, "", "")
	}
	e.mu.Unlock()
	if out != nil {
		s.publish(e.subject, out)
	}
}

// takeAckLocked records that the agent took in the frames up to seq (at
// most those passed on), and reports whether that is news.
func (e *end) takeAckLocked(seq uint64) bool {
	seq = min(seq, e.next-1)
	if seq <= e.acked {
		return false
	}
	from := max(e.acked, e.base)
	start, n := e.acked+1, uint64(len(e.sizes))
	if seq-e.acked > n {
		start = seq - n + 1 // n seqs in a row cover every slot
	}
	for i := start; i <= seq; i++ {
		e.bytes -= int(e.sizes[i%n])
		e.sizes[i%n] = 0
	}
	if seq > from {
		e.svc.stats.buffered.Add(-int64(seq - from))
	}
	e.acked = seq
	return true
}

// ackFromPeerLocked records that the peer's agent took in this end's
// frames up to seq, and passes that on to the end's agent as credit.
func (e *end) ackFromPeerLocked(seq uint64) {
	if seq <= e.peerAcked || (e.state != stateOpen && e.state != stateResuming) {
		return
	}
	e.peerAcked = seq
	notify(e.ep, connproto.MethodSessionAck, connproto.SessionAckParams{SessionID: e.key.session, Seq: seq})
}
