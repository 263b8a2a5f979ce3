package connector

import (
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard/a2ajson"
	"github.com/switchboard-dev/switchboard/connproto"
)

// onFrame handles one frame from the server.
func (s *session) onFrame(data []byte) {
	if connproto.IsBatch(data) {
		s.onBatch(data)
		return
	}
	if p, ok := connproto.ParseSessionFrame(data); ok {
		s.onSessionFrame(&p) // a live session's frame, read in one pass
		return
	}
	var f connproto.Frame
	if err := json.Unmarshal(data, &f); err != nil || f.JSONRPC != "2.0" {
		s.log.Debug("ignoring a frame that is not JSON-RPC 2.0")
		return
	}
	switch {
	case f.IsResponse():
		s.onResponse(&f)
	case f.Method != "":
		s.onRequest(&f)
	}
}

// onBatch handles a session batch from the server: its notifications, in
// order, read in one pass (connproto.ParseSessionBatch) or, failing that,
// each as if it came alone.
func (s *session) onBatch(data []byte) {
	notes, ok := connproto.ParseSessionBatch(data, s.readNotes[:0])
	if !ok {
		var list []json.RawMessage
		if json.Unmarshal(data, &list) != nil {
			s.log.Debug("ignoring a batch that is not JSON")
			return
		}
		for _, m := range list {
			if len(m) > 0 && m[0] == '{' {
				s.onFrame(m)
			}
		}
		return
	}
	for i := range notes {
		n := &notes[i]
		if !n.Ack {
			s.onSessionFrame(&n.Params)
		} else if ls := s.c.live.get(n.Params.SessionID); ls != nil {
			ls.onAck(n.Params.Seq)
		}
	}
	clear(notes) // keep no frame
	s.readNotes = notes[:0]
}

// onResponse hands the answer to a call to its caller.
func (s *session) onResponse(f *connproto.Frame) {
	var id string
	if json.Unmarshal(f.ID, &id) != nil || id == "" {
		if f.Error != nil {
			s.log.Warn("the server reported an error", "code", f.Error.Code, "message", f.Error.Message)
		}
		return
	}
	if s.c.live.onResponse(s, id, f) {
		return
	}
	res := callResult{result: f.Result}
	if f.Error != nil {
		res = callResult{err: f.Error}
	}
	if !s.c.out.resolve(id, res) {
		s.log.Debug("answer to a call no one waits for", "id", id)
	}
}

// onRequest handles a request from the server. This switch is the
// protocol's dispatch: every method the server may send.
func (s *session) onRequest(f *connproto.Frame) {
	switch f.Method {
	case connproto.MethodSendMessage:
		s.onSendMessage(f)
	case connproto.MethodCancelTask:
		s.onCancelTask(f)
	case connproto.MethodPing:
		s.reply(f.ID, "pong")
	case connproto.MethodSessionOpen, connproto.MethodSessionFrame, connproto.MethodSessionAck, connproto.MethodSessionResend, connproto.MethodSessionClose:
		s.onSessionRequest(f)
	default:
		s.replyError(f.ID, connproto.CodeMethodNotFound, "method not found: "+truncate(f.Method, 64))
	}
}

// onSendMessage queues the work of a message for the agent. Its offer is
// answered with the task in TASK_STATE_SUBMITTED, which the server takes
// as a bare acknowledgement: the task is reported working only when a
// handler starts on it. While the queue is full the answer waits (see
// workQueue). A message offered again (delivery is at least once) is
// acknowledged without running the handler again.
func (s *session) onSendMessage(f *connproto.Frame) {
	if s.c.Handler == nil {
		return // this client takes no tasks: the work waits at the server
	}
	var req a2a.SendMessageRequest
	if err := a2ajson.UnmarshalSendMessageRequest(f.Params, &req); err != nil || req.Message == nil || req.Message.TaskID == "" || req.Message.ID == "" {
		s.replyError(f.ID, connproto.CodeInvalidParams, "SendMessage params must hold a message with a messageId and a taskId")
		return
	}
	w := s.c.newWork(&req, f.TraceParent)
	final, dup := s.c.reg.accept(w, w.cancel)
	if dup {
		w.cancel(ErrWorkDone)
		s.reply(f.ID, taskAnswer(w.TaskID, w.ContextID, dupAnswerState(final)))
		s.log.Info("message offered again; acknowledged without working on it twice",
			"task_id", w.TaskID, "message_id", truncate(w.MessageID, 64), "attempt", w.Attempt)
		return
	}
	ack := func(working bool) {
		state := a2a.TaskStateSubmitted
		if working {
			state = a2a.TaskStateWorking
		}
		s.reply(f.ID, taskAnswer(w.TaskID, w.ContextID, state))
	}
	if err := s.c.queue.push(w, ack); err != nil {
		s.c.reg.forget(w)
		w.cancel(err)
		if errors.Is(err, errQueueFull) {
			// Only a server that leaves more offers unanswered than
			// maxWithheld gets here; the task fails with the reason.
			s.replyError(f.ID, connproto.CodeInternal, "the connector is busy: too many tasks wait for it")
			s.log.Warn("refused a task: too many offers wait for room in the queue", "task_id", w.TaskID)
		}
		return // stopping: the offer stays unanswered, and the server offers it again
	}
	s.log.Info("task received", "task_id", w.TaskID, "message_id", truncate(w.MessageID, 64),
		"from", truncate(w.From, 64), "new_task", w.NewTask)
}

// dupAnswerState is the state a repeated offer is answered with: the final
// state the server confirmed, or submitted, which the server takes as a
// bare acknowledgement. Anything else could undo a report the server
// already applied (the answer is applied after the reports written before
// it), such as input-required going back to working.
func dupAnswerState(final a2a.TaskState) a2a.TaskState {
	if final.Terminal() {
		return final
	}
	return a2a.TaskStateSubmitted
}

// onCancelTask cancels the works of a task the peer canceled, and answers
// at once.
func (s *session) onCancelTask(f *connproto.Frame) {
	var p a2a.CancelTaskRequest
	if err := json.Unmarshal(f.Params, &p); err != nil || p.ID == "" {
		s.replyError(f.ID, connproto.CodeInvalidParams, "CancelTask params must be {\"id\": …}")
		return
	}
	contextID := s.c.reg.cancel(p.ID)
	s.reply(f.ID, taskAnswer(p.ID, contextID, a2a.TaskStateCanceled))
	s.log.Info("task canceled by the peer", "task_id", p.ID)
}

// taskAnswer is a SendMessageResponse holding a task in state.
func taskAnswer(id a2a.TaskID, contextID string, state a2a.TaskState) a2a.StreamResponse {
	return a2a.StreamResponse{Event: &a2a.Task{ID: id, ContextID: contextID, Status: a2a.TaskStatus{State: state}}}
}

// reply queues an answer to a request (none to a notification).
func (s *session) reply(id json.RawMessage, v any) {
	if len(id) > 0 {
		s.queue(connproto.Result{JSONRPC: "2.0", ID: id, Result: v})
	}
}

// replyError queues an error answer.
func (s *session) replyError(id json.RawMessage, code int, msg string) {
	if len(id) > 0 {
		s.queue(connproto.Failure{JSONRPC: "2.0", ID: id, Error: connproto.Error{Code: code, Message: msg}})
	}
}

// queue hands an answer to the write loop; it gives up when the session
// ends.
func (s *session) queue(v any) {
	b, err := connproto.Encode(v)
	if err != nil {
		s.log.Error("encode an answer", "err", err)
		return
	}
	select {
	case s.answers <- b:
	case <-s.ctx.Done():
	}
}

// truncate cuts s to at most n bytes at a character's start, marking the
// cut: switchboard.Truncate, which this client package does not import.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
