package switchboard

import (
	"context"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// DefaultBlockingTimeout is how long a blocking SendMessage waits for the
// agent's answer before returning the task as it stands.
const DefaultBlockingTimeout = 60 * time.Second

// WaitForTurn waits until the task's log, after afterSeq, reaches a final
// state or one in which the task waits for its peer, or until timeout, and
// returns the task as it then stands. It watches the log, so it sees the
// answer whichever instance records it. When the turn ended with an unusable
// agent answer, it returns the task with an EINVALIDAGENTRESPONSE error.
func (s *TaskService) WaitForTurn(ctx context.Context, id a2a.TaskID, afterSeq int64, timeout time.Duration) (*Task, error) {
	wait, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return s.WaitForTurnUntil(ctx, id, afterSeq, wait)
}

// WaitForTurnUntil is WaitForTurn with the end of the wait given as a
// context: when wait ends (a timeout, or the server shutting down) the
// task is returned as it stands. When ctx (the caller's) ends, it returns
// ctx's error.
func (s *TaskService) WaitForTurnUntil(ctx context.Context, id a2a.TaskID, afterSeq int64, wait context.Context) (*Task, error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(wait, cancel)()
	// A turn that ends on this instance is handed over with the task as
	// written; one that ends elsewhere is read from the log and the store.
	local := s.turns.watch(id, afterSeq)
	defer s.turns.forget(id, local)
	var invalid bool
	err := s.follow(wctx, id, afterSeq, local.done, func(ev *TaskEvent) (bool, error) {
		if EndsTurn(ev.Event) {
			invalid = InvalidAnswer(ev.Event)
			return false, nil
		}
		return true, nil
	})
	var t *Task
	switch {
	case err == errHandedOver:
		t, invalid = local.task, local.invalid
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err() // the caller went away
	case err != nil && wctx.Err() == nil:
		return nil, err
	default:
		select {
		case <-local.done: // read from the log, and handed over meanwhile
			t = local.task
		default:
			if t, err = s.tasks.FindTaskByID(ctx, id); err != nil {
				return nil, taskNotFound(err)
			}
		}
	}
	if invalid {
		return t, Errorf(EINVALIDAGENTRESPONSE, "the agent sent an invalid response: %s", statusText(t))
	}
	return t, nil
}

// statusText returns the text of a task's status message.
func statusText(t *Task) string {
	if m := t.A2A.Status.Message; m != nil {
		return MessageText(m)
	}
	return ""
}
