package outbox

import (
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

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

// ApplyTask records a remote task as seen from source at time at: the
// record takes its id (if it had none), context, state and the task itself,
// and an update is added.
func ApplyTask(o *switchboard.Outbound, t *a2a.Task, source string, at time.Time) {
	if t == nil {
		return
	}
	if o.TaskID == "" && ValidRemoteID(string(t.ID)) {
		o.TaskID = t.ID
	}
	if t.ContextID != "" && ValidRemoteID(t.ContextID) {
		o.ContextID = t.ContextID
	}
	if !outboundOutdated(o, t.Status) {
		o.State = t.Status.State
		o.Task = capRemoteTask(t)
	}
	addOutboundUpdate(o, switchboard.OutboundUpdate{At: at, Source: source, State: t.Status.State, Text: remoteTaskText(t)})
}

// outboundOutdated reports whether a status seen now is older than what the record
// holds: the answer to a send may be recorded after pushes that came
// during the call, and must not take the record back. A status stamped
// before the recorded one is outdated, and so is any unfinished status once
// the record holds a final one (a finished task never starts again).
func outboundOutdated(o *switchboard.Outbound, st a2a.TaskStatus) bool {
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
func ApplyEvent(o *switchboard.Outbound, ev a2a.Event, source string, at time.Time) {
	switch e := ev.(type) {
	case *a2a.Task:
		ApplyTask(o, e, source, at)
	case *a2a.TaskStatusUpdateEvent:
		if o.TaskID == "" && ValidRemoteID(string(e.TaskID)) {
			o.TaskID = e.TaskID
		}
		if o.ContextID == "" && ValidRemoteID(e.ContextID) {
			o.ContextID = e.ContextID
		}
		if !outboundOutdated(o, e.Status) {
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
			text = switchboard.MessageText(e.Status.Message)
		}
		addOutboundUpdate(o, switchboard.OutboundUpdate{At: at, Source: source, State: e.Status.State, Text: text})
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
		addOutboundUpdate(o, switchboard.OutboundUpdate{At: at, Source: source, State: o.State, Text: text})
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
		addOutboundUpdate(o, switchboard.OutboundUpdate{At: at, Source: source, State: o.State, Text: switchboard.MessageText(e)})
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

func addOutboundUpdate(o *switchboard.Outbound, u switchboard.OutboundUpdate) {
	if len(u.Text) > switchboard.MaxOutboundText {
		u.Text = truncateUTF8(u.Text, switchboard.MaxOutboundText) + "…"
	}
	o.Updates = append(o.Updates, u)
	if n := len(o.Updates) - switchboard.MaxOutboundUpdates; n > 0 {
		o.Updates = append([]switchboard.OutboundUpdate(nil), o.Updates[n:]...)
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
		if s := switchboard.MessageText(t.Status.Message); s != "" {
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
	return switchboard.MessageText(&a2a.Message{Parts: parts})
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
func LastText(o *switchboard.Outbound) string {
	if n := len(o.Updates); n > 0 {
		return o.Updates[n-1].Text
	}
	return ""
}

// WakeRequest is the outbound_update wake that tells the sending agent its
// sent task changed: from the target it named, with a preview of the
// update's text (the remote agent's words: untrusted, redacted and trimmed
// when queued).
func WakeRequest(o *switchboard.Outbound) switchboard.WakeRequest {
	preview := "[update on outbound task: " + switchboard.ShortState(o.State) + "]"
	if text := LastText(o); text != "" {
		preview += " " + text
	}
	return switchboard.WakeRequest{AgentID: o.AgentID, ContextID: o.ContextID, TaskID: o.TaskID,
		Kind: switchboard.WakeOutboundUpdate, From: o.Target, Preview: preview}
}
