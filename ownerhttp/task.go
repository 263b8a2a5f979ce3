package ownerhttp

import (
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/network"
	"github.com/switchboard-dev/switchboard/ownerapi"
	"github.com/switchboard-dev/switchboard/relay"
)

// viewTask is a task as the owner API shows it, with its agent g.
func viewTask(t *switchboard.Task, g *switchboard.Agent) ownerapi.Task {
	return ownerapi.Task{
		ID: string(t.ID()), AgentID: t.AgentID, Agent: g.Handle, From: t.PeerLabel, ContextID: t.A2A.ContextID,
		State: switchboard.ShortState(t.State()), Protocol: string(t.Protocol), Text: relay.LastUserText(&t.A2A),
		Seq: t.Seq, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, Task: &t.A2A,
	}
}

func (s *Face) handleInbox(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, err := s.OwnedAgent(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	q := r.URL.Query()
	page, err := s.Tasks.Inbox(r.Context(), g.ID, relay.InboxQuery{All: q.Get("all") != "", Cursor: q.Get("cursor")})
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	items := make([]ownerapi.InboxTask, 0, len(page.Tasks))
	for _, t := range page.Tasks {
		items = append(items, ownerapi.InboxTask{
			ID: string(t.ID()), ContextID: t.A2A.ContextID, From: t.PeerLabel, State: switchboard.ShortState(t.State()),
			Text: relay.LastUserText(&t.A2A), CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt,
		})
	}
	httpapi.WriteJSON(w, http.StatusOK, ownerapi.Inbox{Agent: g.Handle, Tasks: items, NextCursor: page.NextCursor})
}

// ownedTask finds the task named by the {id} of the path if the account
// owns its agent; otherwise it reports the task as not found.
func (s *Face) ownedTask(r *http.Request, acct *switchboard.Account) (*switchboard.Task, *switchboard.Agent, error) {
	t, err := s.Tasks.FindTaskUnscoped(r.Context(), a2a.TaskID(r.PathValue("id")))
	if err != nil {
		return nil, nil, err
	}
	g, err := s.Agents.FindAgentByID(r.Context(), t.AgentID)
	if err != nil {
		return nil, nil, err
	}
	if !acct.IsOperator() && g.AccountID != acct.ID {
		return nil, nil, switchboard.Errorf(switchboard.ENOTFOUND, "task not found")
	}
	return t, g, nil
}

func (s *Face) handleGetTask(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	t, g, err := s.ownedTask(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, viewTask(t, g))
}

func (s *Face) handleReply(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	_, g, err := s.ownedTask(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	var body ownerapi.Reply
	if err := s.DecodeJSON(w, r, &body); err != nil {
		s.WriteError(w, r, err)
		return
	}
	reply := relay.Reply{Text: body.Text, Force: body.Force, ArtifactName: body.ArtifactName}
	if body.State != "" {
		st, ok := switchboard.ParseState(body.State)
		if !ok {
			s.WriteError(w, r, switchboard.Errorf(switchboard.EINVALID, "state must be one of completed, input-required, failed, rejected, working"))
			return
		}
		reply.State = st
	}
	t, err := s.Tasks.ReplyToTask(r.Context(), a2a.TaskID(r.PathValue("id")), reply)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, viewTask(t, g))
}

// handleGetTaskAny is GET /tasks/{id}: for an owner token, a task of one of
// its agents (any, for the operator); for an agent token, a task the agent
// sent to another agent of the network. Any other is "task not found".
func (s *Face) handleGetTaskAny(w http.ResponseWriter, r *http.Request) {
	acct, agent, err := s.AuthenticateOwnerOrAgent(r)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	if acct != nil {
		s.handleGetTask(w, r, acct)
		return
	}
	t, err := s.Tasks.GetTask(r.Context(), network.AgentPeer(agent), a2a.TaskID(r.PathValue("id")))
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	g, err := s.Agents.FindAgentByID(r.Context(), t.AgentID)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, viewTask(t, g))
}
