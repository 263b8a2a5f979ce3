package connector

import (
	"context"
	"fmt"
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

// startWork runs the handler for w in its own goroutine once a slot is
// free. A work canceled while it waits for a slot never runs.
func (c *Client) startWork(w *Work) {
	c.handlers.Add(1)
	go func() {
		defer c.handlers.Done()
		defer c.reg.finish(w)
		defer w.cancel(ErrWorkDone)
		select {
		case c.slots <- struct{}{}:
		case <-w.ctx.Done():
			return
		}
		defer func() { <-c.slots }()
		panicked := c.runHandler(w)
		c.afterHandler(w, panicked)
	}()
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
