package connproto

import (
	"encoding/binary"
	"encoding/json"
	"unicode/utf8"
)

// Frames of live sessions are most of what a busy session's connections
// carry, and encoding/json reads each twice (it checks a document whole
// before it decodes it) and copies its raw parts: at 20,000 frames a
// second that was a third of the server's CPU. ParseSessionFrame reads the
// usual form of a SessionFrame notification in one pass, without copying;
// whatever it does not take (another key, an escape in a name, a number it
// would have to round) the caller reads with encoding/json as any frame.
// FuzzParseSessionFrame holds it to the same answers as encoding/json.

// ParseSessionFrame reads data as a SessionFrame notification:
//
//	{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"…","seq":N,"text":"…"}}
//
// (keys in any order, whitespace allowed, "data" with any JSON value in
// place of "text"). It reports false for anything else, which the caller
// then reads as a Frame. The params' Text and Data are parts of data.
func ParseSessionFrame(data []byte) (SessionFrameParams, bool) {
	var p SessionFrameParams
	s := scanner{b: data}
	var seen uint8 // 1 jsonrpc, 2 method, 4 params
	ok := s.object(func(key []byte) bool {
		switch string(key) {
		case "jsonrpc":
			return s.once(&seen, 1) && s.literal(`"2.0"`)
		case "method":
			return s.once(&seen, 2) && s.literal(`"`+MethodSessionFrame+`"`)
		case "params":
			return s.once(&seen, 4) && s.frameParams(&p)
		}
		return false
	})
	if !ok || seen != 7 || p.SessionID == "" || (p.Text == nil) == (p.Data == nil) {
		return SessionFrameParams{}, false
	}
	s.space()
	if s.i != len(s.b) {
		return SessionFrameParams{}, false
	}
	return p, true
}

// frameParams reads the params object of a SessionFrame.
func (s *scanner) frameParams(p *SessionFrameParams) bool {
	var seen uint8
	return s.params(p, &seen)
}

// params reads the params object of a SessionFrame or a SessionAck,
// recording in seen which keys it held: 1 sessionId, 2 seq, 4 text, 8
// data. It reports false without both sessionId and seq.
func (s *scanner) params(p *SessionFrameParams, seen *uint8) bool {
	ok := s.object(func(key []byte) bool {
		switch string(key) {
		case "sessionId":
			v, ok := s.plainString()
			p.SessionID = string(v)
			return s.once(seen, 1) && ok
		case "seq":
			v, ok := s.uint()
			p.Seq = v
			return s.once(seen, 2) && ok
		case "text":
			start := s.i
			if !s.once(seen, 4) || !s.str() {
				return false
			}
			p.Text = s.b[start:s.i]
			return true
		case "data":
			start := s.i
			if !s.once(seen, 8) || !s.value() || !json.Valid(s.b[start:s.i]) {
				return false
			}
			p.Data = s.b[start:s.i]
			return p.Data[0] != 'n' // "data": null is as absent to encoding/json
		}
		return false
	})
	return ok && *seen&3 == 3
}

// scanner reads JSON from b at i.
type scanner struct {
	b []byte
	i int
}

// once records bit in seen and reports whether it was not there.
func (s *scanner) once(seen *uint8, bit uint8) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// space skips whitespace.
func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// object reads an object, calling member for each key with s at its value
// (member reads the value and reports whether it could).
func (s *scanner) object(member func(key []byte) bool) bool {
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return false
	}
	s.i++
	s.space()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
	}
	for {
		key, ok := s.plainString()
		if !ok {
			return false
		}
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.space()
		if !member(key) {
			return false
		}
		s.space()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.space()
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// literal reads exactly lit.
func (s *scanner) literal(lit string) bool {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// plainString reads a string without escapes, of valid UTF-8, and returns
// its content: a key, or an id.
func (s *scanner) plainString() ([]byte, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			v := s.b[start:j]
			return v, utf8.Valid(v)
		case c < 0x20 || c == '\\':
			return nil, false
		}
	}
	return nil, false
}

// str reads a JSON string, escapes and all.
func (s *scanner) str() bool {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return false
	}
	for j := s.i + 1; j < len(s.b); j++ {
		// Eight bytes at a time while none of them needs a look: most
		// of a frame's text.
		for j+8 <= len(s.b) && !special8(binary.LittleEndian.Uint64(s.b[j:])) {
			j += 8
		}
		if j >= len(s.b) {
			break
		}
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			j++
			if j >= len(s.b) {
				return false
			}
			switch s.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(s.b) || !isHex(s.b[j+1]) || !isHex(s.b[j+2]) || !isHex(s.b[j+3]) || !isHex(s.b[j+4]) {
					return false
				}
				j += 4
			default:
				return false
			}
		}
	}
	return false
}

// special8 reports whether one of the eight bytes of w is a quote, a
// backslash or a control character (below 0x20): the bytes str looks at.
func special8(w uint64) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	q, bs := w^(lo*'"'), w^(lo*'\\')
	return ((w-lo*0x20)&^w|(q-lo)&^q|(bs-lo)&^bs)&hi != 0
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// uint reads a non-negative integer that fits in a uint64, without a
// fraction or an exponent (anything else is left to encoding/json).
func (s *scanner) uint() (uint64, bool) {
	start := s.i
	var v uint64
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		d := uint64(s.b[s.i] - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
		s.i++
	}
	n := s.i - start
	if n == 0 || (n > 1 && s.b[start] == '0') {
		return 0, false
	}
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case '.', 'e', 'E':
			return 0, false
		}
	}
	return v, true
}

// value skips one JSON value (which json.Valid then checks).
func (s *scanner) value() bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.str()
	case c == '{' || c == '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if !s.str() {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return true
				}
			}
			s.i++
		}
		return false
	default:
		start := s.i
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return s.i > start
			}
			s.i++
		}
		return s.i > start
	}
}
