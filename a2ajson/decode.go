package a2ajson

import (
	"encoding/json"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Decoding. The SDK's types decode themselves the way they encode: a
// stream response, a list of parts and each part call json.Unmarshal
// again on their own bytes, which checks and scans them once more at every
// level, about ten passes over a message's text. Here the JSON is decoded
// once, into plain structs of the same shape (wire*, below, with the SDK's
// field names), and then moved into the SDK's types by the rules the SDK's
// methods apply: one kind of content per part and per stream response, the
// UNSPECIFIED names of roles and states read as empty.
//
// Whatever the plain structs cannot decode, or the SDK would refuse, is
// decoded again by json.Unmarshal into the SDK's types, so an error is
// always the SDK's own, word for word. The one difference is in JSON that
// names a field twice in one object: here the later value wins (and
// objects merge) as encoding/json does for plain structs, where the SDK's
// decoders, each starting afresh, may keep a different one. RFC 8259 leaves
// the meaning of such JSON open.

// UnmarshalStreamResponse decodes data as json.Unmarshal(data, sr) does.
func UnmarshalStreamResponse(data []byte, sr *a2a.StreamResponse) error {
	var w wireStreamResponse
	if scanStreamResponse(data, &w) || unmarshalAgain(data, &w) {
		if e, ok := w.event(); ok {
			sr.Event = e
			return nil
		}
	}
	return json.Unmarshal(data, sr)
}

// UnmarshalSendMessageRequest decodes data as json.Unmarshal(data, r) does
// into a zero request.
func UnmarshalSendMessageRequest(data []byte, r *a2a.SendMessageRequest) error {
	var w wireSendMessageRequest
	if scanSendMessageRequest(data, &w) || unmarshalAgain(data, &w) {
		if m, ok := w.Message.message(); ok {
			*r = a2a.SendMessageRequest{Tenant: w.Tenant, Config: w.Config, Message: m, Metadata: w.Metadata}
			return nil
		}
	}
	return json.Unmarshal(data, r)
}

// UnmarshalTask decodes data as json.Unmarshal(data, t) does into a zero
// task.
func UnmarshalTask(data []byte, t *a2a.Task) error {
	var w wireTask
	if scanTask(data, &w) || unmarshalAgain(data, &w) {
		if task, ok := w.task(); ok {
			*t = *task
			return nil
		}
	}
	return json.Unmarshal(data, t)
}

// unmarshalAgain decodes data into *w with json.Unmarshal, from w's zero
// value (the scanner may have filled part of it); false on an error.
func unmarshalAgain[T any](data []byte, w *T) bool {
	var zero T
	*w = zero
	return json.Unmarshal(data, w) == nil
}

type wireSendMessageRequest struct {
	Tenant   string                 `json:"tenant"`
	Config   *a2a.SendMessageConfig `json:"configuration"`
	Message  *wireMessage           `json:"message"`
	Metadata map[string]any         `json:"metadata"`
}

type wireStreamResponse struct {
	Message        *wireMessage        `json:"message"`
	Task           *wireTask           `json:"task"`
	StatusUpdate   *wireStatusUpdate   `json:"statusUpdate"`
	ArtifactUpdate *wireArtifactUpdate `json:"artifactUpdate"`
}

// event returns the one event the response holds; ok is false where the
// SDK would refuse it.
func (w *wireStreamResponse) event() (e a2a.Event, ok bool) {
	n := 0
	if w.Message != nil {
		n++
		e, ok = w.Message.message()
	}
	if w.Task != nil {
		n++
		e, ok = w.Task.task()
	}
	if w.StatusUpdate != nil {
		n++
		e, ok = w.StatusUpdate.statusUpdate()
	}
	if w.ArtifactUpdate != nil {
		n++
		e, ok = w.ArtifactUpdate.artifactUpdate()
	}
	return e, ok && n == 1
}

type wireMessage struct {
	ID             string         `json:"messageId"`
	ContextID      string         `json:"contextId"`
	Extensions     []string       `json:"extensions"`
	Metadata       map[string]any `json:"metadata"`
	Parts          []*wirePart    `json:"parts"`
	ReferenceTasks []a2a.TaskID   `json:"referenceTaskIds"`
	Role           string         `json:"role"`
	TaskID         a2a.TaskID     `json:"taskId"`
}

// message converts w (nil stays nil); ok is false where a part would be
// refused.
func (w *wireMessage) message() (*a2a.Message, bool) {
	if w == nil {
		return nil, true
	}
	parts, ok := contentParts(w.Parts)
	role := a2a.MessageRole(w.Role)
	if w.Role == "ROLE_UNSPECIFIED" {
		role = a2a.MessageRoleUnspecified
	}
	return &a2a.Message{ID: w.ID, ContextID: w.ContextID, Extensions: w.Extensions, Metadata: w.Metadata,
		Parts: parts, ReferenceTasks: w.ReferenceTasks, Role: role, TaskID: w.TaskID}, ok
}

type wirePart struct {
	Text      *string        `json:"text"`
	Raw       *[]byte        `json:"raw"`
	Data      *any           `json:"data"`
	URL       *string        `json:"url"`
	Filename  string         `json:"filename"`
	MediaType string         `json:"mediaType"`
	Metadata  map[string]any `json:"metadata"`
}

// contentParts converts parts (nil stays nil, and so does a nil part); ok
// is false if a part has no content or more than one.
func contentParts(parts []*wirePart) (a2a.ContentParts, bool) {
	if parts == nil {
		return nil, true
	}
	out := make(a2a.ContentParts, len(parts))
	for i, w := range parts {
		if w == nil {
			continue
		}
		p := &a2a.Part{Filename: w.Filename, MediaType: w.MediaType, Metadata: w.Metadata}
		n := 0
		if w.Text != nil {
			p.Content = a2a.Text(*w.Text)
			n++
		}
		if w.Raw != nil {
			p.Content = a2a.Raw(*w.Raw)
			n++
		}
		if w.Data != nil {
			p.Content = a2a.Data{Value: *w.Data}
			n++
		}
		if w.URL != nil && *w.URL != "" {
			p.Content = a2a.URL(*w.URL)
			n++
		}
		if n != 1 {
			return nil, false
		}
		out[i] = p
	}
	return out, true
}

type wireStatus struct {
	Message   *wireMessage `json:"message"`
	State     string       `json:"state"`
	Timestamp *time.Time   `json:"timestamp"`
}

func (w *wireStatus) status() (a2a.TaskStatus, bool) {
	m, ok := w.Message.message()
	state := a2a.TaskState(w.State)
	if w.State == "TASK_STATE_UNSPECIFIED" {
		state = a2a.TaskStateUnspecified
	}
	return a2a.TaskStatus{Message: m, State: state, Timestamp: w.Timestamp}, ok
}

type wireTask struct {
	ID        a2a.TaskID      `json:"id"`
	Artifacts []*wireArtifact `json:"artifacts"`
	ContextID string          `json:"contextId"`
	History   []*wireMessage  `json:"history"`
	Metadata  map[string]any  `json:"metadata"`
	Status    wireStatus      `json:"status"`
}

func (w *wireTask) task() (*a2a.Task, bool) {
	status, ok := w.Status.status()
	t := &a2a.Task{ID: w.ID, ContextID: w.ContextID, Metadata: w.Metadata, Status: status}
	if w.Artifacts != nil {
		t.Artifacts = make([]*a2a.Artifact, len(w.Artifacts))
		for i, a := range w.Artifacts {
			var good bool
			t.Artifacts[i], good = a.artifact()
			ok = ok && good
		}
	}
	if w.History != nil {
		t.History = make([]*a2a.Message, len(w.History))
		for i, m := range w.History {
			var good bool
			t.History[i], good = m.message()
			ok = ok && good
		}
	}
	return t, ok
}

type wireArtifact struct {
	ID          a2a.ArtifactID `json:"artifactId"`
	Description string         `json:"description"`
	Extensions  []string       `json:"extensions"`
	Metadata    map[string]any `json:"metadata"`
	Name        string         `json:"name"`
	Parts       []*wirePart    `json:"parts"`
}

func (w *wireArtifact) artifact() (*a2a.Artifact, bool) {
	if w == nil {
		return nil, true
	}
	parts, ok := contentParts(w.Parts)
	return &a2a.Artifact{ID: w.ID, Description: w.Description, Extensions: w.Extensions, Metadata: w.Metadata,
		Name: w.Name, Parts: parts}, ok
}

type wireStatusUpdate struct {
	ContextID string         `json:"contextId"`
	Status    wireStatus     `json:"status"`
	TaskID    a2a.TaskID     `json:"taskId"`
	Metadata  map[string]any `json:"metadata"`
}

func (w *wireStatusUpdate) statusUpdate() (*a2a.TaskStatusUpdateEvent, bool) {
	status, ok := w.Status.status()
	return &a2a.TaskStatusUpdateEvent{ContextID: w.ContextID, Status: status, TaskID: w.TaskID, Metadata: w.Metadata}, ok
}

type wireArtifactUpdate struct {
	Append    bool           `json:"append"`
	Artifact  *wireArtifact  `json:"artifact"`
	ContextID string         `json:"contextId"`
	LastChunk bool           `json:"lastChunk"`
	TaskID    a2a.TaskID     `json:"taskId"`
	Metadata  map[string]any `json:"metadata"`
}

func (w *wireArtifactUpdate) artifactUpdate() (*a2a.TaskArtifactUpdateEvent, bool) {
	a, ok := w.Artifact.artifact()
	return &a2a.TaskArtifactUpdateEvent{Append: w.Append, Artifact: a, ContextID: w.ContextID, LastChunk: w.LastChunk,
		TaskID: w.TaskID, Metadata: w.Metadata}, ok
}

// rpcStreamAnswer is a JSON-RPC answer whose result is a stream response.
type rpcStreamAnswer struct {
	JSONRPC string              `json:"jsonrpc"`
	ID      string              `json:"id"`
	Result  *wireStreamResponse `json:"result"`
	Error   json.RawMessage     `json:"error"`
}

// UnmarshalStreamAnswer decodes data, a JSON-RPC answer whose result is a
// stream response, in one pass: into sr when it holds a result, or else
// its error member's JSON in rpcErr. ok is false where that pass cannot
// decide (the answer is not of the shape {"jsonrpc":string, "id":string,
// "result"|"error"}, its result is not one the plain structs take, or
// data holds more than the answer); the caller then decodes data its own
// way, as it did before.
func UnmarshalStreamAnswer(data []byte, sr *a2a.StreamResponse) (rpcErr json.RawMessage, ok bool) {
	var w rpcStreamAnswer
	if !scanAnswer(data, &w) && !unmarshalAgain(data, &w) {
		return nil, false
	}
	if len(w.Error) > 0 && string(w.Error) != "null" {
		return w.Error, true
	}
	if w.Result == nil {
		return nil, false
	}
	e, ok := w.Result.event()
	if !ok {
		return nil, false
	}
	sr.Event = e
	return nil, true
}
