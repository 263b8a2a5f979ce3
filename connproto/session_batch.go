package connproto

import "bytes"

// Session batches (docs/connector-protocol.md, "Session batches"): a busy
// session's connection carries many small notifications, and each
// WebSocket message costs its writer a write to the socket. When several
// SessionFrame and SessionAck notifications wait for one connection, a
// writer may send them in one message: a JSON array of them (a JSON-RPC
// batch of notifications), read in order as if each came alone. A writer
// sends batches only to a peer that said it reads them: the agent in
// HelloParams.SessionBatches, the server in HelloResult.SessionBatches.

// MaxSessionBatchBytes bounds a batch a writer makes: it adds no
// notification that would take the batch past it (a notification alone
// is sent alone, whatever its size).
const MaxSessionBatchBytes = 256 << 10

// SessionNote is one notification of a session batch: a SessionFrame, or
// a SessionAck (Ack set; Params holds its sessionId and seq only).
type SessionNote struct {
	Ack    bool
	Params SessionFrameParams
}

// The beginnings of the notifications a writer may put in a batch, as
// Encode and the frame encoders of this repository write them.
const (
	frameNotePrefix = `{"jsonrpc":"2.0","method":"` + MethodSessionFrame + `",`
	ackNotePrefix   = `{"jsonrpc":"2.0","method":"` + MethodSessionAck + `",`
)

// IsSessionNote reports whether the encoded message b is a SessionFrame or
// SessionAck notification as this repository encodes them, which a writer
// may put in a batch.
func IsSessionNote(b []byte) bool {
	return bytes.HasPrefix(b, []byte(frameNotePrefix)) || bytes.HasPrefix(b, []byte(ackNotePrefix))
}

// AppendSessionBatch appends the batch of the encoded notifications notes
// (each one for which IsSessionNote holds) to b.
func AppendSessionBatch(b []byte, notes [][]byte) []byte {
	b = append(b, '[')
	for i, n := range notes {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, n...)
	}
	return append(b, ']')
}

// IsBatch reports whether data, a message read, is a JSON array: a batch.
func IsBatch(data []byte) bool {
	s := scanner{b: data}
	s.space()
	return s.i < len(s.b) && s.b[s.i] == '['
}

// ParseSessionBatch reads data as a session batch, in one pass: a JSON
// array of SessionFrame and SessionAck notifications, each in the form
// ParseSessionFrame takes (a SessionAck with "sessionId" and "seq" only).
// It appends them to notes, in order, and reports false, with notes as it
// was, for anything else (which the caller reads with encoding/json). The
// frames' Text and Data are parts of data.
func ParseSessionBatch(data []byte, notes []SessionNote) ([]SessionNote, bool) {
	n0 := len(notes)
	s := scanner{b: data}
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != '[' {
		return notes, false
	}
	s.i++
	for {
		s.space()
		var n SessionNote
		if !s.note(&n) {
			return notes[:n0], false
		}
		notes = append(notes, n)
		s.space()
		if s.i >= len(s.b) {
			return notes[:n0], false
		}
		c := s.b[s.i]
		s.i++
		if c == ']' {
			break
		}
		if c != ',' {
			return notes[:n0], false
		}
	}
	s.space()
	if s.i != len(s.b) {
		return notes[:n0], false
	}
	return notes, true
}

// note reads one notification of a batch.
func (s *scanner) note(n *SessionNote) bool {
	var seen, params uint8 // seen: 1 jsonrpc, 2 method, 4 params
	ok := s.object(func(key []byte) bool {
		switch string(key) {
		case "jsonrpc":
			return s.once(&seen, 1) && s.literal(`"2.0"`)
		case "method":
			if !s.once(&seen, 2) {
				return false
			}
			switch {
			case s.literal(`"` + MethodSessionFrame + `"`):
			case s.literal(`"` + MethodSessionAck + `"`):
				n.Ack = true
			default:
				return false
			}
			return true
		case "params":
			return s.once(&seen, 4) && s.params(&n.Params, &params)
		}
		return false
	})
	if !ok || seen != 7 || n.Params.SessionID == "" {
		return false
	}
	if n.Ack {
		return params == 3 // sessionId and seq, nothing else
	}
	return (n.Params.Text == nil) != (n.Params.Data == nil)
}
