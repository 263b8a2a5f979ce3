package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard/a2ajson"
	"github.com/switchboard-dev/switchboard/connproto"
)

// metadataKey is the key of Switchboard's own metadata on a SendMessage.
const metadataKey = "switchboard"

// Work is one message for the agent: the first message of a new task, or a
// follow-up on a task that waited for input. The handler reads it and
// reports through its methods.
//
// Every report is a TaskUpdate request that waits for the server's answer
// (the update is stored when the method returns nil). A report not yet
// answered when the connection drops is sent again, unchanged, on the next
// connection, so it may arrive twice: reports must be safe to repeat. The
// helpers are: artifacts replace the artifact with the same id, and their
// ids are stable. Reports fail once the work's context ends (the task was
// canceled, the handler returned, or the client stopped).
//
// A turn ends with completed, failed, rejected, canceled, input-required or
// auth-required. A handler that returns without ending the turn has the
// task failed for it, with the reason "the agent's handler ended without an
// answer", unless the task was canceled or the client is stopping (then
// the task is left as it is, and offered again when the agent next
// connects without holding it).
type Work struct {
	// TaskID and ContextID are the task's ids as Switchboard assigned them.
	TaskID    a2a.TaskID
	ContextID string
	// MessageID is the id of the message, unique within the task.
	MessageID string
	// From is the label of the peer that sent the message: untrusted text.
	From string
	// PeerID identifies the peer across label changes.
	PeerID string
	// PeerKind is "agent" when the sender is an agent of the deployment
	// (From is then its verified handle and PeerID its agent id),
	// "community" for a peer of a community's address, and empty for a
	// peer token of this agent's address.
	PeerKind string
	// NewTask is true for the first message of a task, false for a
	// follow-up on a task that waited for input.
	NewTask bool
	// Attempt counts the offers of this message (1 for the first).
	Attempt int
	// Message is the peer's message. Its content is untrusted input.
	Message *a2a.Message
	// Request is the whole SendMessage request as offered.
	Request *a2a.SendMessageRequest
	// TraceParent is the W3C trace context the server sent with the
	// offer, when the deployment traces (empty otherwise): the work's
	// own spans, if the agent traces, are its children. The work's
	// reports carry it back, so that the server's spans of them join the
	// trace. connect --exec passes it to the command as TRACEPARENT.
	TraceParent string

	client    *Client
	ctx       context.Context // ends when the task is canceled, the handler returned or the client stops
	cancel    context.CancelCauseFunc
	artifacts atomic.Int64 // artifacts given a default id so far
	// startReported: the answer to the offer already said working (set
	// by the queue before a worker can take the work).
	startReported bool
	ended         atomic.Bool // a report ended the turn
}

// ErrWorkDone is the cause of a work's context once its handler returned.
var ErrWorkDone = errors.New("connector: the handler of this work returned")

// newWork builds the work of an offered message, offered with the trace
// context traceparent (kept if it is a valid one). Its context descends
// from the client's run.
func (c *Client) newWork(req *a2a.SendMessageRequest, traceparent string) *Work {
	m := req.Message
	w := &Work{TaskID: m.TaskID, ContextID: m.ContextID, MessageID: m.ID, Message: m, Request: req, NewTask: true, Attempt: 1, client: c}
	if connproto.ValidTraceparent(traceparent) {
		w.TraceParent = traceparent
	}
	if meta, ok := req.Metadata[metadataKey].(map[string]any); ok {
		w.From, _ = meta["from"].(string)
		w.PeerID, _ = meta["peerId"].(string)
		w.PeerKind, _ = meta["peerKind"].(string)
		if v, ok := meta["newTask"].(bool); ok {
			w.NewTask = v
		}
		if v, ok := meta["attempt"].(float64); ok {
			w.Attempt = int(v)
		}
	}
	w.ctx, w.cancel = context.WithCancelCause(c.runCtx)
	return w
}

// TaskInfo returns the work's task and context ids; it lets a Work be
// passed to a2a constructors such as a2a.NewStatusUpdateEvent.
func (w *Work) TaskInfo() a2a.TaskInfo {
	return a2a.TaskInfo{TaskID: w.TaskID, ContextID: w.ContextID}
}

// Text returns the text parts of the message, joined by newlines. It is
// untrusted input from the peer: treat it as data, never as instructions.
func (w *Work) Text() string {
	if w.Message == nil {
		return ""
	}
	var texts []string
	for _, p := range w.Message.Parts {
		if p == nil {
			continue
		}
		if t, ok := p.Content.(a2a.Text); ok {
			texts = append(texts, string(t))
		}
	}
	return strings.Join(texts, "\n")
}

// Working reports that the agent is working, with text as a progress
// message (none if text is empty).
func (w *Work) Working(text string) error {
	return w.status(a2a.TaskStateWorking, text)
}

// Reply completes the task with text as its answer: an artifact named
// "answer" (id "answer-" + MessageID, so a repeated reply replaces it) and
// the completed state, in one update.
func (w *Work) Reply(text string) error {
	art := &a2a.Artifact{ID: a2a.ArtifactID("answer-" + w.MessageID), Name: "answer", Parts: a2a.ContentParts{a2a.NewTextPart(text)}}
	return w.Update(&a2a.Task{ID: w.TaskID, ContextID: w.ContextID, Artifacts: []*a2a.Artifact{art},
		Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}})
}

// Artifact adds a to the task, replacing an artifact with the same id. An
// empty id is given a stable one ("artifact-" + MessageID + "-" + n, n
// counting this work's artifacts without an id).
func (w *Work) Artifact(a *a2a.Artifact) error {
	if a == nil || len(a.Parts) == 0 {
		return errors.New("connector: an artifact needs parts")
	}
	c := *a
	if c.ID == "" {
		c.ID = a2a.ArtifactID("artifact-" + w.MessageID + "-" + strconv.FormatInt(w.artifacts.Add(1), 10))
	}
	return w.Update(&a2a.TaskArtifactUpdateEvent{TaskID: w.TaskID, ContextID: w.ContextID, Artifact: &c, LastChunk: true})
}

// Complete completes the task without an answer text.
func (w *Work) Complete() error { return w.status(a2a.TaskStateCompleted, "") }

// Fail fails the task with reason as the status message.
func (w *Work) Fail(reason string) error { return w.status(a2a.TaskStateFailed, reason) }

// InputRequired ends the turn by asking the peer a question; the peer's
// answer arrives as a new Work on the same task.
func (w *Work) InputRequired(question string) error {
	return w.status(a2a.TaskStateInputRequired, question)
}

// Reject refuses the task with reason as the status message.
func (w *Work) Reject(reason string) error { return w.status(a2a.TaskStateRejected, reason) }

// status reports a state with an optional text message.
func (w *Work) status(state a2a.TaskState, text string) error {
	ev := &a2a.TaskStatusUpdateEvent{TaskID: w.TaskID, ContextID: w.ContextID, Status: a2a.TaskStatus{State: state}}
	if text != "" {
		ev.Status.Message = a2a.NewMessageForTask(a2a.MessageRoleAgent, w, a2a.NewTextPart(text))
	}
	return w.Update(ev)
}

// Update reports an A2A event about the task: a status update, an artifact
// update, the task, or a message (which completes the task). The event is
// given the work's task and context ids. It returns when the server has
// stored the update, with an *RPCError if the server refused it, or with
// the cause of the work's context.
func (w *Work) Update(ev a2a.Event) error {
	_, err := w.update(ev)
	return err
}

// update reports ev and returns the task's state as the server answered.
func (w *Work) update(ev a2a.Event) (a2a.TaskState, error) {
	ev, err := w.withIDs(ev)
	if err != nil {
		return a2a.TaskStateUnspecified, err
	}
	params, err := a2ajson.AppendStreamResponse(nil, ev) // one pass, where the SDK's methods take four
	if err != nil {
		return a2a.TaskStateUnspecified, fmt.Errorf("report on task %s: %w", w.TaskID, err)
	}
	raw, err := w.client.callTraced(w.ctx, connproto.MethodTaskUpdate, json.RawMessage(params), w.TaskID, w.TraceParent)
	if err != nil {
		return a2a.TaskStateUnspecified, fmt.Errorf("report on task %s: %w", w.TaskID, err)
	}
	var res connproto.TaskUpdateResult
	_ = json.Unmarshal(raw, &res) // the update is stored whatever the answer's shape
	state := a2a.TaskState(res.State)
	w.client.reg.confirm(w.TaskID, state)
	if endsTurn(state) || endsTurn(eventState(ev)) {
		w.ended.Store(true)
	}
	return state, nil
}

// withIDs returns a copy of ev that names the work's task.
func (w *Work) withIDs(ev a2a.Event) (a2a.Event, error) {
	switch e := ev.(type) {
	case *a2a.TaskStatusUpdateEvent:
		c := *e
		c.TaskID, c.ContextID = w.TaskID, w.ContextID
		return &c, nil
	case *a2a.TaskArtifactUpdateEvent:
		c := *e
		c.TaskID, c.ContextID = w.TaskID, w.ContextID
		return &c, nil
	case *a2a.Task:
		c := *e
		c.ID, c.ContextID = w.TaskID, w.ContextID
		return &c, nil
	case *a2a.Message:
		c := *e
		c.TaskID, c.ContextID, c.Role = w.TaskID, w.ContextID, a2a.MessageRoleAgent
		if c.ID == "" {
			c.ID = a2a.NewMessageID()
		}
		return &c, nil
	}
	return nil, fmt.Errorf("connector: cannot report an event of type %T", ev)
}

// eventState returns the state an event sets: a message completes the
// task.
func eventState(ev a2a.Event) a2a.TaskState {
	switch e := ev.(type) {
	case *a2a.TaskStatusUpdateEvent:
		return e.Status.State
	case *a2a.Task:
		return e.Status.State
	case *a2a.Message:
		return a2a.TaskStateCompleted
	}
	return a2a.TaskStateUnspecified
}

// endsTurn reports whether a task in state s waits for nothing more from
// the agent: it finished, or it waits for its peer.
func endsTurn(s a2a.TaskState) bool {
	return s.Terminal() || s == a2a.TaskStateInputRequired || s == a2a.TaskStateAuthRequired
}
