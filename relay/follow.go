package relay

import (
	"context"
	"errors"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// followBatch is how many events FollowTask reads from the store at once.
const followBatch = 256

// FollowTask calls emit with each event in the task's log after afterSeq, in
// order, first those already written and then each new one as it is written
// (by this instance or any other), until emit returns false or an error, or
// ctx ends. It watches the bus before its first read, so no event written in
// between is missed, and rereads the log every StreamPoll even without a
// hint. It returns nil when emit stopped it, emit's error, ctx's cause, or
// ENOTFOUND once the task is deleted (with its agent).
func (s *Service) FollowTask(ctx context.Context, id a2a.TaskID, afterSeq int64, emit func(*switchboard.TaskEvent) (more bool, err error)) error {
	return s.follow(ctx, id, afterSeq, nil, emit)
}

// errHandedOver ends follow when its handedOver channel closes.
var errHandedOver = errors.New("the event was handed over in memory")

// follow is FollowTask, which also ends, with errHandedOver, as soon as
// handedOver is closed (a nil channel never is): before each read of the
// log, and while it waits for a hint.
func (s *Service) follow(ctx context.Context, id a2a.TaskID, afterSeq int64, handedOver <-chan struct{}, emit func(*switchboard.TaskEvent) (more bool, err error)) error {
	w, err := s.bus.Watch(ctx, switchboard.TaskSubject(id))
	if err != nil {
		return err
	}
	defer w.Close()
	return s.followWatch(ctx, w, id, afterSeq, handedOver, false, emit)
}

// followWatch is follow on w, a watch of the task's subject that the caller
// started and closes. fresh says w began before anything after afterSeq
// could be written: the log is then first read on a hint or the poll, not
// at once.
func (s *Service) followWatch(ctx context.Context, w switchboard.Watch, id a2a.TaskID, afterSeq int64, handedOver <-chan struct{}, fresh bool, emit func(*switchboard.TaskEvent) (more bool, err error)) error {
	poll := time.NewTicker(s.StreamPoll)
	defer poll.Stop()

	cursor := afterSeq
	polled := false // the last wait ended with the poll's tick, not a hint
	for {
		select {
		case <-handedOver:
			return errHandedOver
		default:
		}
		var err error
		if fresh {
			fresh = false
			if polled, err = waitForHint(ctx, w, poll, handedOver); err != nil {
				return err
			}
			continue
		}
		events, err := s.tasks.FindTaskEvents(ctx, id, cursor, followBatch)
		if err != nil {
			return err
		}
		if len(events) == 0 && polled {
			// Nothing new in a while: a task deleted since, with its
			// agent, has nothing more to wait for.
			if _, err := s.tasks.FindTaskByID(ctx, id); switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
				return taskNotFound(err)
			}
		}
		for _, ev := range events {
			cursor = ev.Seq
			more, err := emit(ev)
			if err != nil || !more {
				return err
			}
		}
		if len(events) == followBatch {
			continue
		}
		if polled, err = waitForHint(ctx, w, poll, handedOver); err != nil {
			return err
		}
	}
}

// waitForHint waits for a hint on w or the poll's next tick, and reports
// which (polled: the tick); it returns errHandedOver when handedOver
// closes first, and ctx's cause when ctx ends.
func waitForHint(ctx context.Context, w switchboard.Watch, poll *time.Ticker, handedOver <-chan struct{}) (polled bool, err error) {
	select {
	case <-handedOver:
		return false, errHandedOver
	case <-ctx.Done():
		return false, context.Cause(ctx)
	case _, ok := <-w.C():
		if !ok {
			return false, switchboard.ErrBusClosed
		}
		return false, nil
	case <-poll.C:
		return true, nil
	}
}

// EventState returns the task state an event reports: the state of a task
// snapshot or of a status update. Other events report none.
func EventState(ev a2a.Event) (a2a.TaskState, bool) {
	switch e := ev.(type) {
	case *a2a.Task:
		return e.Status.State, true
	case *a2a.TaskStatusUpdateEvent:
		return e.Status.State, true
	}
	return a2a.TaskStateUnspecified, false
}

// EndsTurn reports whether an event ends a stream that follows one turn of
// work: a final state, or a state in which the task waits for its peer.
func EndsTurn(ev a2a.Event) bool {
	st, ok := EventState(ev)
	return ok && (st.Terminal() || switchboard.Interrupted(st))
}
