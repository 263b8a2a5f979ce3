package agenthttp

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/network"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// Bounds of a blocking POST /tasks.
const (
	defaultNetworkWait = 60 * time.Second
	maxNetworkWait     = 10 * time.Minute
)

// handleNetworkTask is POST /tasks with an agent token: the agent sends
// work to another agent of the network, by name or by discovery
// (ownerapi.NetworkTask): a handle, or an address of this deployment (a
// URL of another is 400). With an owner token, body.Agent names the
// owner's agent that sends (another owner's is "agent not found"), under
// the same rules as its own token. Without blocking it answers 202 with
// the task and the agent it went to; with blocking, the original
// network's answer once the receiver finished, or the task's state when
// the wait ended first (202). Nobody eligible is 404
// {"error":"no_agent_found","reason"}.
func (s *Face) handleNetworkTask(w http.ResponseWriter, r *http.Request) {
	acct, sender, err := s.AuthenticateOwnerOrAgent(r)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	var body ownerapi.NetworkTask
	if err := s.DecodeJSON(w, r, &body); err != nil {
		s.WriteError(w, r, err)
		return
	}
	if sender, err = s.networkSender(r, acct, sender, body.Agent); err != nil {
		s.WriteError(w, r, err)
		return
	}
	// A limiter that cannot count lets the request through (it logs and
	// counts that itself).
	if ok, retry, _ := s.Limiter.Allow(r.Context(), network.AgentPeer(sender).Key()); !ok {
		secs := max(1, int(math.Ceil(retry.Seconds())))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		s.WriteError(w, r, switchboard.Errorf(switchboard.ERATELIMITED, "rate limit exceeded: retry in %d s", secs))
		return
	}
	req, wait, err := networkRequest(&body)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	// to is a handle or an address of this deployment as the request
	// reached it; a URL of another deployment is refused, never read as
	// the agent of its handle here (publicurl.HandleAt).
	to, here, err := s.URLs.Handle(r, body.To)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	if !here {
		s.WriteError(w, r, network.Elsewhere(sender, body.To))
		return
	}
	var waitCtx context.Context
	if body.Blocking {
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithTimeout(s.Closing, wait) // ends early when the server shuts down
		defer cancel()
	}
	t, target, err := s.Network.Send(r.Context(), sender, network.Request{
		Target: network.Target{To: to, Community: body.Community, Skill: body.Skill, WakeSleepers: body.WakeSleepers}, Message: req}, waitCtx)
	if err != nil && t == nil {
		s.WriteError(w, r, err)
		return
	}
	if !body.Blocking {
		httpapi.WriteJSON(w, http.StatusAccepted, ownerapi.NetworkTaskAccepted{TaskID: string(t.ID()), Agent: target.Handle})
		return
	}
	status := http.StatusOK
	if st := t.State(); !st.Terminal() && !switchboard.Interrupted(st) {
		status = http.StatusAccepted
	}
	httpapi.WriteJSON(w, status, ownerapi.NetworkTaskResult{Status: switchboard.ShortState(t.State()), Agent: target.Handle,
		Result: resultText(&t.A2A), TaskID: string(t.ID())})
}

// networkSender returns the agent a POST /tasks sends as: the agent of
// the agent token (ref, when set, must name it), or, with an owner token,
// the owner's agent ref names (required).
func (s *Face) networkSender(r *http.Request, acct *switchboard.Account, agent *switchboard.Agent, ref string) (*switchboard.Agent, error) {
	ref = strings.TrimSpace(ref)
	if agent != nil {
		if ref != "" && !strings.EqualFold(ref, agent.Handle) && !strings.EqualFold(ref, agent.ID) {
			return nil, switchboard.Errorf(switchboard.ENOTFOUND, "agent not found")
		}
		return agent, nil
	}
	if ref == "" {
		return nil, switchboard.Errorf(switchboard.EINVALID, "with an owner token, agent names the agent of yours that sends")
	}
	// Whether the agent may send (its account enabled, approved) is the
	// network's to decide (network.Send).
	return s.AgentByRef(r, acct, ref)
}

// networkRequest builds the A2A request of a NetworkTask and the wait of
// a blocking one.
func networkRequest(b *ownerapi.NetworkTask) (*a2a.SendMessageRequest, time.Duration, error) {
	var parts a2a.ContentParts
	desc, text := strings.TrimSpace(b.TaskDescription), b.Payload.Message
	if desc != "" {
		parts = append(parts, a2a.NewTextPart(b.TaskDescription))
	}
	if strings.TrimSpace(text) != "" && text != b.TaskDescription {
		parts = append(parts, a2a.NewTextPart(text))
	}
	if len(parts) == 0 {
		return nil, 0, switchboard.Errorf(switchboard.EINVALID, "task_description or payload.message is required")
	}
	wait := defaultNetworkWait
	if b.TimeoutSeconds != 0 {
		if b.TimeoutSeconds < 1 || time.Duration(b.TimeoutSeconds)*time.Second > maxNetworkWait {
			return nil, 0, switchboard.Errorf(switchboard.EINVALID, "timeout_seconds must be between 1 and %d", int(maxNetworkWait.Seconds()))
		}
		wait = time.Duration(b.TimeoutSeconds) * time.Second
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, parts...)
	if desc != "" {
		msg.Metadata = map[string]any{switchboard.MetaTaskDescription: b.TaskDescription}
	}
	if b.MessageID != "" {
		if !switchboard.ValidRef(b.MessageID) {
			return nil, 0, switchboard.Errorf(switchboard.EINVALID, "message_id must be 1-%d characters of A-Z a-z 0-9 . _ : -", switchboard.MaxRefLen)
		}
		msg.ID = b.MessageID
	}
	msg.TaskID, msg.ContextID = a2a.TaskID(b.TaskID), b.ContextID
	return &a2a.SendMessageRequest{Message: msg}, wait, nil
}

// resultText returns the text of an agent's answer to a task: its
// artifacts' text parts, or else the text of its last message, or else
// its status message's.
func resultText(t *a2a.Task) string {
	if text := switchboard.ArtifactsText(t.Artifacts); text != "" {
		return text
	}
	for i := len(t.History) - 1; i >= 0; i-- {
		if m := t.History[i]; m != nil && m.Role == a2a.MessageRoleAgent {
			return switchboard.MessageText(m)
		}
	}
	if m := t.Status.Message; m != nil {
		return switchboard.MessageText(m)
	}
	return ""
}
