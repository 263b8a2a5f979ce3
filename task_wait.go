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
	var invalid bool
	err := s.FollowTask(wctx, id, afterSeq, func(ev *TaskEvent) (bool, error) {
		if EndsTurn(ev.Event) {
			invalid = InvalidAnswer(ev.Event)
			return false, nil
		}
		return true, nil
	})
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err() // the caller went away
	}
	if err != nil && wctx.Err() == nil {
		return nil, err
	}
	t, err := s.tasks.FindTaskByID(ctx, id)
	if err != nil {
		return nil, taskNotFound(err)
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
