package outbox

import (
	"context"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// ConversationEntry is one message of a conversation (a contextId) as one
// of our agents saw it, in either direction.
type ConversationEntry struct {
	At time.Time `json:"at"`
	// Direction is "in" (to our agent) or "out" (from it).
	Direction string `json:"direction"`
	// Kind says what the entry is:
	//   "message": a peer's message to our agent (in; untrusted)
	//   "reply":   our agent's answer to it (out)
	//   "sent":    a message our agent sent to another agent (out)
	//   "answer":  that agent's answer (in; untrusted)
	Kind   string        `json:"kind"`
	TaskID a2a.TaskID    `json:"task_id"`
	Peer   string        `json:"peer"` // the peer's label (inbound) or the target (outbound)
	State  a2a.TaskState `json:"state,omitempty"`
	Text   string        `json:"text"`
	// Untrusted marks text another agent wrote: data, never instructions.
	Untrusted bool `json:"untrusted"`
	// OutboundID names the outbound record of "sent" and "answer" entries.
	OutboundID string `json:"outbound_id,omitempty"`
}

// Limits of a conversation listing.
const (
	DefaultConversationEntries = 50
	MaxConversationEntries     = 1000
	maxConversationTasks       = 200 // tasks of each direction read: the most recently active
	maxConversationEvents      = 200 // events read per task: its latest
)

// Conversation returns the last n entries (oldest first) of a conversation
// of an agent in both directions: the messages a peer sent it in tasks of
// that contextId and its replies, and what it sent other agents in that
// context and their answers. A conversation belongs to the peer that
// started it: two peers that chose the same contextId hold two
// conversations, and peer (a label) says whose; without it, a context
// that more than one peer used is refused (ECONFLICT, naming them), so
// that one peer's messages never appear in another's conversation. It
// reads the maxConversationTasks most recently active tasks and outbound
// records of each direction, and the latest maxConversationEvents events
// of each task (older messages of a longer task take the time of the
// message before them).
func (s *Service) Conversation(ctx context.Context, agentID, contextID, peer string, n int) ([]ConversationEntry, error) {
	if contextID == "" || len(contextID) > MaxContextIDLen {
		return nil, switchboard.Errorf(switchboard.EINVALID, "contextId is required (at most %d characters)", MaxContextIDLen)
	}
	if n <= 0 {
		n = DefaultConversationEntries
	}
	if n > MaxConversationEntries {
		n = MaxConversationEntries
	}
	var entries []ConversationEntry
	// Newest first, so that the limit keeps the latest; the entries are
	// put in order of time below.
	f := switchboard.TaskFilter{AgentID: &agentID, ContextID: &contextID, Limit: maxConversationTasks, NoTotal: true}
	if peer != "" {
		f.PeerLabel = &peer
	}
	tasks, _, err := s.tasks.FindTasks(ctx, f)
	if err != nil {
		return nil, err
	}
	if err := onePeer(tasks, contextID); err != nil {
		return nil, err
	}
	slices.Reverse(tasks)
	for _, t := range tasks {
		evs, err := s.tasks.FindTaskEvents(ctx, t.ID(), max(t.Seq-maxConversationEvents, 0), maxConversationEvents)
		if err != nil {
			return nil, err
		}
		entries = append(entries, inboundEntries(t, evs)...)
	}
	outs, err := s.outbox.FindOutbounds(ctx, switchboard.OutboundFilter{AgentID: agentID, ContextID: contextID, Limit: maxConversationTasks})
	if err != nil {
		return nil, err
	}
	slices.Reverse(outs)
	for _, o := range outs {
		entries = append(entries, outboundEntries(o)...)
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].At.Before(entries[j].At) })
	if len(entries) > n {
		entries = entries[len(entries)-n:]
	}
	return entries, nil
}

// inboundEntries lists the messages of a task peers sent to our agent, in
// the order of its history. Messages carry no time of their own; each gets
// the time of the event that brought it (the task's creation, the status
// update that carried it, or, for a peer's follow-up, the next return to
// submitted), and never an earlier time than the message before it.
func inboundEntries(t *switchboard.Task, evs []*switchboard.TaskEvent) []ConversationEntry {
	at := make(map[string]time.Time)
	var followUps []time.Time
	for _, ev := range evs {
		switch e := ev.Event.(type) {
		case *a2a.Task:
			for _, m := range e.History {
				if m != nil {
					at[m.ID] = ev.CreatedAt
				}
			}
		case *a2a.TaskStatusUpdateEvent:
			if e.Status.Message != nil {
				at[e.Status.Message.ID] = ev.CreatedAt
			} else if e.Status.State == a2a.TaskStateSubmitted {
				followUps = append(followUps, ev.CreatedAt)
			}
		}
	}
	last := t.CreatedAt
	var out []ConversationEntry
	agentSpoke := false
	for _, m := range t.A2A.History {
		if m == nil {
			continue
		}
		when, ok := at[m.ID]
		if !ok && m.Role == a2a.MessageRoleUser && len(followUps) > 0 {
			when, followUps = followUps[0], followUps[1:]
			ok = true
		}
		if !ok || when.Before(last) {
			when = last
		}
		last = when
		e := ConversationEntry{At: when, TaskID: t.ID(), Peer: t.PeerLabel, Text: switchboard.MessageText(m)}
		if m.Role == a2a.MessageRoleAgent {
			e.Direction, e.Kind = "out", "reply"
			agentSpoke = true
		} else {
			e.Direction, e.Kind, e.Untrusted = "in", "message", true
		}
		out = append(out, e)
	}
	if !agentSpoke {
		// Agents that answer with artifacts only.
		for _, a := range t.A2A.Artifacts {
			if a != nil {
				if txt := partsText(a.Parts); txt != "" {
					out = append(out, ConversationEntry{At: t.UpdatedAt, Direction: "out", Kind: "reply", TaskID: t.ID(), Peer: t.PeerLabel, Text: txt})
				}
			}
		}
	}
	if n := len(out); n > 0 {
		out[n-1].State = t.State()
	}
	return out
}

// outboundEntries lists what our agent sent and the answers recorded.
func outboundEntries(o *switchboard.Outbound) []ConversationEntry {
	out := []ConversationEntry{{At: o.CreatedAt, Direction: "out", Kind: "sent", TaskID: o.TaskID, Peer: o.Target, Text: o.Text, OutboundID: o.ID}}
	prev := ""
	for _, u := range o.Updates {
		if u.Text == "" || u.Text == prev {
			continue
		}
		prev = u.Text
		out = append(out, ConversationEntry{At: u.At, Direction: "in", Kind: "answer", TaskID: o.TaskID, Peer: o.Target, State: u.State, Text: u.Text, Untrusted: true, OutboundID: o.ID})
	}
	return out
}

// onePeer refuses tasks of one context that came from more than one peer:
// their conversations must be asked for one at a time.
func onePeer(tasks []*switchboard.Task, contextID string) error {
	var labels []string
	seen := map[string]bool{}
	for _, t := range tasks {
		if !seen[t.PeerID] {
			seen[t.PeerID] = true
			labels = append(labels, t.PeerLabel)
		}
	}
	if len(labels) < 2 {
		return nil
	}
	slices.Sort(labels)
	return switchboard.Errorf(switchboard.ECONFLICT, "contextId %s names conversations with %d peers (%s): choose one with peer",
		contextID, len(labels), strings.Join(slices.Compact(labels), ", "))
}
