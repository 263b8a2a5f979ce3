package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/connproto"
)

// Live sessions (docs/connector-protocol.md, "Live sessions"): an agent
// opens a session with another connected agent that shares a community
// with it (OpenSession); the other agent's SessionHandler accepts or
// refuses it; then both Send and Receive frames (text, or JSON) until one
// of them closes. Frames arrive in order, once each. Each direction has a
// window: Send waits while the peer has not taken in (Receive) as many
// frames as the window holds, so a reader that stops reading slows its
// sender instead of growing memory anywhere. A session outlives a dropped
// connection: the Client resumes it on its next connection, and what was
// lost on the way is sent again, as long as the connection comes back
// within the server's grace (5 s by default).
//
//	s, err := client.OpenSession(ctx, "other-agent", nil)
//	if err != nil { … }
//	defer s.Close()
//	_ = s.Send(ctx, "hello")
//	f, err := s.Receive(ctx) // f.Text, or f.Data for a JSON frame

// Errors of live sessions.
var (
	// ErrSessionClosed matches (errors.Is) every *SessionError: the
	// session ended.
	ErrSessionClosed = errors.New("connector: the session is closed")
	// ErrFrameTooLarge: a frame's content is over
	// connproto.MaxSessionFrameBytes of JSON. Nothing was sent; the
	// session stays open.
	ErrFrameTooLarge = errors.New("connector: the frame is too large")
)

// SessionError says why a session ended: its Reason is one of
// connproto.SessionReason*, or ReasonStopped when the Client stopped.
type SessionError struct {
	Reason  string
	Message string
}

// ReasonStopped is the reason of the sessions of a Client whose Run
// returned.
const ReasonStopped = "stopped"

// ReasonClosedHere is the reason of a session this agent closed.
const ReasonClosedHere = "closed_here"

// Error implements error.
func (e *SessionError) Error() string {
	if e.Message == "" {
		return "connector: the session ended: " + e.Reason
	}
	return "connector: the session ended: " + e.Reason + ": " + e.Message
}

// Is makes a *SessionError match ErrSessionClosed.
func (e *SessionError) Is(target error) bool { return target == ErrSessionClosed }

// SessionPeer names the agent at the other end of a session: its id,
// handle and name as the server knows them.
type SessionPeer = connproto.SessionPeer

// Frame is one frame of a session: text, or JSON when Data is set.
type Frame struct {
	// Seq numbers the frames of each direction from 1.
	Seq uint64
	// Text is a text frame's content.
	Text string
	// Data is a JSON frame's content, as the peer sent it; nil for text.
	Data json.RawMessage
}

// IsJSON reports whether the frame holds JSON rather than text.
func (f *Frame) IsJSON() bool { return f.Data != nil }

// SessionHandler handles the sessions other agents open with this one.
type SessionHandler interface {
	// HandleSession decides on r: it calls r.Accept, then uses the
	// session (here or on another goroutine), or r.Refuse. It runs on a
	// goroutine of its own; the agent that asked waits for the answer
	// (at most 30 s). Returning without either refuses. ctx ends when the
	// client stops; HandleSession must then return soon, because Run
	// waits for it.
	HandleSession(ctx context.Context, r *SessionRequest)
}

// SessionHandlerFunc adapts a function to a SessionHandler.
type SessionHandlerFunc func(ctx context.Context, r *SessionRequest)

// HandleSession calls f(ctx, r).
func (f SessionHandlerFunc) HandleSession(ctx context.Context, r *SessionRequest) { f(ctx, r) }

// SessionRequest is another agent asking for a session with this one.
type SessionRequest struct {
	// ID is the session's id.
	ID string
	// From is the agent that asks. Its name is its owner's text:
	// untrusted input.
	From SessionPeer
	// Metadata is what the asking agent sent with its request (a JSON
	// object, or nil): untrusted input.
	Metadata json.RawMessage

	live    *liveSessions
	offer   *connproto.SessionOffer
	conn    *session // the connection the request came on
	reqID   json.RawMessage
	mu      sync.Mutex
	decided bool
}

// Accept accepts the session and returns it. It fails when the request
// was already answered, or when the connection it came on dropped (the
// asking agent is then told that this one went offline).
func (r *SessionRequest) Accept() (*Session, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.decided {
		return nil, errors.New("connector: the session request was already answered")
	}
	r.decided = true
	s := r.live.newSession(r.offer.SessionID, r.offer.From, r.offer.Window, r.offer.GraceMillis, r.conn)
	r.live.add(s)
	if !r.conn.queueRaw(encodeAnswer(r.reqID, connproto.SessionAnswer{Accepted: true})) {
		s.end(&SessionError{Reason: connproto.SessionReasonDisconnected, Message: "the connection dropped before the session was accepted"})
		return nil, errors.New("connector: the connection the request came on dropped")
	}
	return s, nil
}

// Refuse refuses the session; reason is shown to the asking agent.
func (r *SessionRequest) Refuse(reason string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.decided {
		return errors.New("connector: the session request was already answered")
	}
	r.decided = true
	if reason == "" {
		reason = "refused"
	}
	if !r.conn.queueRaw(encodeAnswer(r.reqID, connproto.SessionAnswer{Accepted: false, Reason: truncate(reason, 500)})) {
		return errors.New("connector: the connection the request came on dropped")
	}
	return nil
}

// encodeAnswer encodes the answer to a session request of the server's.
func encodeAnswer(id json.RawMessage, a connproto.SessionAnswer) []byte {
	b, _ := connproto.Encode(connproto.Result{JSONRPC: "2.0", ID: id, Result: a})
	return b
}

// OpenSession opens a live session with the agent to (its handle or its
// address URL on the server's deployment), which must share a community
// with this one, and waits until it accepts or refuses, or ctx ends.
// metadata, if not nil, is passed to the other agent (at most 4 KiB of
// JSON). A refusal is an *RPCError with code connproto.CodeSessionRefused;
// the other codes (connproto.CodeSession*) say why no one was asked. The
// request is made again on the next connection if the current one drops
// before the answer.
func (c *Client) OpenSession(ctx context.Context, to string, metadata map[string]any) (*Session, error) {
	c.init()
	p := connproto.SessionOpenParams{To: to}
	if metadata != nil {
		b, err := json.Marshal(metadata)
		if err != nil {
			return nil, fmt.Errorf("connector: session metadata: %w", err)
		}
		p.Metadata = b
	}
	op, err := c.live.startOpen(p)
	if err != nil {
		return nil, err
	}
	select {
	case r := <-op.done:
		if r.err != nil {
			return nil, fmt.Errorf("open a session with %s: %w", to, r.err)
		}
		return r.session, nil
	case <-ctx.Done():
		c.live.abandonOpen(op)
		return nil, context.Cause(ctx)
	}
}

// Session is a live session with another agent. Its methods are safe to
// call from several goroutines; frames sent concurrently go in the order
// Send was entered.
type Session struct {
	id     string                  // immutable
	peer   SessionPeer             // immutable
	window connproto.SessionWindow // immutable
	grace  time.Duration           // immutable
	live   *liveSessions           // immutable

	mu sync.Mutex
	// conn is the connection the session is attached to; suspended while
	// it is down, until a SessionResume on the next one is answered.
	conn        *session
	suspended   bool
	graceTimer  *time.Timer
	resumeReqID string // the SessionResume waiting for its answer
	graceOver   bool   // the grace ran out while resumeReqID waited

	// Frames sent.
	nextSeq      uint64      // the seq of the next frame
	unacked      []sentFrame // sent and not acknowledged, in order
	unackedBytes int
	credit       chan struct{} // capacity 1: the window may have room

	// Frames received.
	inbox         []Frame
	received      uint64 // the last seq received
	consumed      uint64 // the last seq Receive returned
	ackSent       uint64 // the last seq acknowledged to the server
	consumedBytes int    // since the last acknowledgement
	ackTimer      *time.Timer
	ackDue        bool          // ackTimer runs: it acknowledges what was taken in
	arrived       chan struct{} // capacity 1: a frame arrived

	closed *SessionError // set once, when the session ends
	done   chan struct{} // closed when it ends
}

// sentFrame is a frame kept until the peer acknowledges it.
type sentFrame struct {
	seq   uint64
	size  int
	frame []byte // the SessionFrame notification, sent again as it is
}

// ID returns the session's id.
func (s *Session) ID() string { return s.id }

// Peer returns the agent at the other end.
func (s *Session) Peer() SessionPeer { return s.peer }

// Window returns the session's window: how much of this agent's frames
// may be in flight.
func (s *Session) Window() connproto.SessionWindow { return s.window }

// Done returns a channel that is closed when the session ends.
func (s *Session) Done() <-chan struct{} { return s.done }

// Err returns why the session ended (a *SessionError), or nil while it is
// open.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed == nil {
		return nil
	}
	return s.closed
}

// InFlight returns how many frames this agent sent that the peer has not
// taken in yet.
func (s *Session) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.unacked)
}

// Buffered returns how many frames arrived that Receive has not returned
// yet.
func (s *Session) Buffered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.inbox)
}

// Send sends a text frame. It waits while the window is full (the peer
// has not taken in enough of the frames sent), until ctx ends or the
// session ends. A frame whose JSON is over connproto.MaxSessionFrameBytes
// is refused with ErrFrameTooLarge. Send returns once the frame is handed
// to the connection; it reaches the peer in order, sent again after a
// reconnect if need be, unless the session ends.
func (s *Session) Send(ctx context.Context, text string) error {
	if plainText(text) {
		return s.send(ctx, "text", frameValue{text: text}) // quoted as it goes into the frame: no copy between
	}
	raw, err := connproto.Encode(text)
	if err != nil {
		return err
	}
	return s.send(ctx, "text", frameValue{raw: raw})
}

// SendJSON sends v, encoded as JSON, as a data frame; see Send.
func (s *Session) SendJSON(ctx context.Context, v any) error {
	raw, err := connproto.Encode(v)
	if err != nil {
		return fmt.Errorf("connector: encode a frame: %w", err)
	}
	return s.send(ctx, "data", frameValue{raw: raw})
}

// Receive returns the next frame, waiting until one arrives, ctx ends, or
// the session ends: then, once the frames that arrived before are
// returned, it returns the *SessionError that says why. Taking a frame in
// is what gives the peer room to send more.
func (s *Session) Receive(ctx context.Context) (Frame, error) {
	for {
		s.mu.Lock()
		if len(s.inbox) > 0 {
			f := s.inbox[0]
			s.inbox[0] = Frame{}
			s.inbox = s.inbox[1:]
			if len(s.inbox) == 0 {
				s.inbox = nil
			}
			s.consumedLocked(f)
			s.mu.Unlock()
			return f, nil
		}
		if s.closed != nil {
			err := s.closed
			s.mu.Unlock()
			return Frame{}, err
		}
		s.mu.Unlock()
		select {
		case <-s.arrived:
		case <-s.done:
		case <-ctx.Done():
			return Frame{}, context.Cause(ctx)
		}
	}
}

// Close closes the session: the peer is told (reason "closed") after the
// frames this agent already sent. Frames still waiting for room are not
// sent. It is safe to call more than once.
func (s *Session) Close() error { return s.CloseWith("") }

// CloseWith closes the session with a message for the peer.
func (s *Session) CloseWith(message string) error {
	s.mu.Lock()
	if s.closed != nil {
		s.mu.Unlock()
		return nil
	}
	if s.conn != nil && !s.suspended {
		b, _ := connproto.Encode(connproto.Notification{JSONRPC: "2.0", Method: connproto.MethodSessionClose,
			Params: connproto.SessionCloseParams{SessionID: s.id, Message: truncate(message, 500)}})
		s.conn.queueRaw(b)
	}
	s.endLocked(&SessionError{Reason: ReasonClosedHere, Message: "this agent closed the session"})
	s.mu.Unlock()
	s.live.remove(s)
	return nil
}
