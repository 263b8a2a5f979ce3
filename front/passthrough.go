package front

import (
	"context"
	"errors"
	"iter"
	"strconv"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/switchboard-dev/switchboard"
)

// A pass-through front (Front.Record "none", docs/front.md) keeps no
// record of its peers' tasks: each SendMessage, GetTask, CancelTask,
// SendStreamingMessage and SubscribeToTask goes to the upstream as one
// request of the front's Forwarder, and its answer (or each event of its
// stream) comes back with the upstream's task and context ids replaced by
// ours, mapped per peer in the Service's PassIDs (in memory, bounded). A
// peer names an upstream task only by the id it was given: an id it was
// not given, or one forgotten (evicted, another instance's, before a
// restart), is "task not found" before anything reaches the upstream.

// Given up by a pass-through front, as front status lists it.
var PassThroughGivesUp = []string{
	"ListTasks (answered UnsupportedOperation)",
	"push notifications (PushNotificationNotSupported; the card says pushNotifications false)",
	"resuming a stream with Last-Event-ID, and SubscribeToTask when the upstream does not stream (UnsupportedOperation)",
	"answers across a restart, and on another instance of a cluster: the ids are kept in one instance's memory (TaskNotFound)",
	"ids older than the " + strconv.Itoa(DefaultPassIDs) + " most recently used of the instance (TaskNotFound)",
}

// ErrPassThroughUnsupported answers what a pass-through front does not
// offer (ListTasks, Last-Event-ID, SubscribeToTask of an upstream that
// does not stream).
var ErrPassThroughUnsupported = switchboard.Errorf(switchboard.EUNSUPPORTED,
	"This agent is a pass-through front: it keeps no record of tasks, so it offers no ListTasks and no resumed streams, and follows a task only when its own server streams")

// errTaskNotFound is the one answer for an id the peer was not given, or
// that is forgotten.
var errTaskNotFound = switchboard.Errorf(switchboard.ENOTFOUND, "task not found")

// PassThrough reports whether agentID's front keeps no record of its
// tasks. Its front is read from the store at most once a second.
func (s *Service) PassThrough(ctx context.Context, agentID string) (bool, error) {
	f, _, err := s.front(ctx, agentID)
	if err != nil {
		return false, err
	}
	return f.PassThrough(), nil
}

// SetRecord sets what agentID's front records of its tasks (the store
// checks the value).
func (s *Service) SetRecord(ctx context.Context, agentID, record string) error {
	if err := s.store.SetFrontRecord(ctx, agentID, record); err != nil {
		return err
	}
	s.Forget(agentID)
	s.ids.forgetAgent(agentID)
	return nil
}

// PassIDs returns the map of the pass-through fronts' ids.
func (s *Service) PassIDs() *PassIDs { return s.ids }

// PassOwner returns the agent on which peer was given the task id by a
// pass-through front, or "".
func (s *Service) PassOwner(peer switchboard.Peer, id a2a.TaskID) string {
	_, on, _ := s.ids.theirs("", peer.Key(), kindTask, string(id))
	return on
}

// PassSend sends peer's message to agentID's upstream, as it asked
// (blocking or not, its history length and output modes), and returns
// the upstream's answer as a task of ours. A message that names a task
// or context continues the upstream's one the peer was given.
func (s *Service) PassSend(ctx context.Context, agentID string, peer switchboard.Peer, p *a2a.SendMessageRequest) (*a2a.Task, error) {
	if p.Message == nil {
		return nil, switchboard.Errorf(switchboard.EINVALID, "Invalid params: message is required")
	}
	f, e, err := s.front(ctx, agentID)
	if err != nil {
		return nil, err
	}
	key := peer.Key()
	j, req, err := s.passRequest(agentID, key, peer.Label, p)
	if err != nil {
		return nil, err
	}
	var res a2a.SendMessageResult
	err = s.passCall(ctx, agentID, f, e, peer.Label, "SendMessage", func(ctx context.Context, c *a2aclient.Client, _ bool) (err error) {
		res, err = c.SendMessage(ctx, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	switch r := res.(type) {
	case *a2a.Task:
		return s.passTask(agentID, key, r, j.TaskID, j.ContextID, e.secrets), nil
	case *a2a.Message:
		// A direct answer: it completes a task that has no id upstream, so
		// it cannot be asked for again.
		ctxID := s.ids.ours(agentID, key, kindContext, r.ContextID, j.ContextID)
		msg := passMessage(r, j.TaskID, ctxID)
		t := &a2a.Task{ID: j.TaskID, ContextID: ctxID, Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Message: msg}}
		return e.secrets.Event(t).(*a2a.Task), nil
	}
	return nil, s.passFailed(ctx, agentID, f, &observation{}, errors.New("the upstream answered neither a task nor a message"), "SendMessage", peer.Label)
}

// passRequest returns the job of peer's send request p, with the
// upstream's ids of what its message names, and the request that sends it
// upstream.
func (s *Service) passRequest(agentID, key, label string, p *a2a.SendMessageRequest) (*Job, *a2a.SendMessageRequest, error) {
	if p.Message == nil {
		return nil, nil, switchboard.Errorf(switchboard.EINVALID, "Invalid params: message is required")
	}
	m := p.Message
	j := &Job{From: label, Message: m, TaskID: m.TaskID, ContextID: m.ContextID}
	if m.TaskID != "" {
		theirs, _, ok := s.ids.theirs(agentID, key, kindTask, string(m.TaskID))
		if !ok {
			return nil, nil, errTaskNotFound
		}
		j.UpstreamTaskID = a2a.TaskID(theirs)
	} else {
		j.TaskID, j.NewTask = a2a.TaskID(switchboard.NewID()), true
	}
	if m.ContextID != "" {
		j.UpstreamContextID, _, _ = s.ids.theirs(agentID, key, kindContext, m.ContextID)
	} else {
		j.ContextID = switchboard.NewID()
	}
	req := request(j)
	if c := p.Config; c != nil {
		req.Config = &a2a.SendMessageConfig{AcceptedOutputModes: c.AcceptedOutputModes, HistoryLength: c.HistoryLength, ReturnImmediately: c.ReturnImmediately}
	}
	return j, req, nil
}

// PassStream sends peer's message to agentID's upstream and hands each
// event of its answer, as ours, to fn until fn returns false or the
// upstream's stream ends: the upstream's own stream if its card says it
// streams, else its one answer to a blocking send.
func (s *Service) PassStream(ctx context.Context, agentID string, peer switchboard.Peer, p *a2a.SendMessageRequest, fn func(a2a.Event) (bool, error)) error {
	f, e, err := s.front(ctx, agentID)
	if err != nil {
		return err
	}
	key := peer.Key()
	j, req, err := s.passRequest(agentID, key, peer.Label, p)
	if err != nil {
		return err
	}
	if req.Config != nil {
		req.Config.ReturnImmediately = false
	}
	return s.passCall(ctx, agentID, f, e, peer.Label, "SendStreamingMessage", func(ctx context.Context, c *a2aclient.Client, streaming bool) error {
		if !streaming {
			res, err := c.SendMessage(ctx, req)
			if err != nil {
				return err
			}
			ev, _ := res.(a2a.Event)
			_, err = fn(s.passEvent(agentID, key, ev, j.TaskID, j.ContextID, e.secrets))
			return err
		}
		return s.passEvents(agentID, key, c.SendStreamingMessage(ctx, req), j.TaskID, j.ContextID, e.secrets, fn)
	})
}

// PassSubscribe follows the upstream's task that peer was given as id,
// handing each event, as ours, to fn until fn returns false or the
// upstream's stream ends.
func (s *Service) PassSubscribe(ctx context.Context, agentID string, peer switchboard.Peer, id a2a.TaskID, fn func(a2a.Event) (bool, error)) error {
	key := peer.Key()
	theirs, _, ok := s.ids.theirs(agentID, key, kindTask, string(id))
	if !ok {
		return errTaskNotFound
	}
	f, e, err := s.front(ctx, agentID)
	if err != nil {
		return err
	}
	return s.passCall(ctx, agentID, f, e, peer.Label, "SubscribeToTask", func(ctx context.Context, c *a2aclient.Client, streaming bool) error {
		if !streaming {
			return ErrPassThroughUnsupported // the upstream does not stream
		}
		return s.passEvents(agentID, key, c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: a2a.TaskID(theirs)}), id, "", e.secrets, fn)
	})
}

// passEvents hands each event of events to fn, as ours.
func (s *Service) passEvents(agentID, key string, events iter.Seq2[a2a.Event, error], taskID a2a.TaskID, contextID string, secrets *Secrets, fn func(a2a.Event) (bool, error)) error {
	for ev, err := range events {
		if err != nil {
			return err
		}
		if more, err := fn(s.passEvent(agentID, key, ev, taskID, contextID, secrets)); err != nil || !more {
			return err
		}
	}
	return nil
}

// passEvent returns an event of the upstream as ours, like passTask.
func (s *Service) passEvent(agentID, key string, ev a2a.Event, taskID a2a.TaskID, contextID string, secrets *Secrets) a2a.Event {
	if t, ok := ev.(*a2a.Task); ok {
		return s.passTask(agentID, key, t, taskID, contextID, secrets)
	}
	if ev == nil {
		return nil
	}
	theirs := ev.TaskInfo()
	if contextID == "" {
		if c, ok := s.oursOf(agentID, key, kindContext, theirs.ContextID); ok {
			contextID = c
		} else {
			contextID = switchboard.NewID()
		}
	}
	ours := a2a.TaskID(s.ids.ours(agentID, key, kindTask, string(theirs.TaskID), string(taskID)))
	ctxID := s.ids.ours(agentID, key, kindContext, theirs.ContextID, contextID)
	var out a2a.Event
	switch e := ev.(type) {
	case *a2a.Message:
		out = passMessage(e, ours, ctxID)
	case *a2a.TaskStatusUpdateEvent:
		c := *e
		c.TaskID, c.ContextID, c.Metadata = ours, ctxID, nil
		c.Status.Message = passMessage(e.Status.Message, ours, ctxID)
		out = &c
	case *a2a.TaskArtifactUpdateEvent:
		c := *e
		c.TaskID, c.ContextID, c.Metadata = ours, ctxID, nil
		out = &c
	default:
		return nil
	}
	return secrets.Event(out)
}

// PassGet returns the upstream's task that peer was given as id, as a
// task of ours.
func (s *Service) PassGet(ctx context.Context, agentID string, peer switchboard.Peer, id a2a.TaskID, historyLength *int) (*a2a.Task, error) {
	return s.passTaskCall(ctx, agentID, peer, id, "GetTask", func(ctx context.Context, c *a2aclient.Client, theirs a2a.TaskID) (*a2a.Task, error) {
		return c.GetTask(ctx, &a2a.GetTaskRequest{ID: theirs, HistoryLength: historyLength})
	})
}

// PassCancel cancels the upstream's task that peer was given as id.
func (s *Service) PassCancel(ctx context.Context, agentID string, peer switchboard.Peer, id a2a.TaskID) (*a2a.Task, error) {
	return s.passTaskCall(ctx, agentID, peer, id, "CancelTask", func(ctx context.Context, c *a2aclient.Client, theirs a2a.TaskID) (*a2a.Task, error) {
		return c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: theirs})
	})
}

// passTaskCall makes call on the upstream's task that peer was given as
// id, and returns the task it answers as ours.
func (s *Service) passTaskCall(ctx context.Context, agentID string, peer switchboard.Peer, id a2a.TaskID, method string,
	call func(ctx context.Context, c *a2aclient.Client, theirs a2a.TaskID) (*a2a.Task, error)) (*a2a.Task, error) {
	if id == "" {
		return nil, switchboard.Errorf(switchboard.EINVALID, "Invalid params: id is required")
	}
	key := peer.Key()
	theirs, _, ok := s.ids.theirs(agentID, key, kindTask, string(id))
	if !ok {
		return nil, errTaskNotFound
	}
	f, e, err := s.front(ctx, agentID)
	if err != nil {
		return nil, err
	}
	var t *a2a.Task
	err = s.passCall(ctx, agentID, f, e, peer.Label, method, func(ctx context.Context, c *a2aclient.Client, _ bool) (err error) {
		t, err = call(ctx, c, a2a.TaskID(theirs))
		return err
	})
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, errTaskNotFound
	}
	ctxID, _ := s.oursOf(agentID, key, kindContext, t.ContextID)
	return s.passTask(agentID, key, t, id, ctxID, e.secrets), nil
}

// oursOf returns our id of the upstream's id theirs, if peer was given one.
func (s *Service) oursOf(agentID, peer string, kind idKind, theirs string) (string, bool) {
	s.ids.mu.Lock()
	defer s.ids.mu.Unlock()
	el := s.ids.byTheirs[passKey{peer, kind, theirs}]
	if el == nil || el.Value.(*passEntry).agent != agentID {
		return "", false
	}
	return el.Value.(*passEntry).ours, true
}

// passCall makes one call of the upstream with the front's forwarder, as
// the peer labeled from. An upstream's A2A error about the task is the
// peer's answer as ours; any other failure is recorded as the front's
// last, and the peer gets the generic message of its cause.
func (s *Service) passCall(ctx context.Context, agentID string, f *switchboard.Front, e *entry, from, method string, call func(ctx context.Context, c *a2aclient.Client, streaming bool) error) error {
	obs := &observation{}
	err := e.fw.Do(withObservation(ctx, obs), from, call)
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(err, a2a.ErrTaskNotFound):
		return errTaskNotFound
	case errors.Is(err, a2a.ErrTaskNotCancelable):
		return switchboard.Errorf(switchboard.ENOTCANCELABLE, "Task cannot be canceled")
	case errors.Is(err, a2a.ErrUnsupportedContentType):
		return switchboard.Errorf(switchboard.ECONTENTTYPE, "Incompatible content types")
	case errors.Is(err, a2a.ErrUnsupportedOperation):
		return switchboard.Errorf(switchboard.EUNSUPPORTED, "This operation is not supported by the agent")
	case switchboard.ErrorCode(err) != switchboard.EINTERNAL:
		return err // ours (a refusal, a stream's peer gone)
	case ctx.Err() != nil:
		return context.Cause(ctx)
	}
	return s.passFailed(ctx, agentID, f, obs, err, method, from)
}

// passFailed records a failure of the upstream and returns the peer's
// answer: the generic message of its cause.
func (s *Service) passFailed(ctx context.Context, agentID string, f *switchboard.Front, obs *observation, err error, method, from string) error {
	reason := s.recordFailure(ctx, &switchboard.Agent{ID: agentID}, f, obs, err, method, from)
	return switchboard.Errorf(switchboard.EUPSTREAM, "%s", peerMessage(reason))
}

// passTask returns the upstream's task t as ours: our ids (taskID and
// contextID for ids the peer was not given yet), the messages of its
// history and status in them, without the upstream's metadata and
// without the values of secrets. A context of the upstream's that the
// peer was not given an id of gets a new one.
func (s *Service) passTask(agentID, peer string, t *a2a.Task, taskID a2a.TaskID, contextID string, secrets *Secrets) *a2a.Task {
	if contextID == "" {
		contextID = switchboard.NewID()
	}
	ours := a2a.TaskID(s.ids.ours(agentID, peer, kindTask, string(t.ID), string(taskID)))
	ctxID := s.ids.ours(agentID, peer, kindContext, t.ContextID, contextID)
	out := &a2a.Task{ID: ours, ContextID: ctxID, Status: t.Status, Artifacts: t.Artifacts}
	out.Status.Message = passMessage(t.Status.Message, ours, ctxID)
	if t.History != nil {
		out.History = make([]*a2a.Message, len(t.History))
		for i, m := range t.History {
			out.History[i] = passMessage(m, ours, ctxID)
		}
	}
	return secrets.Event(out).(*a2a.Task)
}

// passMessage returns a copy of m in our task and context.
func passMessage(m *a2a.Message, taskID a2a.TaskID, contextID string) *a2a.Message {
	if m == nil {
		return nil
	}
	c := *m
	c.TaskID, c.ContextID, c.ReferenceTasks = taskID, contextID, nil
	return &c
}

// Do makes one call of the upstream with its client, as the peer labeled
// from, bounded by the forwarder's timeout; streaming says whether its
// card says it streams. A failure that is not the upstream's A2A answer
// has the upstream's card read again next time.
func (f *Forwarder) Do(ctx context.Context, from string, call func(ctx context.Context, c *a2aclient.Client, streaming bool) error) error {
	ctx, cancel := context.WithTimeoutCause(ctx, f.cfg.Timeout, ErrTimeout)
	defer cancel()
	ctx = WithPeer(ctx, from)
	up, err := f.connect(ctx)
	if err != nil {
		return err
	}
	defer f.release(up)
	err = call(ctx, up.client, up.streaming)
	if err != nil && ctx.Err() == nil && !a2aAnswer(err) {
		f.reset(up)
	}
	return err
}

// a2aAnswer reports whether err is an A2A error the upstream answered.
func a2aAnswer(err error) bool {
	for _, e := range []error{a2a.ErrTaskNotFound, a2a.ErrTaskNotCancelable, a2a.ErrUnsupportedContentType,
		a2a.ErrUnsupportedOperation, a2a.ErrInvalidParams, a2a.ErrPushNotificationNotSupported} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
