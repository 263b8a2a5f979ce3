package relay

import (
	"context"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// DefaultBlockingTimeout is how long a blocking SendMessage waits for the
// agent's answer before returning the task as it stands.
const DefaultBlockingTimeout = 60 * time.Second

// WaitForTurn waits until the task's log, after afterSeq, reaches a final
// state or one in which the task waits for its peer, or until timeout, and
// returns the task as it then stands. It watches the log, so it sees the
// answer whichever instance records it. When the turn ended with an unusable
// agent answer, it returns the task with an EINVALIDAGENTRESPONSE error.
func (s *Service) WaitForTurn(ctx context.Context, id a2a.TaskID, afterSeq int64, timeout time.Duration) (*switchboard.Task, error) {
	wait, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return s.WaitForTurnUntil(ctx, id, afterSeq, wait)
}

// WaitForTurnUntil is WaitForTurn with the end of the wait given as a
// context: when wait ends (a timeout, or the server shutting down) the
// task is returned as it stands. When ctx (the caller's) ends, it returns
// ctx's error.
func (s *Service) WaitForTurnUntil(ctx context.Context, id a2a.TaskID, afterSeq int64, wait context.Context) (*switchboard.Task, error) {
	w, err := s.watchTurn(ctx, id, afterSeq)
	if err != nil {
		return nil, err
	}
	defer w.close()
	return s.waitForTurn(ctx, w, false, wait)
}

// SendMessageAndWait is SendMessage followed by WaitForTurnUntil, for a
// blocking send to an agent delivered to live. A new task is watched from
// before it is committed, so that the wait needs no first read of its log:
// nothing the agent does can come before the watch. A message sent again
// whose turn has ended returns its task at once.
func (s *Service) SendMessageAndWait(ctx context.Context, agent *switchboard.Agent, caller switchboard.Peer, req *a2a.SendMessageRequest, proto switchboard.ProtocolVersion, wait context.Context) (*switchboard.Task, error) {
	b := &blocking{wait: wait}
	t, _, err := s.sendMessage(ctx, agent, caller, req, proto, b)
	w := b.watch
	if w != nil {
		defer w.close()
	}
	if err != nil {
		return nil, err
	}
	if st := t.State(); st.Terminal() || switchboard.Interrupted(st) {
		return t, nil
	}
	if w == nil || w.id != t.ID() || t.Seq != w.afterSeq {
		return s.WaitForTurnUntil(ctx, t.ID(), t.Seq, wait)
	}
	return s.waitForTurn(ctx, w, true, wait)
}

// createdSeq is the sequence number of a new task's first event.
const createdSeq = 1

// turnWatch is a wait for the end of a turn of a task after afterSeq: the
// watch of the task's log on the bus, and the task's local waiter, through
// which a turn that ends on this instance is handed over with the task as
// written (one that ends elsewhere is read from the log and the store).
type turnWatch struct {
	s        *Service
	id       a2a.TaskID
	afterSeq int64
	bus      switchboard.Watch
	local    *turnWaiter
}

// watchTurn starts watching for the end of a turn of task id after
// afterSeq. The caller must close the watch.
func (s *Service) watchTurn(ctx context.Context, id a2a.TaskID, afterSeq int64) (*turnWatch, error) {
	b, err := s.bus.Watch(ctx, switchboard.TaskSubject(id))
	if err != nil {
		return nil, err
	}
	return &turnWatch{s: s, id: id, afterSeq: afterSeq, bus: b, local: s.turns.watch(id, afterSeq)}, nil
}

// close ends the watch.
func (w *turnWatch) close() {
	w.bus.Close()
	w.s.turns.forget(w.id, w.local)
}

// waitForTurn is WaitForTurnUntil on a watch. fresh says the watch began
// before anything after its afterSeq could be written, so that the log
// needs reading only once the bus or the poll says so.
func (s *Service) waitForTurn(ctx context.Context, w *turnWatch, fresh bool, wait context.Context) (*switchboard.Task, error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(wait, cancel)()
	id, local := w.id, w.local
	var fault switchboard.Code
	err := s.followWatch(wctx, w.bus, id, w.afterSeq, local.done, fresh, func(ev *switchboard.TaskEvent) (bool, error) {
		if EndsTurn(ev.Event) {
			fault = turnFault(ev.Event)
			return false, nil
		}
		return true, nil
	})
	var t *switchboard.Task
	switch {
	case err == errHandedOver:
		t, fault = local.task, local.fault
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
	switch fault {
	case switchboard.EINVALIDAGENTRESPONSE:
		return t, switchboard.Errorf(switchboard.EINVALIDAGENTRESPONSE, "the agent sent an invalid response: %s", statusText(t))
	case switchboard.EUPSTREAM:
		return t, switchboard.Errorf(switchboard.EUPSTREAM, "%s", statusText(t))
	}
	return t, nil
}

// statusText returns the text of a task's status message.
func statusText(t *switchboard.Task) string {
	if m := t.A2A.Status.Message; m != nil {
		return switchboard.MessageText(m)
	}
	return ""
}
