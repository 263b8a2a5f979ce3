package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard/connproto"
)

// TaskRequest is work this agent sends to another agent of the network
// (docs/network.md): to one by name, or to the one discovery chooses. No
// peer token is needed: sharing a community is the authorization.
type TaskRequest struct {
	// To names the receiver: its handle or its address URL on the
	// server's deployment (a URL of another is refused). Empty: discovery
	// chooses, in Community (or any community of this agent), among the
	// agents offering Skill.
	To        string
	Community string
	Skill     string
	// Request is the A2A request; a message without an id is given one.
	// A message with a taskId continues that task (one this agent sent).
	Request *a2a.SendMessageRequest
	// Wait makes SendTask return once the receiver finished its turn (or
	// waits for input), or after Timeout (default 60 s, at most 10 min).
	Wait    bool
	Timeout time.Duration
	// TraceParent is the W3C trace context the work continues, usually
	// the Work.TraceParent of the task this agent is handling: the
	// server's span of the send, and the receiver's work, join that
	// trace. Empty: the server starts a trace of its own (when tracing is
	// on there).
	TraceParent string
}

// ErrNoAgentFound is the error (wrapped in a *NoAgentError) of a
// SendTask that no agent of the network may take now.
var ErrNoAgentFound = errors.New("no agent found")

// NoAgentError says which gate left no agent to take the work: no
// member, none approved, none accepting, no skill, none live.
type NoAgentError struct {
	Detail string
}

// Error implements the error interface.
func (e *NoAgentError) Error() string { return "no agent found: " + e.Detail }

// Unwrap makes errors.Is(err, ErrNoAgentFound) true.
func (e *NoAgentError) Unwrap() error { return ErrNoAgentFound }

// SendTask sends work from this agent to another agent of the same
// deployment and returns the task (as it stands, or as the receiver's
// turn left it with Wait) and the receiver's handle. It waits for a
// connection if there is none; a call cut by a dropped connection is
// sent again on the next one, and the server recognises the message by
// its id. No agent to take the work is a *NoAgentError, at once.
func (c *Client) SendTask(ctx context.Context, t TaskRequest) (*a2a.Task, string, error) {
	if t.Request == nil || t.Request.Message == nil {
		return nil, "", errors.New("connector: SendTask needs a message")
	}
	r := *t.Request
	if r.Message.ID == "" {
		m := *r.Message
		m.ID = a2a.NewMessageID()
		r.Message = &m
	}
	p := connproto.SendTaskParams{To: t.To, Community: t.Community, Skill: t.Skill, Request: &r, Wait: t.Wait}
	if t.Timeout > 0 {
		p.TimeoutSeconds = max(1, int(t.Timeout/time.Second))
	}
	raw, err := c.callTraced(ctx, connproto.MethodSendTask, p, "", t.TraceParent)
	if err != nil {
		var e *connproto.Error
		if errors.As(err, &e) && e.Code == connproto.CodeNoAgentFound {
			var d connproto.ErrorData
			_ = json.Unmarshal(e.Data, &d)
			return nil, "", &NoAgentError{Detail: d.Detail}
		}
		return nil, "", fmt.Errorf("send task: %w", err)
	}
	var res connproto.SendTaskResult
	if err := json.Unmarshal(raw, &res); err != nil || res.Task == nil {
		return nil, "", fmt.Errorf("send task: the answer is not a task")
	}
	return res.Task, res.Agent, nil
}
