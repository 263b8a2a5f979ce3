package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/switchboard-dev/switchboard/connproto"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// GetTask returns one of the agent's own tasks, as the server stores it.
// It waits for a connection if there is none; the request is sent again on
// the next connection if the current one drops.
func (c *Client) GetTask(ctx context.Context, id a2a.TaskID) (*a2a.Task, error) {
	raw, err := c.call(ctx, connproto.MethodGetTask, a2a.GetTaskRequest{ID: id}, "")
	if err != nil {
		return nil, fmt.Errorf("get task %s: %w", id, err)
	}
	var t a2a.Task
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("get task %s: decode answer: %w", id, err)
	}
	return &t, nil
}

// Send sends a message from this agent to another agent of the same
// deployment, as the peer whose token it holds: to is that agent's
// address URL or handle, token a peer token of it. It returns the task
// created (or continued) at the other agent. A message without an id is
// given one, so that a send repeated after a lost connection is
// recognised by the server as the same message.
func (c *Client) Send(ctx context.Context, to, token string, req *a2a.SendMessageRequest) (*a2a.Task, error) {
	if req == nil || req.Message == nil {
		return nil, errors.New("connector: send needs a message")
	}
	r := *req
	if r.Message.ID == "" {
		m := *r.Message
		m.ID = a2a.NewMessageID()
		r.Message = &m
	}
	raw, err := c.call(ctx, connproto.MethodSendMessage, connproto.SendParams{To: to, Token: token, Request: &r}, "")
	if err != nil {
		return nil, fmt.Errorf("send to %s: %w", to, err)
	}
	var sr a2a.StreamResponse
	if err := json.Unmarshal(raw, &sr); err != nil {
		return nil, fmt.Errorf("send to %s: decode answer: %w", to, err)
	}
	t, ok := sr.Event.(*a2a.Task)
	if !ok {
		return nil, fmt.Errorf("send to %s: the answer is not a task", to)
	}
	return t, nil
}

// call sends a request to the server, on this connection or the next ones,
// and waits for its answer or for ctx to end.
func (c *Client) call(ctx context.Context, method string, params any, taskID a2a.TaskID) (json.RawMessage, error) {
	return c.callTraced(ctx, method, params, taskID, "")
}

// callTraced is call for a frame that carries traceparent, the trace
// context of the work it reports on (connproto.Frame.TraceParent; none
// when empty).
func (c *Client) callTraced(ctx context.Context, method string, params any, taskID a2a.TaskID, traceparent string) (json.RawMessage, error) {
	c.init()
	cl, err := c.out.add(method, params, taskID, traceparent)
	if err != nil {
		return nil, err
	}
	select {
	case r := <-cl.done:
		return r.result, r.err
	case <-ctx.Done():
		c.out.remove(cl)
		return nil, context.Cause(ctx)
	}
}
