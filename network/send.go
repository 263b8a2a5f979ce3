package network

import (
	"context"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// PeerOf returns the peer an agent is when it sends work to target (its
// id and handle, verified): the task is the sender's on target, and the
// sender follows it on every agent with AgentPeer.
func PeerOf(sender, target *switchboard.Agent) switchboard.Peer {
	return switchboard.Peer{AgentID: target.ID, ID: sender.ID, Label: sender.Handle, Kind: switchboard.PeerAgent}
}

// AgentPeer returns the peer an agent is when it follows the tasks it
// sent, wherever they went.
func AgentPeer(sender *switchboard.Agent) switchboard.Peer {
	return switchboard.Peer{ID: sender.ID, Label: sender.Handle, Kind: switchboard.PeerAgent}
}

// Request is work an agent sends on the network.
type Request struct {
	Target
	// Message is the A2A request. A message with a taskId continues that
	// task, which must be the sender's, on its agent; Target is then
	// not used.
	Message *a2a.SendMessageRequest
}

// Send sends the sender's work where Choose says (or, for a message with
// a taskId, to its task's agent), through the task service, and returns
// the task and its agent. With wait not nil and a receiver delivered to
// live, it waits for the receiver's answer until the turn ends or wait
// does (SendMessageAndWait). A message sent again (the same messageId
// to the same agent) returns its task.
func (s *Service) Send(ctx context.Context, sender *switchboard.Agent, r Request, wait context.Context) (*switchboard.Task, *switchboard.Agent, error) {
	if r.Message == nil || r.Message.Message == nil {
		return nil, nil, switchboard.Errorf(switchboard.EINVALID, "message is required")
	}
	var target *switchboard.Agent
	var err error
	if id := r.Message.Message.TaskID; id != "" {
		if err := checkSender(sender); err != nil {
			return nil, nil, err
		}
		target, err = s.TaskAgent(ctx, AgentPeer(sender), id)
	} else {
		t := r.Target
		t.messageID = r.Message.Message.ID
		target, err = s.Choose(ctx, sender, t)
	}
	if err != nil {
		return nil, nil, err
	}
	peer := PeerOf(sender, target)
	if wait != nil && target.Mode.Live() {
		t, err := s.relay.SendMessageAndWait(ctx, target, peer, r.Message, switchboard.ProtocolV1, wait)
		return t, target, err
	}
	t, _, err := s.relay.SendMessage(ctx, target, peer, r.Message, switchboard.ProtocolV1)
	return t, target, err
}

// TaskAgent returns the agent of a task the caller may see, where a
// message that continues the task goes; a task the caller may not see is
// "task not found", exactly as a missing one.
func (s *Service) TaskAgent(ctx context.Context, caller switchboard.Peer, id a2a.TaskID) (*switchboard.Agent, error) {
	notFound := switchboard.Errorf(switchboard.ENOTFOUND, "task not found")
	t, err := s.store.FindTaskByID(ctx, id)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND || (err == nil && !t.VisibleTo(caller)) {
		return nil, notFound
	} else if err != nil {
		return nil, err
	}
	g, err := s.store.FindAgentByID(ctx, t.AgentID)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND || (err == nil && g.AccountDisabled) {
		return nil, notFound
	}
	return g, err
}

// SendTask is Send for the connector socket's SendTask (hub.Network).
func (s *Service) SendTask(ctx context.Context, sender *switchboard.Agent, to, community, skill string, req *a2a.SendMessageRequest, wait context.Context) (*switchboard.Task, *switchboard.Agent, error) {
	return s.Send(ctx, sender, Request{Target: Target{To: to, Community: community, Skill: skill}, Message: req}, wait)
}
