package switchboard

import (
	"context"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Outbound is a message one of our agents sent to another A2A agent (on
// this deployment or anywhere else), and what has been learnt since about
// the task it started there: the record behind `switchboard outbox`, `poll`
// and pushes received at the agent's address.
//
// A record is written before the message is sent, so that a push arriving
// before the sender heard back finds it (by its push token), and a failed
// send is recorded too.
type Outbound struct {
	ID       string
	AgentID  string          // our agent, the sender
	Target   string          // what the sender named: an alias, a URL or a handle
	Endpoint string          // the JSON-RPC URL the message went to
	Protocol ProtocolVersion // the version spoken with the target
	// TaskID and ContextID are the remote task's; TaskID is empty until the
	// target answered with a task (or never, when it answered with a
	// message).
	TaskID    a2a.TaskID
	ContextID string
	MessageID string // the id of the message we sent
	Text      string // the text we sent
	// State is the remote task's last known state; TaskStateUnspecified
	// until the target answered.
	State a2a.TaskState
	// Task is the remote task as last seen (1.0 model), or nil.
	Task *a2a.Task
	// Reply is the target's answer when it answered with a message rather
	// than a task.
	Reply *a2a.Message
	// Error says why the send failed, when it did.
	Error string
	// Updates are the last MaxOutboundUpdates changes seen, oldest first.
	Updates []OutboundUpdate
	// PushTokenHash is HashToken of the token the target must present with
	// pushes about this task; empty when no push was asked for. The token
	// itself is never stored.
	PushTokenHash string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// OutboundUpdate is one change seen on a remote task.
type OutboundUpdate struct {
	At     time.Time     `json:"at"`
	Source string        `json:"source"` // OutboundFromSend, OutboundFromPoll or OutboundFromPush
	State  a2a.TaskState `json:"state,omitempty"`
	// Text is the text the change carried (status message, artifacts, or a
	// message): written by the remote agent, so untrusted.
	Text string `json:"text,omitempty"`
}

// Where an outbound update came from.
const (
	OutboundFromSend = "send" // the answer to the send itself
	OutboundFromPoll = "poll" // a GetTask made by the sender
	OutboundFromPush = "push" // a push notification from the target
)

// MaxOutboundUpdates is how many updates an outbound record keeps.
const MaxOutboundUpdates = 20

// MaxOutboundText bounds the text of one update as kept.
const MaxOutboundText = 16 << 10

// Bounds on the remote task an outbound record keeps (Outbound.Task), which
// every push and poll rewrites: a remote agent that pushes without end
// cannot grow the record. The rule, applied after each change: the task
// keeps its last MaxOutboundHistory history messages and its last
// MaxOutboundArtifacts artifacts, each with its last MaxOutboundArtifactParts
// parts; then, while its JSON is over MaxOutboundTaskBytes, the oldest
// history message goes, then the oldest artifact, then the task's
// metadata and the status message (whose text the updates keep, trimmed).
const (
	MaxOutboundHistory       = 20
	MaxOutboundArtifacts     = 20
	MaxOutboundArtifactParts = 64
	MaxOutboundTaskBytes     = 64 << 10
)

// OutboundFilter selects outbound records. Empty fields match everything.
type OutboundFilter struct {
	AgentID   string
	ContextID string
	TaskID    a2a.TaskID
	// Pending selects records whose target has not named its task yet.
	Pending bool
	// PushTokenHash selects records with this push token hash.
	PushTokenHash string
	// OldestFirst orders by creation time; default newest update first.
	OldestFirst bool
	Limit       int // 0: no limit
}

// OutboundStore keeps outbound records.
type OutboundStore interface {
	// CreateOutbound stores o; it returns ENOTFOUND if its agent does not
	// exist.
	CreateOutbound(ctx context.Context, o *Outbound) error

	// FindOutboundByID returns one record, or ENOTFOUND.
	FindOutboundByID(ctx context.Context, id string) (*Outbound, error)

	// FindOutbounds returns the records that match f.
	FindOutbounds(ctx context.Context, f OutboundFilter) ([]*Outbound, error)

	// ModifyOutbound reads the record, lets fn change it and writes it back,
	// in one transaction that no other change to the record interleaves
	// with. A wake request fn returns is queued in the same transaction, as
	// WakeStore.EnqueueWake does (nothing if the agent has no wake
	// configuration); wakeQueued reports whether it was. It returns the
	// record as stored, ENOTFOUND, or fn's error (and then writes nothing).
	ModifyOutbound(ctx context.Context, id string, fn func(*Outbound) (*WakeRequest, error)) (o *Outbound, wakeQueued bool, err error)
}

// ApplyTask records a remote task as seen from source at time at: the
// record takes its id (if it had none), context, state and the task itself,
// and an update is added.
func (o *Outbound) ApplyTask(t *a2a.Task, source string, at time.Time) {
	if t == nil {
		return
	}
	if o.TaskID == "" && ValidRemoteID(string(t.ID)) {
		o.TaskID = t.ID
	}
	if t.ContextID != "" && ValidRemoteID(t.ContextID) {
		o.ContextID = t.ContextID
	}
	if !o.outdated(t.Status) {
		o.State = t.Status.State
		o.Task = capRemoteTask(t)
	}
	o.addUpdate(OutboundUpdate{At: at, Source: source, State: t.Status.State, Text: remoteTaskText(t)})
}

// outdated reports whether a status seen now is older than what the record
// holds: the answer to a send may be recorded after pushes that came
// during the call, and must not take the record back. A status stamped
// before the recorded one is outdated, and so is any unfinished status once
// the record holds a final one (a finished task never starts again).
func (o *Outbound) outdated(st a2a.TaskStatus) bool {
	if o.State.Terminal() && !st.State.Terminal() {
		return true
	}
	if o.Task != nil && o.Task.Status.Timestamp != nil && st.Timestamp != nil {
		return st.Timestamp.Before(*o.Task.Status.Timestamp)
	}
	return false
}

// ApplyEvent records one event about the remote task (a task, a status or
// artifact update, or a message) as seen from source at time at.
func (o *Outbound) ApplyEvent(ev a2a.Event, source string, at time.Time) {
	switch e := ev.(type) {
	case *a2a.Task:
		o.ApplyTask(e, source, at)
	case *a2a.TaskStatusUpdateEvent:
		if o.TaskID == "" && ValidRemoteID(string(e.TaskID)) {
			o.TaskID = e.TaskID
		}
		if o.ContextID == "" && ValidRemoteID(e.ContextID) {
			o.ContextID = e.ContextID
		}
		if !o.outdated(e.Status) {
			o.State = e.Status.State
			if o.Task != nil && o.Task.ID == e.TaskID {
				o.Task.Status = e.Status
				if e.Status.Message != nil {
					o.Task.History = append(o.Task.History, e.Status.Message)
				}
				o.Task = capRemoteTask(o.Task)
			}
		}
		text := ""
		if e.Status.Message != nil {
			text = MessageText(e.Status.Message)
		}
		o.addUpdate(OutboundUpdate{At: at, Source: source, State: e.Status.State, Text: text})
	case *a2a.TaskArtifactUpdateEvent:
		if o.TaskID == "" && ValidRemoteID(string(e.TaskID)) {
			o.TaskID = e.TaskID
		}
		if o.Task != nil && o.Task.ID == e.TaskID && e.Artifact != nil {
			o.Task.Artifacts = appendArtifact(o.Task.Artifacts, e)
			o.Task = capRemoteTask(o.Task)
		}
		text := ""
		if e.Artifact != nil {
			text = partsText(e.Artifact.Parts)
		}
		o.addUpdate(OutboundUpdate{At: at, Source: source, State: o.State, Text: text})
	case *a2a.Message:
		if o.TaskID == "" && ValidRemoteID(string(e.TaskID)) {
			o.TaskID = e.TaskID
		}
		if o.TaskID == "" {
			// An answer without a task ends the exchange.
			o.Reply = messageContent(e)
			o.State = a2a.TaskStateCompleted
		}
		if o.ContextID == "" && ValidRemoteID(e.ContextID) {
			o.ContextID = e.ContextID
		}
		o.addUpdate(OutboundUpdate{At: at, Source: source, State: o.State, Text: MessageText(e)})
	}
}

// appendArtifact adds an artifact update to a task's artifacts: a chunk
// with Append extends the artifact of the same id, anything else replaces
// or adds it.
func appendArtifact(arts []*a2a.Artifact, e *a2a.TaskArtifactUpdateEvent) []*a2a.Artifact {
	for i, a := range arts {
		if a != nil && a.ID == e.Artifact.ID {
			if e.Append {
				cp := *a
				cp.Parts = append(append(a2a.ContentParts{}, a.Parts...), e.Artifact.Parts...)
				arts[i] = &cp
			} else {
				arts[i] = e.Artifact
			}
			return arts
		}
	}
	return append(arts, e.Artifact)
}

// capRemoteTask applies the bounds on a kept remote task (see
// MaxOutboundTaskBytes), leaves out parts without content, and returns it.
// It copies what it shortens: t may be shared with the caller.
func capRemoteTask(t *a2a.Task) *a2a.Task {
	if t == nil {
		return nil
	}
	cp := *t
	t = &cp
	keepTaskContent(t)
	if n := len(t.History) - MaxOutboundHistory; n > 0 {
		t.History = append([]*a2a.Message(nil), t.History[n:]...)
	}
	if n := len(t.Artifacts) - MaxOutboundArtifacts; n > 0 {
		t.Artifacts = append([]*a2a.Artifact(nil), t.Artifacts[n:]...)
	}
	if len(t.Artifacts) > 0 {
		arts := append([]*a2a.Artifact(nil), t.Artifacts...)
		for i, a := range arts {
			if a != nil && len(a.Parts) > MaxOutboundArtifactParts {
				ac := *a
				ac.Parts = append(a2a.ContentParts(nil), a.Parts[len(a.Parts)-MaxOutboundArtifactParts:]...)
				arts[i] = &ac
			}
		}
		t.Artifacts = arts
	}
	// Each element dropped takes its JSON and a comma off the size.
	size := jsonSize(t)
	for size > MaxOutboundTaskBytes {
		switch {
		case len(t.History) > 0:
			size -= jsonSize(t.History[0]) + 1
			t.History = t.History[1:]
		case len(t.Artifacts) > 0:
			size -= jsonSize(t.Artifacts[0]) + 1
			t.Artifacts = t.Artifacts[1:]
		case t.Metadata != nil:
			t.Metadata = nil
			size = jsonSize(t)
		case t.Status.Message != nil:
			t.Status.Message = nil
			size = jsonSize(t)
		default:
			return t
		}
	}
	return t
}

// keepTaskContent leaves the parts without content out of t's messages and
// artifacts, copying each slice it changes.
func keepTaskContent(t *a2a.Task) {
	t.Status.Message = messageContent(t.Status.Message)
	t.History = mapChanged(t.History, messageContent)
	t.Artifacts = mapChanged(t.Artifacts, artifactContent)
}

// jsonSize is the size of v's JSON as kept.
func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0 // the store reports it when it encodes the record
	}
	return len(b)
}

func (o *Outbound) addUpdate(u OutboundUpdate) {
	if len(u.Text) > MaxOutboundText {
		u.Text = truncateUTF8(u.Text, MaxOutboundText) + "…"
	}
	o.Updates = append(o.Updates, u)
	if n := len(o.Updates) - MaxOutboundUpdates; n > 0 {
		o.Updates = append([]OutboundUpdate(nil), o.Updates[n:]...)
	}
	if u.At.After(o.UpdatedAt) {
		o.UpdatedAt = u.At
	}
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xc0 == 0x80 {
		n--
	}
	return s[:n]
}

// remoteTaskText is what a remote task says to us: its status message, or
// else its artifacts' text.
func remoteTaskText(t *a2a.Task) string {
	if t.Status.Message != nil && t.Status.Message.Role == a2a.MessageRoleAgent {
		if s := MessageText(t.Status.Message); s != "" {
			return s
		}
	}
	var texts []string
	for _, a := range t.Artifacts {
		if a != nil {
			if s := partsText(a.Parts); s != "" {
				texts = append(texts, s)
			}
		}
	}
	return strings.Join(texts, "\n")
}

// partsText joins the text parts with newlines.
func partsText(parts a2a.ContentParts) string {
	return MessageText(&a2a.Message{Parts: parts})
}

// ValidRemoteID reports whether s may be kept as the id of a remote task or
// context: 1 to MaxContextIDLen printable characters, no controls.
func ValidRemoteID(s string) bool {
	if s == "" || len(s) > MaxContextIDLen || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// LastText returns the text of the record's latest update, if any.
func (o *Outbound) LastText() string {
	if n := len(o.Updates); n > 0 {
		return o.Updates[n-1].Text
	}
	return ""
}

// WakeRequest is the outbound_update wake that tells the sending agent its
// sent task changed: from the target it named, with a preview of the
// update's text (the remote agent's words: untrusted, redacted and trimmed
// when queued).
func (o *Outbound) WakeRequest() WakeRequest {
	preview := "[update on outbound task: " + ShortState(o.State) + "]"
	if text := o.LastText(); text != "" {
		preview += " " + text
	}
	return WakeRequest{AgentID: o.AgentID, ContextID: o.ContextID, TaskID: o.TaskID,
		Kind: WakeOutboundUpdate, From: o.Target, Preview: preview}
}
