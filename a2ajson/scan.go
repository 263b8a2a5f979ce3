package a2ajson

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// The plain structs (decode.go) are filled in one pass over the bytes by
// scanner when the JSON is of the plainest form, as agents and the SDK
// write it: every key one of the struct's names, exactly and once, no
// null, strings of UTF-8 with JSON's escapes. Metadata and data parts are
// read as encoding/json reads a value into an interface; raw bytes,
// timestamps and push configurations are found by their brackets and
// handed to json.Unmarshal alone. On anything else (a key in other case,
// an unknown or repeated key, a null, a number where a string goes,
// invalid UTF-8, bytes after the value) the scanner gives up, and
// json.Unmarshal decodes the whole text into the plain structs instead.
// What the scanner decodes, json.Unmarshal decodes the same
// (FuzzScannerAsEncodingJSON); encoding/json reads a text twice
// (checkValid, then the value) and through reflection: at a front that
// was a sixth of the server's time.

// scanner reads JSON from b, at i.
type scanner struct {
	b []byte
	i int
}

// scanStreamResponse decodes data into w, a zero value; false: data is not
// of the plainest form, and w holds part of it.
func scanStreamResponse(data []byte, w *wireStreamResponse) bool {
	s := scanner{b: data}
	return s.streamResponse(w) && s.end()
}

// scanSendMessageRequest is scanStreamResponse for a send request.
func scanSendMessageRequest(data []byte, w *wireSendMessageRequest) bool {
	s := scanner{b: data}
	return s.sendMessageRequest(w) && s.end()
}

// scanTask is scanStreamResponse for a task.
func scanTask(data []byte, w *wireTask) bool {
	s := scanner{b: data}
	return s.task(w) && s.end()
}

// scanAnswer is scanStreamResponse for a JSON-RPC answer whose result is
// a stream response, with a string id.
func scanAnswer(data []byte, w *rpcStreamAnswer) bool {
	s := scanner{b: data}
	return s.answer(w) && s.end()
}

// ws skips white space.
func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// end reports whether nothing but white space is left.
func (s *scanner) end() bool {
	s.ws()
	return s.i == len(s.b)
}

// consume reads c, after white space.
func (s *scanner) consume(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// object reads an object, calling field for each key with the scanner at
// its value; field reads the value, or returns false. A key is its bytes
// as written: one with an escape is no struct's name, and is given up on
// as any unknown key is.
func (s *scanner) object(field func(key []byte) bool) bool {
	if !s.consume('{') {
		return false
	}
	if s.consume('}') {
		return true
	}
	for {
		if !s.consume('"') {
			return false
		}
		start := s.i
		for s.i < len(s.b) && s.b[s.i] != '"' {
			s.i++
		}
		if s.i == len(s.b) {
			return false
		}
		key := s.b[start:s.i]
		s.i++
		if !s.consume(':') || !field(key) {
			return false
		}
		if s.consume(',') {
			continue
		}
		return s.consume('}')
	}
}

// array reads an array, calling elem with the scanner at each element.
func (s *scanner) array(elem func() bool) bool {
	if !s.consume('[') {
		return false
	}
	if s.consume(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if s.consume(',') {
			continue
		}
		return s.consume(']')
	}
}

// once marks bit in seen; false if it was marked: a key named twice.
func once(seen *uint32, bit uint32) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// str reads a string as encoding/json does, but gives up on invalid UTF-8.
func (s *scanner) str() (string, bool) {
	if !s.consume('"') {
		return "", false
	}
	for i := s.i; i < len(s.b); i++ {
		switch c := s.b[i]; {
		case c == '"':
			v := string(s.b[s.i:i])
			s.i = i + 1
			return v, true
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return s.strEscaped(i)
		}
	}
	return "", false
}

// strEscaped reads the rest of a string from i, where an escape or a byte
// outside printable ASCII is, as encoding/json's unquote does.
func (s *scanner) strEscaped(i int) (string, bool) {
	b := s.b
	out := make([]byte, 0, i-s.i+64)
	out = append(out, b[s.i:i]...)
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			s.i = i + 1
			return string(out), true
		case c == '\\':
			if i+1 == len(b) {
				return "", false
			}
			switch b[i+1] {
			case '"', '\\', '/':
				out = append(out, b[i+1])
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r := hex4(b[i:])
				if r < 0 {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if dec := utf16.DecodeRune(r, hex4(b[i:])); dec != unicode.ReplacementChar {
						r = dec
						i += 6
					} else {
						r = unicode.ReplacementChar
					}
				}
				out = utf8.AppendRune(out, r)
				continue
			default:
				return "", false
			}
			i += 2
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return "", false
			}
			out = append(out, b[i:i+size]...)
			i += size
		}
	}
	return "", false
}

// hex4 returns the rune of b's leading \uXXXX, or -1.
func hex4(b []byte) rune {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range b[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// stringList reads an array of strings (nil only for none read).
func stringList[S ~string](s *scanner) ([]S, bool) {
	out := []S{}
	ok := s.array(func() bool {
		v, ok := s.str()
		out = append(out, S(v))
		return ok
	})
	return out, ok
}

// boolean reads true or false.
func (s *scanner) boolean() (bool, bool) {
	s.ws()
	switch {
	case len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "true":
		s.i += 4
		return true, true
	case len(s.b)-s.i >= 5 && string(s.b[s.i:s.i+5]) == "false":
		s.i += 5
		return false, true
	}
	return false, false
}

// maxValueDepth bounds the nesting of a value the scanner hands to
// json.Unmarshal alone: encoding/json refuses a text nested deeper than
// 10,000, counting the levels around the value, which the scanner's
// structs add (at most eight) and a value decoded alone would not.
const maxValueDepth = 9000

// value returns the bytes of the value at the scanner, found by its
// brackets and quotes alone, and moves past it; json.Unmarshal or
// json.Valid checks them after. A null is given up on.
func (s *scanner) value() ([]byte, bool) {
	s.ws()
	b, start, depth := s.b, s.i, 0
	i := start
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if i >= len(b) {
				return nil, false
			}
			if depth == 0 {
				i++
				goto found
			}
		case '{', '[':
			if depth++; depth > maxValueDepth {
				return nil, false
			}
		case '}', ']':
			if depth == 0 {
				goto found
			}
			if depth--; depth == 0 {
				i++
				goto found
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				goto found
			}
		}
	}
found:
	if i == start || b[start] == 'n' {
		return nil, false
	}
	s.i = i
	return b[start:i], true
}

// decode reads the value at the scanner into v with json.Unmarshal.
func (s *scanner) decode(v any) bool {
	data, ok := s.value()
	return ok && json.Unmarshal(data, v) == nil
}

// metadata reads an object of any values.
func (s *scanner) metadata() (map[string]any, bool) {
	s.ws()
	if s.i == len(s.b) || s.b[s.i] != '{' {
		return nil, false
	}
	v, ok := s.anyValue(0)
	m, _ := v.(map[string]any)
	return m, ok
}

// anyValue reads a value as encoding/json reads it into an interface:
// objects as map[string]any (of a key named twice, the later value),
// arrays as []any, numbers as float64, null as nil. depth is the number
// of objects and arrays around it, which maxValueDepth bounds.
func (s *scanner) anyValue(depth int) (any, bool) {
	s.ws()
	if s.i == len(s.b) {
		return nil, false
	}
	switch s.b[s.i] {
	case '{', '[':
		if depth == maxValueDepth {
			return nil, false
		}
	}
	switch s.b[s.i] {
	case '{':
		s.i++
		m := map[string]any{}
		if s.consume('}') {
			return m, true
		}
		for {
			k, ok := s.str()
			if !ok || !s.consume(':') {
				return nil, false
			}
			if m[k], ok = s.anyValue(depth + 1); !ok {
				return nil, false
			}
			if !s.consume(',') {
				return m, s.consume('}')
			}
		}
	case '[':
		s.i++
		a := []any{}
		if s.consume(']') {
			return a, true
		}
		for {
			v, ok := s.anyValue(depth + 1)
			if !ok {
				return nil, false
			}
			a = append(a, v)
			if !s.consume(',') {
				return a, s.consume(']')
			}
		}
	case '"':
		return s.str()
	case 't', 'f':
		return s.boolean()
	case 'n':
		if len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
			s.i += 4
			return nil, true
		}
		return nil, false
	}
	n, ok := s.number()
	if !ok {
		return nil, false
	}
	f, err := strconv.ParseFloat(n, 64)
	return f, err == nil
}

// number reads a number of JSON's grammar and returns its text.
func (s *scanner) number() (string, bool) {
	s.ws()
	b, i := s.b, s.i
	digits := func() bool {
		start := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		return "", false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return "", false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return "", false
		}
	}
	n := string(b[s.i:i])
	s.i = i
	return n, true
}

// sendMessageConfig reads a send request's configuration.
func (s *scanner) sendMessageConfig(c *a2a.SendMessageConfig) bool {
	var seen uint32
	return s.object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "acceptedOutputModes":
			c.AcceptedOutputModes, ok = stringList[string](s)
			return ok && once(&seen, 1)
		case "returnImmediately":
			c.ReturnImmediately, ok = s.boolean()
			return ok && once(&seen, 2)
		case "historyLength":
			var n string
			if n, ok = s.number(); !ok {
				return false
			}
			v, err := strconv.ParseInt(n, 10, strconv.IntSize)
			c.HistoryLength = new(int(v))
			return err == nil && once(&seen, 4)
		case "taskPushNotificationConfig":
			c.PushConfig = new(a2a.PushConfig)
			return s.decode(c.PushConfig) && once(&seen, 8)
		}
		return false
	})
}

func (s *scanner) sendMessageRequest(w *wireSendMessageRequest) bool {
	var seen uint32
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "tenant":
			var ok bool
			w.Tenant, ok = s.str()
			return ok && once(&seen, 1)
		case "configuration":
			w.Config = new(a2a.SendMessageConfig)
			return s.sendMessageConfig(w.Config) && once(&seen, 2)
		case "message":
			w.Message = new(wireMessage)
			return s.message(w.Message) && once(&seen, 4)
		case "metadata":
			var ok bool
			w.Metadata, ok = s.metadata()
			return ok && once(&seen, 8)
		}
		return false
	})
}

func (s *scanner) streamResponse(w *wireStreamResponse) bool {
	var seen uint32
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "message":
			w.Message = new(wireMessage)
			return s.message(w.Message) && once(&seen, 1)
		case "task":
			w.Task = new(wireTask)
			return s.task(w.Task) && once(&seen, 2)
		case "statusUpdate":
			w.StatusUpdate = new(wireStatusUpdate)
			return s.statusUpdate(w.StatusUpdate) && once(&seen, 4)
		case "artifactUpdate":
			w.ArtifactUpdate = new(wireArtifactUpdate)
			return s.artifactUpdate(w.ArtifactUpdate) && once(&seen, 8)
		}
		return false
	})
}

func (s *scanner) answer(w *rpcStreamAnswer) bool {
	var seen uint32
	return s.object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "jsonrpc":
			w.JSONRPC, ok = s.str()
			return ok && once(&seen, 1)
		case "id":
			w.ID, ok = s.str()
			return ok && once(&seen, 2)
		case "result":
			w.Result = new(wireStreamResponse)
			return s.streamResponse(w.Result) && once(&seen, 4)
		case "error":
			var data []byte
			data, ok = s.value()
			w.Error = append(json.RawMessage(nil), data...)
			return ok && json.Valid(data) && once(&seen, 8)
		}
		return false
	})
}

func (s *scanner) message(w *wireMessage) bool {
	var seen uint32
	return s.object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "messageId":
			w.ID, ok = s.str()
			return ok && once(&seen, 1)
		case "contextId":
			w.ContextID, ok = s.str()
			return ok && once(&seen, 2)
		case "extensions":
			w.Extensions, ok = stringList[string](s)
			return ok && once(&seen, 4)
		case "metadata":
			w.Metadata, ok = s.metadata()
			return ok && once(&seen, 8)
		case "parts":
			w.Parts, ok = s.parts()
			return ok && once(&seen, 16)
		case "referenceTaskIds":
			w.ReferenceTasks, ok = stringList[a2a.TaskID](s)
			return ok && once(&seen, 32)
		case "role":
			w.Role, ok = s.str()
			return ok && once(&seen, 64)
		case "taskId":
			var id string
			id, ok = s.str()
			w.TaskID = a2a.TaskID(id)
			return ok && once(&seen, 128)
		}
		return false
	})
}

func (s *scanner) parts() ([]*wirePart, bool) {
	out := []*wirePart{}
	ok := s.array(func() bool {
		p := new(wirePart)
		out = append(out, p)
		return s.part(p)
	})
	return out, ok
}

func (s *scanner) part(w *wirePart) bool {
	var seen uint32
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "text":
			v, ok := s.str()
			w.Text = &v
			return ok && once(&seen, 1)
		case "raw":
			w.Raw = new([]byte)
			return s.decode(w.Raw) && once(&seen, 2)
		case "data":
			s.ws()
			if s.i == len(s.b) || s.b[s.i] == 'n' {
				return false
			}
			v, ok := s.anyValue(0)
			w.Data = &v
			return ok && once(&seen, 4)
		case "url":
			v, ok := s.str()
			w.URL = &v
			return ok && once(&seen, 8)
		case "filename":
			var ok bool
			w.Filename, ok = s.str()
			return ok && once(&seen, 16)
		case "mediaType":
			var ok bool
			w.MediaType, ok = s.str()
			return ok && once(&seen, 32)
		case "metadata":
			var ok bool
			w.Metadata, ok = s.metadata()
			return ok && once(&seen, 64)
		}
		return false
	})
}

func (s *scanner) status(w *wireStatus) bool {
	var seen uint32
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "message":
			w.Message = new(wireMessage)
			return s.message(w.Message) && once(&seen, 1)
		case "state":
			var ok bool
			w.State, ok = s.str()
			return ok && once(&seen, 2)
		case "timestamp":
			w.Timestamp = new(time.Time)
			return s.decode(w.Timestamp) && once(&seen, 4)
		}
		return false
	})
}

func (s *scanner) task(w *wireTask) bool {
	var seen uint32
	return s.object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "id":
			var id string
			id, ok = s.str()
			w.ID = a2a.TaskID(id)
			return ok && once(&seen, 1)
		case "artifacts":
			w.Artifacts = []*wireArtifact{}
			return s.array(func() bool {
				a := new(wireArtifact)
				w.Artifacts = append(w.Artifacts, a)
				return s.artifact(a)
			}) && once(&seen, 2)
		case "contextId":
			w.ContextID, ok = s.str()
			return ok && once(&seen, 4)
		case "history":
			w.History = []*wireMessage{}
			return s.array(func() bool {
				m := new(wireMessage)
				w.History = append(w.History, m)
				return s.message(m)
			}) && once(&seen, 8)
		case "metadata":
			w.Metadata, ok = s.metadata()
			return ok && once(&seen, 16)
		case "status":
			return s.status(&w.Status) && once(&seen, 32)
		}
		return false
	})
}

func (s *scanner) artifact(w *wireArtifact) bool {
	var seen uint32
	return s.object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "artifactId":
			var id string
			id, ok = s.str()
			w.ID = a2a.ArtifactID(id)
			return ok && once(&seen, 1)
		case "description":
			w.Description, ok = s.str()
			return ok && once(&seen, 2)
		case "extensions":
			w.Extensions, ok = stringList[string](s)
			return ok && once(&seen, 4)
		case "metadata":
			w.Metadata, ok = s.metadata()
			return ok && once(&seen, 8)
		case "name":
			w.Name, ok = s.str()
			return ok && once(&seen, 16)
		case "parts":
			w.Parts, ok = s.parts()
			return ok && once(&seen, 32)
		}
		return false
	})
}

func (s *scanner) statusUpdate(w *wireStatusUpdate) bool {
	var seen uint32
	return s.object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "contextId":
			w.ContextID, ok = s.str()
			return ok && once(&seen, 1)
		case "status":
			return s.status(&w.Status) && once(&seen, 2)
		case "taskId":
			var id string
			id, ok = s.str()
			w.TaskID = a2a.TaskID(id)
			return ok && once(&seen, 4)
		case "metadata":
			w.Metadata, ok = s.metadata()
			return ok && once(&seen, 8)
		}
		return false
	})
}

func (s *scanner) artifactUpdate(w *wireArtifactUpdate) bool {
	var seen uint32
	return s.object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "append":
			w.Append, ok = s.boolean()
			return ok && once(&seen, 1)
		case "artifact":
			w.Artifact = new(wireArtifact)
			return s.artifact(w.Artifact) && once(&seen, 2)
		case "contextId":
			w.ContextID, ok = s.str()
			return ok && once(&seen, 4)
		case "lastChunk":
			w.LastChunk, ok = s.boolean()
			return ok && once(&seen, 8)
		case "taskId":
			var id string
			id, ok = s.str()
			w.TaskID = a2a.TaskID(id)
			return ok && once(&seen, 16)
		case "metadata":
			w.Metadata, ok = s.metadata()
			return ok && once(&seen, 32)
		}
		return false
	})
}
