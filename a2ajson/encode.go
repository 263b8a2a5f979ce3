package a2ajson

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// errFallBack stops a write that json.Marshal must do instead: a value it
// cannot write, whose error it words.
var errFallBack = errors.New("a2ajson: left to encoding/json")

// AppendTask appends the JSON of t.
func AppendTask(dst []byte, t *a2a.Task) ([]byte, error) {
	return finish(dst, t, taskSize(t), func(w *writer) { w.task(t) })
}

// AppendMessage appends the JSON of m.
func AppendMessage(dst []byte, m *a2a.Message) ([]byte, error) {
	return finish(dst, m, messageSize(m), func(w *writer) { w.message(m) })
}

// AppendEvent appends the JSON of e itself (a message, task, status update
// or artifact update), as json.Marshal(e) writes it.
func AppendEvent(dst []byte, e a2a.Event) ([]byte, error) {
	return finish(dst, e, eventSize(e), func(w *writer) { w.event(e) })
}

// AppendStreamResponse appends the JSON of a2a.StreamResponse{Event: e}:
// the event wrapped in an object whose one key names its kind.
func AppendStreamResponse(dst []byte, e a2a.Event) ([]byte, error) {
	sr := a2a.StreamResponse{Event: e}
	return finish(dst, sr, 24+eventSize(e), func(w *writer) {
		key := eventKey(e)
		if key == "" {
			w.err = errFallBack // an unknown type or a nil event: its error
			return
		}
		w.b = append(w.b, `{"`...)
		w.b = append(w.b, key...)
		w.b = append(w.b, `":`...)
		w.event(e)
		w.b = append(w.b, '}')
	})
}

// AppendSendMessageRequest appends the JSON of r.
func AppendSendMessageRequest(dst []byte, r *a2a.SendMessageRequest) ([]byte, error) {
	size := 4
	if r != nil {
		size = 128 + messageSize(r.Message)
	}
	return finish(dst, r, size, func(w *writer) {
		if r == nil {
			w.b = append(w.b, "null"...)
			return
		}
		w.b = append(w.b, '{')
		first := true
		if r.Tenant != "" {
			w.key(&first, "tenant")
			w.b = appendString(w.b, r.Tenant)
		}
		if r.Config != nil {
			w.key(&first, "configuration")
			w.any(r.Config)
		}
		w.key(&first, "message")
		w.message(r.Message)
		if len(r.Metadata) > 0 {
			w.key(&first, "metadata")
			w.any(r.Metadata)
		}
		w.b = append(w.b, '}')
	})
}

// Marshal returns the JSON of v: through this package for the types it
// writes, through json.Marshal for any other.
func Marshal(v any) ([]byte, error) { return Append(nil, v) }

// Append appends the JSON of v to dst, as Marshal writes it; on an error
// it returns dst as it was.
func Append(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case *a2a.Task:
		return AppendTask(dst, v)
	case *a2a.Message:
		return AppendMessage(dst, v)
	case *a2a.TaskStatusUpdateEvent:
		return AppendEvent(dst, v)
	case *a2a.TaskArtifactUpdateEvent:
		return AppendEvent(dst, v)
	case a2a.StreamResponse:
		return AppendStreamResponse(dst, v.Event)
	case *a2a.StreamResponse:
		if v != nil {
			return AppendStreamResponse(dst, v.Event)
		}
	case *a2a.SendMessageRequest:
		return AppendSendMessageRequest(dst, v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// finish runs write on dst, grown first by size, about what it will
// write, so that it is not grown again and again as a message's text is
// appended. If write could not write v, json.Marshal does, so its error (or,
// should it succeed, its bytes) is what the caller gets.
func finish(dst []byte, v any, size int, write func(*writer)) ([]byte, error) {
	w := writer{b: slices.Grow(dst, size)}
	write(&w)
	if w.err == nil {
		return w.b, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// writer appends JSON to b until the first error.
type writer struct {
	b   []byte
	err error
}

// key writes an object's key, after a comma unless it is the first.
func (w *writer) key(first *bool, k string) {
	if !*first {
		w.b = append(w.b, ',')
	}
	*first = false
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
}

// any writes v: a value made of strings, booleans, nulls, maps with
// string keys and slices of those (what metadata mostly holds) here, as
// encoding/json writes it; any other with encoding/json, in one pass, as
// it is not a value whose text this package would scan again.
func (w *writer) any(v any) {
	if w.err != nil {
		return
	}
	if b, ok := appendPlain(w.b, v, 0); ok {
		w.b = b
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		w.err = err
		return
	}
	w.b = append(w.b, b...)
}

// maxPlainDepth bounds the nesting appendPlain writes itself.
const maxPlainDepth = 16

// appendPlain appends v as json.Marshal writes it when v is made only of
// nil, strings, booleans, map[string]any and []any (to maxPlainDepth);
// ok is false for any other value, and then what it appended is to be
// dropped (the caller keeps dst's length).
func appendPlain(dst []byte, v any, depth int) (_ []byte, ok bool) {
	if depth > maxPlainDepth {
		return dst, false
	}
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case string:
		return appendString(dst, v), true
	case bool:
		if v {
			return append(dst, "true"...), true
		}
		return append(dst, "false"...), true
	case map[string]any:
		if v == nil {
			return append(dst, "null"...), true
		}
		var stack [8]string
		keys := stack[:0]
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k)
			dst = append(dst, ':')
			if dst, ok = appendPlain(dst, v[k], depth+1); !ok {
				return dst, false
			}
		}
		return append(dst, '}'), true
	case []any:
		if v == nil {
			return append(dst, "null"...), true
		}
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, ok = appendPlain(dst, e, depth+1); !ok {
				return dst, false
			}
		}
		return append(dst, ']'), true
	}
	return dst, false
}

func (w *writer) event(e a2a.Event) {
	switch e := e.(type) {
	case *a2a.Task:
		w.task(e)
	case *a2a.Message:
		w.message(e)
	case *a2a.TaskStatusUpdateEvent:
		w.statusUpdate(e)
	case *a2a.TaskArtifactUpdateEvent:
		w.artifactUpdate(e)
	default:
		w.err = errFallBack
	}
}

func (w *writer) task(t *a2a.Task) {
	if t == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = append(w.b, `{"id":`...)
	w.b = appendString(w.b, t.ID)
	if len(t.Artifacts) > 0 {
		w.b = append(w.b, `,"artifacts":[`...)
		for i, a := range t.Artifacts {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.artifact(a)
		}
		w.b = append(w.b, ']')
	}
	w.b = append(w.b, `,"contextId":`...)
	w.b = appendString(w.b, t.ContextID)
	if len(t.History) > 0 {
		w.b = append(w.b, `,"history":[`...)
		for i, m := range t.History {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.message(m)
		}
		w.b = append(w.b, ']')
	}
	w.metadata(t.Metadata)
	w.b = append(w.b, `,"status":`...)
	w.status(&t.Status)
	w.b = append(w.b, '}')
}

func (w *writer) status(s *a2a.TaskStatus) {
	w.b = append(w.b, '{')
	if s.Message != nil {
		w.b = append(w.b, `"message":`...)
		w.message(s.Message)
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, `"state":`...)
	w.b = appendString(w.b, s.State.String())
	if s.Timestamp != nil {
		ts, err := s.Timestamp.MarshalJSON()
		if err != nil {
			w.err = err
			return
		}
		w.b = append(w.b, `,"timestamp":`...)
		w.b = append(w.b, ts...)
	}
	w.b = append(w.b, '}')
}

func (w *writer) message(m *a2a.Message) {
	if m == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = append(w.b, `{"messageId":`...)
	w.b = appendString(w.b, m.ID)
	optString(w, `,"contextId":`, m.ContextID)
	optStrings(w, `,"extensions":`, m.Extensions)
	w.metadata(m.Metadata)
	w.b = append(w.b, `,"parts":`...)
	w.parts(m.Parts)
	optStrings(w, `,"referenceTaskIds":`, m.ReferenceTasks)
	w.b = append(w.b, `,"role":`...)
	w.b = appendString(w.b, m.Role.String())
	optString(w, `,"taskId":`, m.TaskID)
	w.b = append(w.b, '}')
}

func (w *writer) artifact(a *a2a.Artifact) {
	if a == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = append(w.b, `{"artifactId":`...)
	w.b = appendString(w.b, a.ID)
	optString(w, `,"description":`, a.Description)
	optStrings(w, `,"extensions":`, a.Extensions)
	w.metadata(a.Metadata)
	optString(w, `,"name":`, a.Name)
	w.b = append(w.b, `,"parts":`...)
	w.parts(a.Parts)
	w.b = append(w.b, '}')
}

func (w *writer) parts(ps a2a.ContentParts) {
	if ps == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = append(w.b, '[')
	for i, p := range ps {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.part(p)
	}
	w.b = append(w.b, ']')
}

func (w *writer) part(p *a2a.Part) {
	if p == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = append(w.b, '{')
	first := true
	switch c := p.Content.(type) {
	case a2a.Text:
		w.key(&first, "text")
		w.b = appendString(w.b, c)
	case a2a.Raw:
		w.key(&first, "raw")
		if c == nil {
			w.b = append(w.b, "null"...)
		} else {
			w.b = append(w.b, '"')
			w.b = base64.StdEncoding.AppendEncode(w.b, c)
			w.b = append(w.b, '"')
		}
	case a2a.Data:
		w.key(&first, "data")
		w.any(c.Value)
	case a2a.URL:
		if c != "" {
			w.key(&first, "url")
			w.b = appendString(w.b, c)
		}
	}
	if p.Filename != "" {
		w.key(&first, "filename")
		w.b = appendString(w.b, p.Filename)
	}
	if p.MediaType != "" {
		w.key(&first, "mediaType")
		w.b = appendString(w.b, p.MediaType)
	}
	if len(p.Metadata) > 0 {
		w.key(&first, "metadata")
		w.any(p.Metadata)
	}
	w.b = append(w.b, '}')
}

func (w *writer) statusUpdate(e *a2a.TaskStatusUpdateEvent) {
	if e == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = append(w.b, `{"contextId":`...)
	w.b = appendString(w.b, e.ContextID)
	w.b = append(w.b, `,"status":`...)
	w.status(&e.Status)
	w.b = append(w.b, `,"taskId":`...)
	w.b = appendString(w.b, e.TaskID)
	w.metadata(e.Metadata)
	w.b = append(w.b, '}')
}

func (w *writer) artifactUpdate(e *a2a.TaskArtifactUpdateEvent) {
	if e == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = append(w.b, '{')
	if e.Append {
		w.b = append(w.b, `"append":true,`...)
	}
	w.b = append(w.b, `"artifact":`...)
	w.artifact(e.Artifact)
	w.b = append(w.b, `,"contextId":`...)
	w.b = appendString(w.b, e.ContextID)
	if e.LastChunk {
		w.b = append(w.b, `,"lastChunk":true`...)
	}
	w.b = append(w.b, `,"taskId":`...)
	w.b = appendString(w.b, e.TaskID)
	w.metadata(e.Metadata)
	w.b = append(w.b, '}')
}

// optString writes key (`,"name":`) and s, unless s is empty.
func optString[S ~string](w *writer, key string, s S) {
	if s != "" {
		w.b = append(w.b, key...)
		w.b = appendString(w.b, s)
	}
}

// optStrings writes key (`,"name":`) and ss, unless ss is empty.
func optStrings[S ~string](w *writer, key string, ss []S) {
	if len(ss) > 0 {
		w.b = append(w.b, key...)
		w.b = appendStrings(w.b, ss)
	}
}

// metadata writes `,"metadata":` and m, unless m is empty.
func (w *writer) metadata(m map[string]any) {
	if len(m) > 0 {
		w.b = append(w.b, `,"metadata":`...)
		w.any(m)
	}
}

// appendStrings appends a JSON array of strings.
func appendStrings[S ~string](dst []byte, ss []S) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s)
	}
	return append(dst, ']')
}

// eventKey returns the StreamResponse field that holds e, or "" for an
// event it cannot hold (an unknown type or a nil pointer).
func eventKey(e a2a.Event) string {
	switch v := e.(type) {
	case *a2a.Message:
		if v != nil {
			return "message"
		}
	case *a2a.Task:
		if v != nil {
			return "task"
		}
	case *a2a.TaskStatusUpdateEvent:
		if v != nil {
			return "statusUpdate"
		}
	case *a2a.TaskArtifactUpdateEvent:
		if v != nil {
			return "artifactUpdate"
		}
	}
	return ""
}
