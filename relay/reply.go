package relay

import (
	"context"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// Reply is an agent's answer to a task, given through the owner API.
type Reply struct {
	Text string
	// State is the state the task moves to: completed (the default),
	// input-required, failed, rejected or working.
	State a2a.TaskState
	// Force allows answering a task that is already finished.
	Force bool
	// ArtifactName names the artifact a completing reply adds ("response"
	// when empty).
	ArtifactName string
}

// replyStates are the states a reply may set.
var replyStates = map[a2a.TaskState]bool{
	a2a.TaskStateCompleted:     true,
	a2a.TaskStateInputRequired: true,
	a2a.TaskStateFailed:        true,
	a2a.TaskStateRejected:      true,
	a2a.TaskStateWorking:       true,
}

// MaxReplyLen bounds the text of one reply.
const MaxReplyLen = 1 << 20

// ReplyToTask records an agent's answer: the text becomes an agent message in
// the history and the status message, and a completing reply also adds it
// as a text artifact. The artifact event (if any) and the status event are
// written with the task in one transaction, then watchers are told. A
// finished task refuses a reply (ECONFLICT) unless r.Force.
func (s *Service) ReplyToTask(ctx context.Context, id a2a.TaskID, r Reply) (*switchboard.Task, error) {
	if r.State == a2a.TaskStateUnspecified {
		r.State = a2a.TaskStateCompleted
	}
	if !replyStates[r.State] {
		return nil, switchboard.Errorf(switchboard.EINVALID, "state must be one of completed, input-required, failed, rejected, working")
	}
	if r.Text == "" && r.State != a2a.TaskStateWorking {
		return nil, switchboard.Errorf(switchboard.EINVALID, "text is required")
	}
	if len(r.Text) > MaxReplyLen {
		return nil, switchboard.Errorf(switchboard.ETOOLARGE, "text is longer than %d bytes", MaxReplyLen)
	}
	if r.ArtifactName == "" {
		r.ArtifactName = "response"
	}
	t, events, err := s.tasks.ModifyTask(ctx, id, func(t *switchboard.Task) (*switchboard.TaskChange, error) {
		if t.State().Terminal() && !r.Force {
			return nil, switchboard.Errorf(switchboard.ECONFLICT, "task %s is already %s (force to answer anyway)", t.ID(), switchboard.ShortState(t.State()))
		}
		change := s.applyReply(t, r)
		change.MaxBytes = switchboard.MaxTaskBytes
		return change, nil
	})
	if err != nil {
		return nil, taskNotFound(err)
	}
	s.notifyEvents(ctx, t, events)
	return t, nil
}

func (s *Service) applyReply(t *switchboard.Task, r Reply) *switchboard.TaskChange {
	var change switchboard.TaskChange
	var msg *a2a.Message
	if r.Text != "" {
		msg = agentText(t, r.Text)
		t.A2A.History = append(t.A2A.History, msg)
	}
	if r.State == a2a.TaskStateCompleted {
		art := s.addArtifact(t, &a2a.Artifact{ID: a2a.ArtifactID(switchboard.NewID()), Name: r.ArtifactName, Parts: a2a.ContentParts{a2a.NewTextPart(r.Text)}}, false)
		art.LastChunk = true
		change.Events = append(change.Events, art)
	}
	change.Events = append(change.Events, s.setStatus(t, r.State, msg))
	return &change
}
