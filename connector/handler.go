package connector

import (
	"context"
	"errors"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard/connproto"
)

// Handler does the work of one message sent to the agent.
type Handler interface {
	// Handle works on w and reports its outcome through w's methods,
	// ending the turn (Reply, Complete, Fail, Reject, InputRequired, or an
	// Update with such a state). It runs in its own goroutine, at most
	// Client.MaxConcurrent at a time. ctx ends when the peer cancels the
	// task (context.Cause(ctx) is ErrTaskCanceled) or the client stops;
	// Handle must then return soon, because Client.Run waits for it.
	Handle(ctx context.Context, w *Work)
}

// HandlerFunc adapts a function to a Handler.
type HandlerFunc func(ctx context.Context, w *Work)

// Handle calls f(ctx, w).
func (f HandlerFunc) Handle(ctx context.Context, w *Work) { f(ctx, w) }

// Reasons the client fails a task with when the handler did not end the turn.
const (
	reasonNoAnswer = "the agent's handler ended without an answer"
	reasonPanic    = "the agent's handler failed"
)

// startWorkers starts the MaxConcurrent goroutines that run the handlers
// of queued works, one at a time each, until the queue closes.
func (c *Client) startWorkers() {
	for range c.workers {
		c.handlers.Add(1)
		go func() {
			defer c.handlers.Done()
			for w := c.queue.next(); w != nil; w = c.queue.next() {
				c.runWork(w)
			}
		}()
	}
}

// runWork reports that w started, runs its handler, and fails the task if
// the handler did not end the turn.
func (c *Client) runWork(w *Work) {
	defer c.reg.finish(w)
	defer w.cancel(ErrWorkDone)
	if !c.begin(w) {
		return
	}
	panicked := c.runHandler(w)
	c.afterHandler(w, panicked)
}

// begin reports the task working, now that a handler is about to start on
// it, and reports whether to start it: not when the work was canceled
// meanwhile, the task finished while it waited (canceled, or failed at the
// server's delivery deadline), or the task is no longer the agent's.
func (c *Client) begin(w *Work) bool {
	if w.ctx.Err() != nil {
		return false
	}
	if w.startReported {
		c.log.Debug("task started", "task_id", w.TaskID, "message_id", truncate(w.MessageID, 64))
		return true
	}
	state, err := w.update(&a2a.TaskStatusUpdateEvent{Status: a2a.TaskStatus{State: a2a.TaskStateWorking}})
	var rpcErr *RPCError
	switch {
	case w.ctx.Err() != nil:
		return false
	case errors.As(err, &rpcErr) && rpcErr.Code == connproto.CodeTaskNotFound:
		c.log.Warn("the server no longer knows a task that waited for a handler; not working on it", "task_id", w.TaskID)
		return false
	case err != nil:
		// The handler's own reports will tell whether the server takes them.
		c.log.Warn("report that a task started", "task_id", w.TaskID, "err", err)
	case state.Terminal():
		c.log.Info("a task finished while it waited for a handler; not working on it", "task_id", w.TaskID, "state", state)
		return false
	}
	c.log.Debug("task started", "task_id", w.TaskID, "message_id", truncate(w.MessageID, 64))
	return true
}

// runHandler calls the handler and reports whether it panicked.
func (c *Client) runHandler(w *Work) (panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			panicked = true
			c.log.Error("handler panicked", "task_id", w.TaskID, "message_id", w.MessageID, "panic", fmt.Sprint(r))
		}
	}()
	c.Handler.Handle(w.ctx, w)
	return false
}

// afterHandler fails the task if the handler returned without ending the
// turn, unless the task was canceled or the client is stopping.
func (c *Client) afterHandler(w *Work, panicked bool) {
	if w.ended.Load() || w.ctx.Err() != nil {
		return
	}
	reason := reasonNoAnswer
	if panicked {
		reason = reasonPanic
	}
	if err := w.Fail(reason); err != nil && w.ctx.Err() == nil {
		c.log.Warn("report a handler that ended without an answer", "task_id", w.TaskID, "err", err)
		return
	}
	c.log.Info("failed a task whose handler ended without an answer", "task_id", w.TaskID, "reason", reason)
}
