package connector

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/connproto"
)

// ackDelay is how long a session keeps the frames it took in before it
// acknowledges them: the frames taken in within it share one
// acknowledgement, counted from the first of them (a steady trickle of
// frames does not put it off). Half a window taken in is acknowledged at
// once, so a sender at full speed never waits for this; a slower one has
// room to spare in its window, and one acknowledgement per frame would
// double what the server passes on.
const ackDelay = 100 * time.Millisecond

// send sends one frame whose content (field "text" or "data") is raw.
func (s *Session) send(ctx context.Context, field string, v frameValue) error {
	size := v.size()
	if size > connproto.MaxSessionFrameBytes {
		return fmt.Errorf("%w: its JSON is %d bytes, more than the %d allowed", ErrFrameTooLarge, size, connproto.MaxSessionFrameBytes)
	}
	for {
		s.mu.Lock()
		if s.closed != nil {
			err := s.closed
			s.mu.Unlock()
			return err
		}
		if len(s.unacked) < s.window.Frames && (s.unackedBytes == 0 || s.unackedBytes+size <= s.window.Bytes) {
			break // s.mu stays locked
		}
		s.mu.Unlock()
		select {
		case <-s.credit:
		case <-s.done:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	defer s.mu.Unlock()
	seq := s.nextSeq
	s.nextSeq++
	f := sentFrame{seq: seq, size: size, frame: frameNotification(s.id, seq, field, v)}
	s.unacked = append(s.unacked, f)
	s.unackedBytes += f.size
	if len(s.unacked) < s.window.Frames {
		signal(s.credit) // room for the next sender too
	}
	if !s.suspended {
		s.conn.queueRaw(f.frame) // a frame lost with the connection is sent again on resume
	}
	return nil
}

// decodeText decodes a JSON string: at once when it has no escape and is
// valid UTF-8 (most text), with encoding/json otherwise.
func decodeText(raw []byte) (string, bool) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		inner := raw[1 : len(raw)-1]
		if bytes.IndexByte(inner, '\\') < 0 && bytes.IndexByte(inner, '"') < 0 && utf8.Valid(inner) {
			return string(inner), true
		}
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

// plainText reports whether text holds only printable ASCII that needs no
// escape in JSON (most text): then its JSON is text in quotes, as
// encoding/json would write it.
func plainText(text string) bool {
	for i := 0; i < len(text); i++ {
		if c := text[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// frameValue is a frame's value: its JSON (raw), or plain text (see
// plainText) that goes into the frame quoted.
type frameValue struct {
	raw  []byte
	text string
}

// size is the length of the value's JSON.
func (v frameValue) size() int {
	if v.raw != nil {
		return len(v.raw)
	}
	return len(v.text) + 2
}

// appendTo appends the value's JSON to b.
func (v frameValue) appendTo(b []byte) []byte {
	if v.raw != nil {
		return append(b, v.raw...)
	}
	b = append(b, '"')
	b = append(b, v.text...)
	return append(b, '"')
}

// frameNotification encodes a SessionFrame notification.
func frameNotification(sessionID string, seq uint64, field string, v frameValue) []byte {
	b := make([]byte, 0, 96+len(sessionID)+v.size())
	b = append(b, `{"jsonrpc":"2.0","method":"`+connproto.MethodSessionFrame+`","params":{"sessionId":`...)
	id, _ := json.Marshal(sessionID)
	b = append(b, id...)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, `,"`...)
	b = append(b, field...)
	b = append(b, `":`...)
	b = v.appendTo(b)
	return append(b, "}}"...)
}

// signal sets a capacity-1 channel's signal, if it is not set.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// consumedLocked records that Receive returned f, and acknowledges it
// now or soon.
func (s *Session) consumedLocked(f Frame) {
	s.consumed = f.Seq
	if f.Data != nil {
		s.consumedBytes += len(f.Data)
	} else {
		s.consumedBytes += len(f.Text) + 2
	}
	if s.consumed-s.ackSent >= uint64(max(1, s.window.Frames/2)) || s.consumedBytes >= s.window.Bytes/2 {
		s.ackLocked()
		return
	}
	if s.ackDue {
		return // the timer runs: it acknowledges this frame too
	}
	s.ackDue = true
	if s.ackTimer == nil {
		s.ackTimer = time.AfterFunc(ackDelay, s.ackLater)
	} else {
		s.ackTimer.Reset(ackDelay)
	}
}

// ackLater acknowledges what was taken in since the last acknowledgement.
func (s *Session) ackLater() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ackDue = false
	if s.closed == nil && s.consumed > s.ackSent {
		s.ackLocked()
	}
}

// ackLocked tells the server that the frames up to s.consumed were taken
// in. While the connection is down nothing is sent: the SessionResume
// says it.
func (s *Session) ackLocked() {
	if s.suspended || s.consumed <= s.ackSent {
		return
	}
	b, _ := connproto.Encode(connproto.Notification{JSONRPC: "2.0", Method: connproto.MethodSessionAck,
		Params: connproto.SessionAckParams{SessionID: s.id, Seq: s.consumed}})
	if s.conn.queueRaw(b) {
		s.ackSent, s.consumedBytes = s.consumed, 0
	}
}

// onFrame takes in a frame the peer sent: in order, once each.
func (s *Session) onFrame(p *connproto.SessionFrameParams) {
	f := Frame{Seq: p.Seq}
	if p.Data != nil {
		f.Data = bytes.Clone(p.Data) // p is in the reader's buffer, which the next message reuses
	} else if text, ok := decodeText(p.Text); ok {
		f.Text = text
	} else {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed != nil || p.Seq != s.received+1 {
		return // a frame received before (sent again after a reconnect)
	}
	if len(s.inbox) >= 2*s.window.Frames {
		// The server holds each direction to its window: this one does
		// not. The session ends here, and the server is told.
		if !s.suspended {
			s.conn.queueRaw(closeNotification(s.id, "the server sent past the window"))
		}
		s.endLocked(&SessionError{Reason: connproto.SessionReasonFlowControl, Message: "the server sent past the window"})
		s.live.remove(s) // s.mu before the client's lock, as resumeOn takes them
		return
	}
	s.received = p.Seq
	s.inbox = append(s.inbox, f)
	signal(s.arrived)
}

// onAck releases the frames the peer took in, up to seq.
func (s *Session) onAck(seq uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked(seq)
}

// releaseLocked forgets the frames up to seq: the peer has them.
func (s *Session) releaseLocked(seq uint64) {
	n := 0
	for n < len(s.unacked) && s.unacked[n].seq <= seq {
		s.unackedBytes -= s.unacked[n].size
		s.unacked[n] = sentFrame{}
		n++
	}
	if n > 0 {
		s.unacked = s.unacked[n:]
		if len(s.unacked) == 0 {
			s.unacked = nil
		}
		signal(s.credit)
	}
}

// resendLocked sends the unacknowledged frames from seq from on again.
func (s *Session) resendLocked(from uint64) {
	if s.suspended {
		return
	}
	for _, f := range s.unacked {
		if f.seq >= from && !s.conn.queueRaw(f.frame) {
			return
		}
	}
}

// endLocked ends the session with err: Receive returns the frames that
// arrived, then err; Send returns err. The caller then removes it from
// the client's sessions.
func (s *Session) endLocked(err *SessionError) {
	if s.closed != nil {
		return
	}
	s.closed = err
	for _, t := range []*time.Timer{s.ackTimer, s.graceTimer} {
		if t != nil {
			t.Stop()
		}
	}
	s.unacked, s.unackedBytes = nil, 0
	close(s.done)
}

// end ends the session and removes it from the client's.
func (s *Session) end(err *SessionError) {
	s.mu.Lock()
	s.endLocked(err)
	s.mu.Unlock()
	s.live.remove(s)
}
