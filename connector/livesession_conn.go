package connector

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/switchboard-dev/switchboard/connproto"
)

// liveSessions are a Client's live sessions, across its connections. The
// client's requests about them (SessionOpen, SessionResume) are written
// straight on a connection, not through the outbox: their answers create
// or resume a session in the read loop, before the frames that follow
// them on the same connection are read.
type liveSessions struct {
	c *Client

	mu      sync.Mutex
	byID    map[string]*Session  // guarded by mu: the sessions not ended
	conn    *session             // guarded by mu: the connection that said hello, nil between connections
	opens   map[string]*openCall // guarded by mu: SessionOpens waiting for their answer, by request id
	resumes map[string]*Session  // guarded by mu: SessionResumes waiting for their answer, by request id
	next    uint64               // guarded by mu: numbers the requests
	stopped bool                 // guarded by mu: Run returned
}

// openCall is an OpenSession waiting for its answer.
type openCall struct {
	id     string
	frame  []byte
	sentOn *session // guarded by liveSessions.mu: the connection it was written on
	done   chan openResult
}

// openResult is how an OpenSession ended.
type openResult struct {
	session *Session
	err     error
}

func newLiveSessions(c *Client) *liveSessions {
	return &liveSessions{c: c, byID: make(map[string]*Session), opens: make(map[string]*openCall), resumes: make(map[string]*Session)}
}

// newSession returns a session attached to conn.
func (l *liveSessions) newSession(id string, peer SessionPeer, w connproto.SessionWindow, graceMillis int64, conn *session) *Session {
	if w.Frames <= 0 {
		w.Frames = 1
	}
	w.Bytes = max(w.Bytes, connproto.MaxSessionFrameBytes)
	return &Session{id: id, peer: peer, window: w, grace: time.Duration(graceMillis) * time.Millisecond, live: l, conn: conn,
		nextSeq: 1, credit: make(chan struct{}, 1), arrived: make(chan struct{}, 1), done: make(chan struct{})}
}

// add records a session.
func (l *liveSessions) add(s *Session) {
	l.mu.Lock()
	stopped := l.stopped
	if !stopped {
		l.byID[s.id] = s
	}
	l.mu.Unlock()
	if stopped {
		s.end(&SessionError{Reason: ReasonStopped, Message: "the client stopped"})
	}
}

// forgetResume forgets the SessionResume id of s, whose connection ended
// before its answer.
func (l *liveSessions) forgetResume(id string, s *Session) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.resumes[id] == s {
		delete(l.resumes, id)
	}
}

// remove forgets a session that ended.
func (l *liveSessions) remove(s *Session) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byID[s.id] == s {
		delete(l.byID, s.id)
	}
	if s.resumeReqID != "" && l.resumes[s.resumeReqID] == s {
		delete(l.resumes, s.resumeReqID)
	}
}

// get returns the session id, if it is live.
func (l *liveSessions) get(id string) *Session {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byID[id]
}

// requestID returns a new id for one of the client's session requests.
func (l *liveSessions) requestIDLocked(kind string) string {
	l.next++
	return kind + ":" + strconv.FormatUint(l.next, 10)
}

// startOpen writes a SessionOpen on the current connection (or the next).
func (l *liveSessions) startOpen(p connproto.SessionOpenParams) (*openCall, error) {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return nil, ErrClosed
	}
	op := &openCall{id: l.requestIDLocked("open"), done: make(chan openResult, 1)}
	b, err := connproto.Encode(connproto.Request{JSONRPC: "2.0", ID: op.id, Method: connproto.MethodSessionOpen, Params: p})
	if err != nil {
		l.mu.Unlock()
		return nil, err
	}
	op.frame = b
	l.opens[op.id] = op
	conn := l.conn
	op.sentOn = conn
	l.mu.Unlock()
	if conn != nil {
		conn.queueRaw(b) // lost with the connection: written again on the next
	}
	return op, nil
}

// abandonOpen forgets an OpenSession whose caller stopped waiting; a
// session its answer opens after all is closed at once.
func (l *liveSessions) abandonOpen(op *openCall) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.opens, op.id)
}

// onResponse takes the answer to one of the client's session requests,
// and reports whether it was one.
func (l *liveSessions) onResponse(conn *session, id string, f *connproto.Frame) bool {
	kind, _, _ := strings.Cut(id, ":")
	if kind != "open" && kind != "resume" {
		return false
	}
	l.mu.Lock()
	op, s := l.opens[id], l.resumes[id]
	delete(l.opens, id)
	delete(l.resumes, id)
	l.mu.Unlock()
	switch {
	case kind == "open":
		l.opened(conn, id, op, f)
	case s != nil:
		s.resumed(conn, id, f)
	}
	return true
}

// opened takes the answer to a SessionOpen.
func (l *liveSessions) opened(conn *session, id string, op *openCall, f *connproto.Frame) {
	if f.Error != nil {
		if op != nil {
			op.done <- openResult{err: f.Error}
		}
		return
	}
	var r connproto.SessionOpenResult
	if json.Unmarshal(f.Result, &r) != nil || r.SessionID == "" {
		if op != nil {
			op.done <- openResult{err: errors.New("connector: the answer to SessionOpen is not a session")}
		}
		return
	}
	s := l.newSession(r.SessionID, r.Peer, r.Window, r.GraceMillis, conn)
	if op == nil { // the caller stopped waiting
		s.conn.queueRaw(closeNotification(r.SessionID, "the agent that asked stopped waiting"))
		return
	}
	l.add(s)
	op.done <- openResult{session: s}
}

// closeNotification encodes a SessionClose of the agent's.
func closeNotification(sessionID, message string) []byte {
	b, _ := connproto.Encode(connproto.Notification{JSONRPC: "2.0", Method: connproto.MethodSessionClose,
		Params: connproto.SessionCloseParams{SessionID: sessionID, Message: message}})
	return b
}

// connected is called when conn said hello: the sessions resume on it,
// and the SessionOpens not answered are written on it.
func (l *liveSessions) connected(conn *session) {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return
	}
	l.conn = conn
	sessions := make([]*Session, 0, len(l.byID))
	for _, s := range l.byID {
		sessions = append(sessions, s)
	}
	var opens [][]byte
	for _, op := range l.opens {
		if op.sentOn != conn {
			op.sentOn = conn
			opens = append(opens, op.frame)
		}
	}
	l.mu.Unlock()
	for _, s := range sessions {
		s.resumeOn(conn)
	}
	for _, b := range opens {
		conn.queueRaw(b)
	}
}

// disconnected is called when conn ended: its sessions wait for the next
// connection, within their grace.
func (l *liveSessions) disconnected(conn *session) {
	l.mu.Lock()
	if l.conn == conn {
		l.conn = nil
	}
	sessions := make([]*Session, 0, len(l.byID))
	for _, s := range l.byID {
		sessions = append(sessions, s)
	}
	l.mu.Unlock()
	for _, s := range sessions {
		s.suspend(conn)
	}
}

// stopping is called when the client stops, once conn's write loop has
// ended and before the connection closes: what waits to be written (the
// frames, acknowledgements and closes of the sessions, in order) is
// written, then each live session's peer is told at once rather than
// after the grace.
func (l *liveSessions) stopping(conn *session) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for drained := false; !drained && ctx.Err() == nil; {
		select {
		case b := <-conn.answers:
			if conn.ws.Write(ctx, websocket.MessageText, b) != nil {
				return
			}
		default:
			drained = true
		}
	}
	l.mu.Lock()
	sessions := make([]*Session, 0, len(l.byID))
	for _, s := range l.byID {
		sessions = append(sessions, s)
	}
	l.mu.Unlock()
	for _, s := range sessions {
		s.mu.Lock()
		live := s.conn == conn && !s.suspended && s.closed == nil
		s.mu.Unlock()
		if live && conn.ws.Write(ctx, websocket.MessageText, closeNotification(s.id, "the agent is stopping")) != nil {
			return
		}
	}
}

// stop ends every session and fails the SessionOpens waiting: Run
// returned.
func (l *liveSessions) stop() {
	l.mu.Lock()
	l.stopped = true
	sessions := make([]*Session, 0, len(l.byID))
	for _, s := range l.byID {
		sessions = append(sessions, s)
	}
	opens := l.opens
	l.opens = make(map[string]*openCall)
	l.mu.Unlock()
	for _, s := range sessions {
		s.end(&SessionError{Reason: ReasonStopped, Message: "the client stopped"})
	}
	for _, op := range opens {
		op.done <- openResult{err: ErrClosed}
	}
}

// suspend detaches the session from conn, which ended. When conn is the
// one a SessionResume was asked on, unanswered, the resume is forgotten
// and the grace goes on from the first drop (or, run out meanwhile, ends
// the session now): the next connection asks again.
func (s *Session) suspend(conn *session) {
	s.mu.Lock()
	if s.conn != conn || s.closed != nil {
		s.mu.Unlock()
		return
	}
	if s.suspended {
		if s.resumeReqID != "" {
			s.live.forgetResume(s.resumeReqID, s)
			s.resumeReqID = ""
			if s.graceOver {
				s.endDisconnectedLocked()
				s.mu.Unlock()
				s.live.remove(s)
				return
			}
		}
		s.mu.Unlock()
		return
	}
	defer s.mu.Unlock()
	s.suspended = true
	if s.ackTimer != nil {
		s.ackTimer.Stop()
		s.ackDue = false
	}
	if s.graceTimer == nil {
		s.graceTimer = time.AfterFunc(s.grace, s.graceEnded)
	} else {
		s.graceTimer.Reset(s.grace)
	}
}

// graceEnded ends a session whose connection did not come back in time;
// one whose SessionResume waits for its answer is ended by that answer,
// or by its connection's end (suspend).
func (s *Session) graceEnded() {
	s.mu.Lock()
	if !s.suspended || s.closed != nil {
		s.mu.Unlock()
		return
	}
	if s.resumeReqID != "" {
		s.graceOver = true
		s.mu.Unlock()
		return
	}
	s.endDisconnectedLocked()
	s.mu.Unlock()
	s.live.remove(s)
}

// endDisconnectedLocked ends the session whose grace ran out, with s.mu
// held; the caller then removes it.
func (s *Session) endDisconnectedLocked() {
	s.endLocked(&SessionError{Reason: connproto.SessionReasonDisconnected,
		Message: "this agent's connection was down for longer than the grace of " + s.grace.String()})
}

// resumeOn asks to take the session up on conn.
func (s *Session) resumeOn(conn *session) {
	s.mu.Lock()
	if !s.suspended || s.closed != nil {
		s.mu.Unlock()
		return
	}
	l := s.live
	l.mu.Lock()
	id := l.requestIDLocked("resume")
	l.resumes[id] = s
	l.mu.Unlock()
	s.resumeReqID = id
	s.conn = conn
	p := connproto.SessionResumeParams{SessionID: s.id, Peer: s.peer.ID, Received: s.received, Acked: s.consumed}
	s.ackSent, s.consumedBytes = s.consumed, 0
	b, _ := connproto.Encode(connproto.Request{JSONRPC: "2.0", ID: id, Method: connproto.MethodSessionResume, Params: p})
	s.mu.Unlock()
	conn.queueRaw(b)
}

// resumed takes the answer to a SessionResume: the session goes on from
// where the peer stands, sending again what it did not receive.
func (s *Session) resumed(conn *session, id string, f *connproto.Frame) {
	s.mu.Lock()
	if s.resumeReqID != id || s.closed != nil {
		s.mu.Unlock()
		return
	}
	s.resumeReqID = ""
	if f.Error != nil {
		reason := connproto.SessionReasonDisconnected
		if f.Error.Code == connproto.CodeSessionNotAllowed {
			reason = connproto.SessionReasonNotAllowed
		}
		s.endLocked(&SessionError{Reason: reason, Message: f.Error.Message})
		s.mu.Unlock()
		s.live.remove(s)
		return
	}
	var r connproto.SessionResumeResult
	if json.Unmarshal(f.Result, &r) != nil {
		r.From = s.nextSeq // resend nothing; the server asks with SessionResend if it must
	}
	defer s.mu.Unlock()
	s.suspended, s.conn, s.graceOver = false, conn, false
	if s.graceTimer != nil {
		s.graceTimer.Stop()
	}
	s.releaseLocked(r.Acked)
	s.resendLocked(r.From)
	s.ackLocked()
}

// queueRaw hands an encoded frame to the write loop; it reports false
// when the connection ended first.
func (s *session) queueRaw(b []byte) bool {
	select {
	case s.answers <- b:
		return true
	case <-s.ctx.Done():
		return false
	}
}

// onSessionRequest handles a session method from the server.
func (s *session) onSessionRequest(f *connproto.Frame) {
	l := s.c.live
	switch f.Method {
	case connproto.MethodSessionOpen:
		s.onSessionOffer(f)
	case connproto.MethodSessionFrame:
		var p connproto.SessionFrameParams
		if json.Unmarshal(f.Params, &p) == nil {
			s.onSessionFrame(&p)
		}
	case connproto.MethodSessionAck:
		var p connproto.SessionAckParams
		if json.Unmarshal(f.Params, &p) == nil {
			if ls := l.get(p.SessionID); ls != nil {
				ls.onAck(p.Seq)
			}
		}
	case connproto.MethodSessionResend:
		var p connproto.SessionResendParams
		if json.Unmarshal(f.Params, &p) == nil {
			if ls := l.get(p.SessionID); ls != nil {
				ls.mu.Lock()
				ls.resendLocked(p.From)
				ls.mu.Unlock()
			}
		}
	case connproto.MethodSessionClose:
		var p connproto.SessionCloseParams
		if json.Unmarshal(f.Params, &p) == nil {
			if ls := l.get(p.SessionID); ls != nil {
				ls.end(&SessionError{Reason: p.Reason, Message: p.Message})
			}
		}
	default:
		s.replyError(f.ID, connproto.CodeMethodNotFound, "method not found: "+truncate(f.Method, 64))
	}
}

// onSessionFrame takes in a frame of one of the client's sessions.
func (s *session) onSessionFrame(p *connproto.SessionFrameParams) {
	if ls := s.c.live.get(p.SessionID); ls != nil {
		ls.onFrame(p)
	}
}

// onSessionOffer hands another agent's request for a session to the
// SessionHandler, on a goroutine of its own; without one, it refuses.
func (s *session) onSessionOffer(f *connproto.Frame) {
	var offer connproto.SessionOffer
	if err := json.Unmarshal(f.Params, &offer); err != nil || offer.SessionID == "" {
		s.replyError(f.ID, connproto.CodeInvalidParams, "SessionOpen params must be a session offer")
		return
	}
	if s.c.Sessions == nil {
		s.queueRaw(encodeAnswer(f.ID, connproto.SessionAnswer{Reason: "this agent takes no sessions"}))
		return
	}
	r := &SessionRequest{ID: offer.SessionID, From: offer.From, Metadata: offer.Metadata, live: s.c.live, offer: &offer, conn: s, reqID: f.ID}
	s.c.handlers.Add(1)
	go func() {
		defer s.c.handlers.Done()
		defer func() {
			if p := recover(); p != nil {
				s.c.log.Error("session handler panicked", "session_id", r.ID, "panic", p)
			}
			_ = r.Refuse("the agent did not accept the session")
		}()
		s.c.Sessions.HandleSession(s.c.runCtx, r)
	}()
}
