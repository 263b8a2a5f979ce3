package ownerhttp

import (
	"net/http"
	"strconv"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/outbox"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// viewOutbound is an outbound record of the agent g as the owner API shows
// it.
func (s *Face) viewOutbound(r *http.Request, o *switchboard.Outbound, g *switchboard.Agent) ownerapi.Outbound {
	v := ownerapi.Outbound{
		ID: o.ID, AgentID: o.AgentID, Agent: g.Handle, Target: o.Target, Endpoint: o.Endpoint, Protocol: string(o.Protocol),
		TaskID: string(o.TaskID), ContextID: o.ContextID, MessageID: o.MessageID, State: outboundState(o.State), Text: o.Text,
		Error: o.Error, Push: o.PushTokenHash != "", Task: o.Task, Reply: o.Reply,
		Updates: make([]ownerapi.OutboundUpdate, 0, len(o.Updates)), CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt,
	}
	if v.Push {
		v.PushURL = s.PushURL(r, g)
	}
	for _, u := range o.Updates {
		v.Updates = append(v.Updates, ownerapi.OutboundUpdate{At: u.At, Source: u.Source, State: string(u.State), Text: u.Text})
	}
	return v
}

// outboundState names a remote task's state; "sent" before the target
// answered.
func outboundState(st a2a.TaskState) string {
	if st == a2a.TaskStateUnspecified {
		return "sent"
	}
	return switchboard.ShortState(st)
}

// PushURL is where other agents push notifications about tasks the agent
// sent: its address on the deployment, {base}/a/{handle}, plus /push.
// Never its agent domain's: a push must reach the agent whether or not
// the domain's DNS points here yet.
func (s *Face) PushURL(r *http.Request, g *switchboard.Agent) string {
	return s.BaseURL(r) + "/a/" + g.Handle + "/push"
}

// handleCreateOutbound records a message the agent is about to send:
// POST /agents/{ref}/outbox {target, endpoint, protocol, context_id,
// task_id, message_id, text, push_token}. Only the push token's hash is
// kept. The answer carries the record's id and, with a push token, the
// push_url to register with the target.
func (s *Face) handleCreateOutbound(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, err := s.OwnedAgent(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	var body ownerapi.OutboundCreate
	if err := s.DecodeJSON(w, r, &body); err != nil {
		s.WriteError(w, r, err)
		return
	}
	o := &switchboard.Outbound{
		AgentID: g.ID, Target: body.Target, Endpoint: body.Endpoint, Protocol: switchboard.ProtocolVersion(body.Protocol),
		ContextID: body.ContextID, TaskID: a2a.TaskID(body.TaskID), MessageID: body.MessageID, Text: body.Text,
	}
	if err := s.Outbox.Record(r.Context(), o, body.PushToken); err != nil {
		s.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusCreated, s.viewOutbound(r, o, g))
}

func (s *Face) handleListOutbound(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, err := s.OwnedAgent(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	all, err := s.Outbox.List(r.Context(), g.ID, limit)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	views := make([]ownerapi.Outbound, 0, len(all))
	for _, o := range all {
		views = append(views, s.viewOutbound(r, o, g))
	}
	httpapi.WriteJSON(w, http.StatusOK, ownerapi.Outbox{Agent: g.Handle, Outbox: views})
}

// ownedOutbound finds the record named by the {id} of the path if the
// account owns its agent; otherwise it reports it as not found.
func (s *Face) ownedOutbound(r *http.Request, acct *switchboard.Account) (*switchboard.Outbound, *switchboard.Agent, error) {
	notFound := switchboard.Errorf(switchboard.ENOTFOUND, "outbound record not found")
	o, err := s.Outbox.Find(r.Context(), r.PathValue("id"))
	if err != nil {
		return nil, nil, err
	}
	g, err := s.Agents.FindAgentByID(r.Context(), o.AgentID)
	if err != nil {
		return nil, nil, err
	}
	if !acct.IsOperator() && g.AccountID != acct.ID {
		return nil, nil, notFound
	}
	return o, g, nil
}

func (s *Face) handleGetOutbound(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	o, g, err := s.ownedOutbound(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, s.viewOutbound(r, o, g))
}

// handleUpdateOutbound records what the sender learnt about the remote
// task: PATCH /outbox/{id} {source: send|poll, task?, reply?, error?}, the
// task and reply in the A2A 1.0 JSON shape.
func (s *Face) handleUpdateOutbound(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	o, g, err := s.ownedOutbound(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	var body ownerapi.OutboundResult
	if err := s.DecodeJSON(w, r, &body); err != nil {
		s.WriteError(w, r, err)
		return
	}
	o, err = s.Outbox.Update(r.Context(), o.ID, outbox.OutboundResult{Source: body.Source, Task: body.Task, Reply: body.Reply, Error: body.Error})
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, s.viewOutbound(r, o, g))
}

// handleHistory lists a conversation of an agent in both directions:
// GET /agents/{ref}/history/{contextId}?n=50.
func (s *Face) handleHistory(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, err := s.OwnedAgent(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	n := 0
	if q := r.URL.Query().Get("n"); q != "" {
		if n, err = strconv.Atoi(q); err != nil || n < 1 {
			s.WriteError(w, r, switchboard.Errorf(switchboard.EINVALID, "n must be a positive number"))
			return
		}
	}
	contextID := r.PathValue("contextId")
	entries, err := s.Outbox.Conversation(r.Context(), g.ID, contextID, r.URL.Query().Get("peer"), n)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	c := ownerapi.Conversation{Agent: g.Handle, ContextID: contextID, Entries: make([]ownerapi.ConversationEntry, 0, len(entries))}
	for _, e := range entries {
		c.Entries = append(c.Entries, ownerapi.ConversationEntry{At: e.At, Direction: e.Direction, Kind: e.Kind, TaskID: string(e.TaskID),
			Peer: e.Peer, State: string(e.State), Text: e.Text, Untrusted: e.Untrusted, OutboundID: e.OutboundID})
	}
	httpapi.WriteJSON(w, http.StatusOK, c)
}
