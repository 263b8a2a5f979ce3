package a2aedge

import (
	"context"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/front"
)

// A pass-through front (docs/front.md, "Pass-through fronts") is served
// by the same pipeline as any address (authentication, rate limit, body
// limit, envelope, version, params): only its methods differ. SendMessage,
// GetTask, CancelTask and the streams go to its upstream through the
// front's forwarder, with no store write (front.Service.PassSend, PassGet,
// PassCancel, PassStream, PassSubscribe; a stream follows the upstream's
// instead of the task's events); ListTasks, push configurations and
// Last-Event-ID are refused.

// passThrough reports whether agent is a front that keeps no record of
// its tasks. Only then do the methods below reach s.Fronts, which a
// server with such a front has.
func (s *Edge) passThrough(ctx context.Context, agent *switchboard.Agent) bool {
	if agent == nil || agent.Mode != switchboard.ModeFront {
		return false
	}
	ok, err := s.fronts.PassThrough(ctx, agent.ID)
	return err == nil && ok
}

// passAgent returns the agent of a pass-through front that the call's
// task id id belongs to: the address's, or, at a community's, the one
// that gave the caller id; or nil (the task is a recorded one, if any).
func (s *Edge) passAgent(ctx context.Context, c *rpcCall, id a2a.TaskID) *switchboard.Agent {
	if c.agent != nil {
		if s.passThrough(ctx, c.agent) {
			return c.agent
		}
		return nil
	}
	if on := s.fronts.PassOwner(c.peer, id); on != "" {
		return &switchboard.Agent{ID: on, Mode: switchboard.ModeFront}
	}
	return nil
}

// passFollowUp returns the pass-through front whose task a message sent
// at a community's address continues, or nil (routeSend finds its agent).
func (s *Edge) passFollowUp(ctx context.Context, c *rpcCall, p *a2a.SendMessageRequest) *switchboard.Agent {
	if c.agent != nil || p.Message == nil || p.Message.TaskID == "" {
		return nil
	}
	return s.passAgent(ctx, c, p.Message.TaskID)
}

// passSend sends a message through a pass-through front.
func (s *Edge) passSend(ctx context.Context, c *rpcCall, agent *switchboard.Agent, p *a2a.SendMessageRequest) (*switchboard.Task, error) {
	if p.Config != nil && p.Config.PushConfig != nil {
		return nil, errPushNotSupported
	}
	t, err := s.Fronts.PassSend(ctx, agent.ID, c.peer, p)
	if err != nil {
		return nil, err
	}
	return passTask(agent, c, t), nil
}

// passGet answers GetTask for a pass-through front's task; ok is false
// when id is not one.
func (s *Edge) passGet(ctx context.Context, c *rpcCall, id a2a.TaskID, historyLength *int) (t *a2a.Task, ok bool, err error) {
	agent := s.passAgent(ctx, c, id)
	if agent == nil {
		return nil, false, nil
	}
	t, err = s.Fronts.PassGet(ctx, agent.ID, c.peer, id, historyLength)
	if err != nil {
		return nil, true, err
	}
	return switchboard.TrimTask(t, historyLength, true), true, nil
}

// passCancel answers CancelTask for a pass-through front's task; ok is
// false when id is not one.
func (s *Edge) passCancel(ctx context.Context, c *rpcCall, id a2a.TaskID) (t *switchboard.Task, ok bool, err error) {
	agent := s.passAgent(ctx, c, id)
	if agent == nil {
		return nil, false, nil
	}
	at, err := s.Fronts.PassCancel(ctx, agent.ID, c.peer, id)
	if err != nil {
		return nil, true, err
	}
	return passTask(agent, c, at), true, nil
}

// sendStream sends the message of a stream method and plans its stream:
// through a pass-through front, the upstream's answer as it comes.
func (s *Edge) sendStream(ctx context.Context, c *rpcCall, p *a2a.SendMessageRequest) (streamPlan, error) {
	if plan, ok, err := s.passSendPlan(ctx, c, p); ok {
		return plan, err
	}
	t, replayed, err := s.sendMessage(ctx, c, p)
	if err != nil {
		return streamPlan{}, err
	}
	return sendStreamPlan(c, t, replayed, sendHistoryLength(p))
}

// passSendPlan plans the stream of a send through a pass-through front:
// the address's, or the one whose task a message at a community's
// address continues; ok is false when the send is not to one.
func (s *Edge) passSendPlan(ctx context.Context, c *rpcCall, p *a2a.SendMessageRequest) (plan streamPlan, ok bool, err error) {
	g := s.passFollowUp(ctx, c, p)
	if g == nil && s.passThrough(ctx, c.agent) {
		g = c.agent
	}
	if g == nil {
		return streamPlan{}, false, nil
	}
	switch {
	case p.Config != nil && p.Config.PushConfig != nil:
		return streamPlan{}, true, errPushNotSupported
	case c.lastEventID >= 0:
		return streamPlan{}, true, front.ErrPassThroughUnsupported // no events are kept to resume from
	}
	return streamPlan{historyLength: sendHistoryLength(p), pass: passFollow(func(ctx context.Context, fn func(a2a.Event) (bool, error)) error {
		return s.Fronts.PassStream(ctx, g.ID, c.peer, p, fn)
	})}, true, nil
}

// passSubscribePlan plans SubscribeToTask of a pass-through front's task.
func (s *Edge) passSubscribePlan(c *rpcCall, g *switchboard.Agent, id a2a.TaskID) (streamPlan, error) {
	if c.lastEventID >= 0 {
		return streamPlan{}, front.ErrPassThroughUnsupported // no events are kept to resume from
	}
	return streamPlan{taskID: id, pass: passFollow(func(ctx context.Context, fn func(a2a.Event) (bool, error)) error {
		return s.Fronts.PassSubscribe(ctx, g.ID, c.peer, id, fn)
	})}, nil
}

// passFollow is a streamPlan's pass of the events stream hands over,
// numbered from 1.
func passFollow(stream func(ctx context.Context, fn func(a2a.Event) (bool, error)) error) func(context.Context, a2a.TaskID, int64, func(*switchboard.TaskEvent) (bool, error)) error {
	return func(ctx context.Context, _ a2a.TaskID, _ int64, fn func(*switchboard.TaskEvent) (bool, error)) error {
		var seq int64
		return stream(ctx, func(ev a2a.Event) (bool, error) {
			if ev == nil {
				return true, nil
			}
			seq++
			return fn(&switchboard.TaskEvent{TaskID: ev.TaskInfo().TaskID, Seq: seq, Event: ev})
		})
	}
}

// passTask is a pass-through front's answer as a task: never written.
func passTask(agent *switchboard.Agent, c *rpcCall, t *a2a.Task) *switchboard.Task {
	return &switchboard.Task{A2A: *t, AgentID: agent.ID, PeerID: c.peer.ID, PeerLabel: c.peer.Label, PeerKind: c.peer.Kind, Protocol: c.version}
}

// PushOff reports whether the push configuration methods are refused
// for the call: push notifications are off, or its address is a
// pass-through front's.
func (s *Edge) PushOff(ctx context.Context, c *Call) bool {
	return !s.Cfg.PushNotifications || s.passThrough(ctx, c.agent)
}

// passCapabilities returns what the card of agent says it streams and
// pushes, and the extension that says what a pass-through front gives up.
func (s *Edge) passCapabilities(agent *switchboard.Agent, ext []cardExtension) (streaming, push bool, exts []cardExtension) {
	if !s.passThrough(context.Background(), agent) {
		return true, s.Cfg.PushNotifications, ext
	}
	return true, false, append(ext, cardExtension{URI: PassThroughExtension, Params: map[string]any{"givesUp": front.PassThroughGivesUp},
		Description: "This address passes each call through to its agent without a record of its tasks: no ListTasks, push notifications or resumed streams, and a task id is forgotten after a restart."})
}

// PassThroughExtension is the URI of the card extension that says an
// address is a pass-through front.
const PassThroughExtension = "https://switchboard.dev/ext/pass-through-front/v1"
