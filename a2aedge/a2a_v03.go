package a2aedge

import (
	"context"
	"net/http"
	"strings"

	legacy "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/switchboard-dev/switchboard"
)

// This file holds the A2A 0.3 methods. Params are decoded into the 0.3 wire
// types, converted to the 1.0 model with a2av0, handled exactly like their
// 1.0 counterparts, and the results converted back.

// decodeSendV03 decodes message/send and message/stream params.
func decodeSendV03(c *rpcCall) (*a2a.SendMessageRequest, error) {
	var p legacy.MessageSendParams
	if err := decodeParams(c, &p); err != nil {
		return nil, err
	}
	if p.Message == nil {
		return nil, switchboard.Errorf(switchboard.EINVALID, "Invalid params: message is required")
	}
	req, err := a2av0.ToV1SendMessageRequest(&p)
	if err != nil {
		return nil, switchboard.Errorf(switchboard.EINVALID, "Invalid params: %s", err.Error())
	}
	return req, nil
}

func (s *Edge) v03SendMessage(ctx context.Context, c *rpcCall) (any, error) {
	req, err := decodeSendV03(c)
	if err != nil {
		return nil, err
	}
	t, err := s.sendAndWait(ctx, c, req)
	if err != nil {
		return nil, err
	}
	return a2av0.FromV1Task(switchboard.TrimTask(&t.A2A, sendHistoryLength(req), true)), nil
}

func (s *Edge) v03StreamMessage(w http.ResponseWriter, r *http.Request, c *rpcCall) {
	req, err := decodeSendV03(c)
	if err != nil {
		s.streamFailed(w, r, c, err)
		return
	}
	plan, err := s.sendStream(r.Context(), c, req)
	if err != nil {
		s.streamFailed(w, r, c, err)
		return
	}
	s.runStream(w, r, c, plan, encodeV03Event)
}

func (s *Edge) v03GetTask(ctx context.Context, c *rpcCall) (any, error) {
	var p legacy.TaskQueryParams
	if err := decodeParams(c, &p); err != nil {
		return nil, err
	}
	t, err := s.getTask(ctx, c, a2a.TaskID(p.ID), p.HistoryLength)
	if err != nil {
		return nil, err
	}
	return a2av0.FromV1Task(t), nil
}

func (s *Edge) v03CancelTask(ctx context.Context, c *rpcCall) (any, error) {
	var p legacy.TaskIDParams
	if err := decodeParams(c, &p); err != nil {
		return nil, err
	}
	if p.ID == "" {
		return nil, switchboard.Errorf(switchboard.EINVALID, "Invalid params: id is required")
	}
	t, err := s.cancelTask(ctx, c, a2a.TaskID(p.ID))
	if err != nil {
		return nil, err
	}
	return a2av0.FromV1Task(&t.A2A), nil
}

func (s *Edge) v03Resubscribe(w http.ResponseWriter, r *http.Request, c *rpcCall) {
	var p legacy.TaskIDParams
	if err := decodeParams(c, &p); err != nil {
		s.streamFailed(w, r, c, err)
		return
	}
	plan, err := s.subscribePlan(r.Context(), c, a2a.TaskID(p.ID))
	if err != nil {
		s.streamFailed(w, r, c, err)
		return
	}
	s.runStream(w, r, c, plan, encodeV03Event)
}

// encodeV03Event converts an event to its 0.3 shape (with kind fields) and
// marks the status update that ends the stream as final.
func encodeV03Event(ev a2a.Event, final bool) (any, error) {
	out, err := a2av0.FromV1Event(ev)
	if err != nil {
		return nil, err
	}
	if st, ok := out.(*legacy.TaskStatusUpdateEvent); ok {
		st.Final = final
	}
	return out, nil
}

func (s *Edge) v03SetPushConfig(ctx context.Context, c *rpcCall) (any, error) {
	var p legacy.TaskPushConfig
	if err := decodeParams(c, &p); err != nil {
		return nil, err
	}
	if p.TaskID == "" {
		return nil, switchboard.Errorf(switchboard.EINVALID, "Invalid params: taskId is required")
	}
	pc, err := s.Tasks.SetPushConfig(ctx, c.peer, *a2av0.ToV1PushConfig(&p), c.version)
	if err != nil {
		return nil, err
	}
	return a2av0.FromV1PushConfig(&pc.Config), nil
}

func (s *Edge) v03GetPushConfig(ctx context.Context, c *rpcCall) (any, error) {
	var p legacy.GetTaskPushConfigParams
	if err := decodeParams(c, &p); err != nil {
		return nil, err
	}
	if p.TaskID == "" {
		return nil, switchboard.Errorf(switchboard.EINVALID, "Invalid params: id is required")
	}
	pc, err := s.Tasks.GetPushConfig(ctx, c.peer, a2a.TaskID(p.TaskID), p.ConfigID)
	if err != nil {
		return nil, err
	}
	return a2av0.FromV1PushConfig(&pc.Config), nil
}

func (s *Edge) v03ListPushConfigs(ctx context.Context, c *rpcCall) (any, error) {
	var p legacy.ListTaskPushConfigParams
	if err := decodeParams(c, &p); err != nil {
		return nil, err
	}
	if p.TaskID == "" {
		return nil, switchboard.Errorf(switchboard.EINVALID, "Invalid params: id is required")
	}
	pcs, err := s.Tasks.ListPushConfigs(ctx, c.peer, a2a.TaskID(p.TaskID))
	if err != nil {
		return nil, err
	}
	out := make([]*legacy.TaskPushConfig, 0, len(pcs))
	for _, pc := range pcs {
		out = append(out, a2av0.FromV1PushConfig(&pc.Config))
	}
	return out, nil
}

func (s *Edge) v03DeletePushConfig(ctx context.Context, c *rpcCall) (any, error) {
	var p legacy.DeleteTaskPushConfigParams
	if err := decodeParams(c, &p); err != nil {
		return nil, err
	}
	if p.TaskID == "" {
		return nil, switchboard.Errorf(switchboard.EINVALID, "Invalid params: id is required")
	}
	if err := s.Tasks.DeletePushConfig(ctx, c.peer, a2a.TaskID(p.TaskID), p.ConfigID); err != nil {
		return nil, err
	}
	return nil, nil
}

func (s *Edge) v03GetExtendedCard(ctx context.Context, c *rpcCall) (any, error) {
	if c.agent == nil || !c.agent.HasExtendedCard() {
		return nil, errExtendedCardNotConfigured
	}
	card := s.cardV03(c.agent, c.addr, true, s.upstreamCard(ctx, c.agent, c.addr))
	return s.withPairingV03(card, c.agent, strings.TrimSuffix(c.addr, "/")), nil
}
