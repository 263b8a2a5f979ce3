package a2ajson

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// The plain structs of decode.go, each read by the scanner (scan.go): a
// key it does not name exactly, or names twice, gives the text up to
// json.Unmarshal.

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

// text reads a string into dst.
func text[S ~string](s *scanner, dst *S) bool {
	v, ok := s.str()
	*dst = S(v)
	return ok
}

// list reads an array of strings into dst (empty, not nil, for []).
func list[S ~string](s *scanner, dst *[]S) bool {
	*dst = []S{}
	return s.array(func() bool {
		v, ok := s.str()
		*dst = append(*dst, S(v))
		return ok
	})
}

// sendMessageConfig reads a send request's configuration.
func (s *scanner) sendMessageConfig(c *a2a.SendMessageConfig) bool {
	var seen uint32
	return s.object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "acceptedOutputModes":
			return list(s, &c.AcceptedOutputModes) && once(&seen, 1)
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
			return text(s, &w.Tenant) && once(&seen, 1)
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
			return text(s, &w.JSONRPC) && once(&seen, 1)
		case "id":
			return text(s, &w.ID) && once(&seen, 2)
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
			return text(s, &w.ID) && once(&seen, 1)
		case "contextId":
			return text(s, &w.ContextID) && once(&seen, 2)
		case "extensions":
			return list(s, &w.Extensions) && once(&seen, 4)
		case "metadata":
			w.Metadata, ok = s.metadata()
			return ok && once(&seen, 8)
		case "parts":
			w.Parts, ok = s.parts()
			return ok && once(&seen, 16)
		case "referenceTaskIds":
			return list(s, &w.ReferenceTasks) && once(&seen, 32)
		case "role":
			return text(s, &w.Role) && once(&seen, 64)
		case "taskId":
			return text(s, &w.TaskID) && once(&seen, 128)
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
			w.Text = new(string)
			return text(s, w.Text) && once(&seen, 1)
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
			w.URL = new(string)
			return text(s, w.URL) && once(&seen, 8)
		case "filename":
			return text(s, &w.Filename) && once(&seen, 16)
		case "mediaType":
			return text(s, &w.MediaType) && once(&seen, 32)
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
			return text(s, &w.State) && once(&seen, 2)
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
			return text(s, &w.ID) && once(&seen, 1)
		case "artifacts":
			w.Artifacts = []*wireArtifact{}
			return s.array(func() bool {
				a := new(wireArtifact)
				w.Artifacts = append(w.Artifacts, a)
				return s.artifact(a)
			}) && once(&seen, 2)
		case "contextId":
			return text(s, &w.ContextID) && once(&seen, 4)
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
			return text(s, &w.ID) && once(&seen, 1)
		case "description":
			return text(s, &w.Description) && once(&seen, 2)
		case "extensions":
			return list(s, &w.Extensions) && once(&seen, 4)
		case "metadata":
			w.Metadata, ok = s.metadata()
			return ok && once(&seen, 8)
		case "name":
			return text(s, &w.Name) && once(&seen, 16)
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
			return text(s, &w.ContextID) && once(&seen, 1)
		case "status":
			return s.status(&w.Status) && once(&seen, 2)
		case "taskId":
			return text(s, &w.TaskID) && once(&seen, 4)
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
			return text(s, &w.ContextID) && once(&seen, 4)
		case "lastChunk":
			w.LastChunk, ok = s.boolean()
			return ok && once(&seen, 8)
		case "taskId":
			return text(s, &w.TaskID) && once(&seen, 16)
		case "metadata":
			w.Metadata, ok = s.metadata()
			return ok && once(&seen, 32)
		}
		return false
	})
}
