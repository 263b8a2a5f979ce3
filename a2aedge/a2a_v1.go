package a2aedge

import (
	"context"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/relay"
)

// This file holds the A2A 1.0 methods. Params and results are the a2a-go 1.0
// wire types; the task service works on the same types.

func (s *Edge) v1SendMessage(ctx context.Context, c *rpcCall) (any, error) {
	var p a2a.SendMessageRequest
	if err := decodeParams(c, &p); err != nil {
		return nil, err
	}
	t, err := s.sendAndWait(ctx, c, &p)
	if err != nil {
		return nil, err
	}
	return a2a.StreamResponse{Event: switchboard.TrimTask(&t.A2A, sendHistoryLength(&p), true)}, nil
}

// sendMessage hands a decoded send request of either version to the task
// service. replayed reports that the message had been accepted before.
func (s *Edge) sendMessage(ctx context.Context, c *rpcCall, p *a2a.SendMessageRequest) (t *switchboard.Task, replayed bool, err error) {
	if err := s.checkPush(p); err != nil {
		return nil, false, err
	}
	agent, err := s.routeSend(ctx, c, p)
	if err != nil {
		return nil, false, err
	}
	if s.passThrough(ctx, agent) {
		return nil, false, front.ErrPassThroughUnsupported // a stream to a member discovery chose (passthrough.go)
	}
	return s.Tasks.SendMessage(ctx, agent, c.peer, p, c.version)
}

// checkPush refuses a send request with a push configuration when push
// notifications are off.
func (s *Edge) checkPush(p *a2a.SendMessageRequest) error {
	if p.Config != nil && p.Config.PushConfig != nil && !s.Cfg.PushNotifications {
		return errPushNotSupported
	}
	return nil
}

// sendAndWait sends a message and, for a blocking call to an agent that is
// delivered to live, waits for the agent's answer: until the task finishes
// or waits for its peer, or BlockingTimeout, then answers with the task as
// it stands. An inbox agent is asynchronous by design: its tasks are
// returned at once, whatever the call asks.
func (s *Edge) sendAndWait(ctx context.Context, c *rpcCall, p *a2a.SendMessageRequest) (*switchboard.Task, error) {
	if err := s.checkPush(p); err != nil {
		return nil, err
	}
	if g := s.passFollowUp(ctx, c, p); g != nil {
		return s.passSend(ctx, c, g, p)
	}
	agent, err := s.routeSend(ctx, c, p)
	if err != nil {
		return nil, err
	}
	if s.passThrough(ctx, agent) {
		return s.passSend(ctx, c, agent, p)
	}
	if !agent.Mode.Live() || (p.Config != nil && p.Config.ReturnImmediately) {
		t, _, err := s.Tasks.SendMessage(ctx, agent, c.peer, p, c.version)
		return t, err
	}
	// The wait ends at the blocking timeout, or when the server shuts down:
	// either way the peer gets the task as it stands.
	wait, cancel := context.WithTimeout(s.Closing, s.blocking)
	defer cancel()
	return s.Tasks.SendMessageAndWait(ctx, agent, c.peer, p, c.version, wait)
}

var errPushNotSupported = switchboard.Errorf(switchboard.EPUSHNOTSUPPORTED, "Push notifications are not supported by this agent")

func sendHistoryLength(p *a2a.SendMessageRequest) *int {
	if p.Config == nil {
		return nil
	}
	return p.Config.HistoryLength
}

func (s *Edge) v1GetTask(ctx context.Context, c *rpcCall) (any, error) {
	var p a2a.GetTaskRequest
	if err := decodeParams(c, &p); err != nil {
		return nil, err
	}
	return s.getTask(ctx, c, p.ID, p.HistoryLength)
}

// getTask returns the 1.0 wire task for GetTask and tasks/get.
func (s *Edge) getTask(ctx context.Context, c *rpcCall, id a2a.TaskID, historyLength *int) (*a2a.Task, error) {
	if id == "" {
		return nil, switchboard.Errorf(switchboard.EINVALID, "Invalid params: id is required")
	}
	if historyLength != nil && *historyLength < 0 {
		return nil, switchboard.Errorf(switchboard.EINVALID, "Invalid params: historyLength must not be negative")
	}
	if t, ok, err := s.passGet(ctx, c, id, historyLength); ok {
		return t, err
	}
	t, err := s.Tasks.GetTask(ctx, c.peer, id)
	if err != nil {
		return nil, err
	}
	return switchboard.TrimTask(&t.A2A, historyLength, true), nil
}

// listTasksParams is ListTasksRequest with the fields whose absence matters
// kept as pointers or strings, so that an explicit pageSize of 0 or a bad
// timestamp is an invalid-params error rather than a default or a parse
// error.
type listTasksParams struct {
	Tenant               string `json:"tenant"`
	ContextID            string `json:"contextId"`
	Status               string `json:"status"`
	PageSize             *int   `json:"pageSize"`
	PageToken            string `json:"pageToken"`
	HistoryLength        *int   `json:"historyLength"`
	StatusTimestampAfter string `json:"statusTimestampAfter"`
	IncludeArtifacts     bool   `json:"includeArtifacts"`
}

// listTasksResult is ListTasksResponse; Tasks is never null.
type listTasksResult struct {
	Tasks         []*a2a.Task `json:"tasks"`
	NextPageToken string      `json:"nextPageToken"`
	PageSize      int         `json:"pageSize"`
	TotalSize     int         `json:"totalSize"`
}

func (s *Edge) v1ListTasks(ctx context.Context, c *rpcCall) (any, error) {
	var p listTasksParams
	if err := decodeParams(c, &p); err != nil {
		return nil, err
	}
	return s.listTasks(ctx, c, &p)
}

// listTasks lists the caller's tasks for ListTasks in any binding.
func (s *Edge) listTasks(ctx context.Context, c *rpcCall, p *listTasksParams) (*listTasksResult, error) {
	if s.passThrough(ctx, c.agent) {
		return nil, front.ErrPassThroughUnsupported
	}
	q := relay.TaskQuery{ContextID: p.ContextID, PageSize: p.PageSize, PageToken: p.PageToken}
	if p.Status != "" && p.Status != "TASK_STATE_UNSPECIFIED" {
		st, ok := switchboard.ParseState(p.Status)
		if !ok || !strings.HasPrefix(p.Status, "TASK_STATE_") {
			return nil, switchboard.Errorf(switchboard.EINVALID, "Invalid params: status %q is not a task state", switchboard.Truncate(p.Status, 40))
		}
		q.State = st
	}
	if p.StatusTimestampAfter != "" {
		ts, err := time.Parse(time.RFC3339Nano, p.StatusTimestampAfter)
		if err != nil {
			return nil, switchboard.Errorf(switchboard.EINVALID, "Invalid params: statusTimestampAfter must be an RFC 3339 timestamp")
		}
		q.StatusAfter = &ts
	}
	if p.HistoryLength != nil && *p.HistoryLength < 0 {
		return nil, switchboard.Errorf(switchboard.EINVALID, "Invalid params: historyLength must not be negative")
	}
	page, err := s.Tasks.ListTasks(ctx, c.peer, q)
	if err != nil {
		return nil, err
	}
	out := listTasksResult{Tasks: make([]*a2a.Task, 0, len(page.Tasks)), NextPageToken: page.NextPageToken,
		PageSize: page.PageSize, TotalSize: page.TotalSize}
	for _, t := range page.Tasks {
		out.Tasks = append(out.Tasks, switchboard.TrimTask(&t.A2A, p.HistoryLength, p.IncludeArtifacts))
	}
	return &out, nil
}

func (s *Edge) v1CancelTask(ctx context.Context, c *rpcCall) (any, error) {
	var p a2a.CancelTaskRequest
	if err := decodeParams(c, &p); err != nil {
		return nil, err
	}
	if p.ID == "" {
		return nil, switchboard.Errorf(switchboard.EINVALID, "Invalid params: id is required")
	}
	t, err := s.cancelTask(ctx, c, p.ID)
	if err != nil {
		return nil, err
	}
	return &t.A2A, nil
}

// v1PushConfigParams accepts the flat 1.0 TaskPushNotificationConfig and,
// for clients written against drafts, the config nested under
// pushNotificationConfig or config (with the task named by taskId or by
// parent "tasks/{id}").
type v1PushConfigParams struct {
	a2a.PushConfig
	ProtoTaskID            a2a.TaskID      `json:"task_id"` // the proto field name, which ProtoJSON parsers accept
	Parent                 string          `json:"parent"`
	PushNotificationConfig *a2a.PushConfig `json:"pushNotificationConfig"`
	Config                 *a2a.PushConfig `json:"config"`
}

func (p *v1PushConfigParams) config() a2a.PushConfig {
	c := p.PushConfig
	if nested := p.PushNotificationConfig; nested != nil {
		c = *nested
	} else if nested := p.Config; nested != nil {
		c = *nested
	}
	switch {
	case p.PushConfig.TaskID != "":
		c.TaskID = p.PushConfig.TaskID
	case p.ProtoTaskID != "":
		c.TaskID = p.ProtoTaskID
	case strings.HasPrefix(p.Parent, "tasks/"):
		c.TaskID = a2a.TaskID(strings.TrimPrefix(p.Parent, "tasks/"))
	}
	return c
}

func (s *Edge) v1CreatePushConfig(ctx context.Context, c *rpcCall) (any, error) {
	var p v1PushConfigParams
	if err := decodeParams(c, &p); err != nil {
		return nil, err
	}
	cfg := p.config()
	if cfg.TaskID == "" {
		return nil, switchboard.Errorf(switchboard.EINVALID, "Invalid params: taskId is required")
	}
	pc, err := s.Tasks.SetPushConfig(ctx, c.peer, cfg, c.version)
	if err != nil {
		return nil, err
	}
	return &pc.Config, nil
}

// v1PushConfigRef names a task's push configuration (Get, List, Delete).
// ProtoJSON parsers accept a field's proto name as well as its JSON name,
// and clients send either: taskId or task_id.
type v1PushConfigRef struct {
	TaskID      a2a.TaskID `json:"taskId"`
	ProtoTaskID a2a.TaskID `json:"task_id"`
	ID          string     `json:"id"`
}

// decodePushConfigRef decodes the params and returns the task named.
func decodePushConfigRef(c *rpcCall) (*v1PushConfigRef, error) {
	var p v1PushConfigRef
	if err := decodeParams(c, &p); err != nil {
		return nil, err
	}
	if p.TaskID == "" {
		p.TaskID = p.ProtoTaskID
	}
	if p.TaskID == "" {
		return nil, switchboard.Errorf(switchboard.EINVALID, "Invalid params: taskId is required")
	}
	return &p, nil
}

func (s *Edge) v1GetPushConfig(ctx context.Context, c *rpcCall) (any, error) {
	p, err := decodePushConfigRef(c)
	if err != nil {
		return nil, err
	}
	pc, err := s.Tasks.GetPushConfig(ctx, c.peer, p.TaskID, p.ID)
	if err != nil {
		return nil, err
	}
	return &pc.Config, nil
}

// listPushConfigsResult is ListTaskPushNotificationConfigsResponse. A task
// holds at most switchboard.MaxPushConfigsPerTask configurations, so one
// page always holds them all.
type listPushConfigsResult struct {
	Configs       []*a2a.PushConfig `json:"configs"`
	NextPageToken string            `json:"nextPageToken"`
}

func (s *Edge) v1ListPushConfigs(ctx context.Context, c *rpcCall) (any, error) {
	p, err := decodePushConfigRef(c)
	if err != nil {
		return nil, err
	}
	pcs, err := s.Tasks.ListPushConfigs(ctx, c.peer, p.TaskID)
	if err != nil {
		return nil, err
	}
	out := listPushConfigsResult{Configs: make([]*a2a.PushConfig, 0, len(pcs))}
	for _, pc := range pcs {
		out.Configs = append(out.Configs, &pc.Config)
	}
	return out, nil
}

func (s *Edge) v1DeletePushConfig(ctx context.Context, c *rpcCall) (any, error) {
	p, err := decodePushConfigRef(c)
	if err != nil {
		return nil, err
	}
	if err := s.Tasks.DeletePushConfig(ctx, c.peer, p.TaskID, p.ID); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

func (s *Edge) v1GetExtendedAgentCard(ctx context.Context, c *rpcCall) (any, error) {
	if c.agent == nil || !c.agent.HasExtendedCard() {
		return nil, errExtendedCardNotConfigured
	}
	return s.withPairing(s.cardV1(c.agent, c.addr, true, s.upstreamCard(ctx, c.agent, c.addr)), c.agent, strings.TrimSuffix(c.addr, "/"), true), nil
}

var errExtendedCardNotConfigured = switchboard.Errorf(switchboard.EEXTENDEDCARDNOTCONFIG, "Extended agent card is not configured for this agent")
