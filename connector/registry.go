package connector

import (
	"context"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// retention is how long the client remembers a task it no longer works
// on, to recognise a redelivery of a message it already handled.
const retention = time.Hour

// taskRecord is what the client knows about one task.
type taskRecord struct {
	contextID string
	messages  map[string]bool                   // the message ids offered so far
	works     map[*Work]context.CancelCauseFunc // works queued or running, with their cancel
	final     a2a.TaskState                     // the final state the server confirmed, or canceled
	idleSince time.Time                         // when works last became empty
}

// registry holds the tasks the client has been offered: it de-duplicates
// offers, cancels the works of a canceled task and lists what the client
// holds.
type registry struct {
	mu    sync.Mutex
	tasks map[a2a.TaskID]*taskRecord // guarded by mu
}

func newRegistry() *registry {
	return &registry{tasks: make(map[a2a.TaskID]*taskRecord)}
}

// accept records the offer of w's message and registers w with the
// function that cancels it. For a message already offered it reports dup,
// does not register w, and returns the task's final state if the server
// confirmed one.
func (r *registry) accept(w *Work, cancel context.CancelCauseFunc) (final a2a.TaskState, dup bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pruneLocked(time.Now())
	t := r.tasks[w.TaskID]
	if t == nil {
		t = &taskRecord{contextID: w.ContextID, messages: make(map[string]bool), works: make(map[*Work]context.CancelCauseFunc)}
		r.tasks[w.TaskID] = t
	}
	if t.messages[w.MessageID] {
		return t.final, true
	}
	t.messages[w.MessageID] = true
	t.works[w] = cancel
	return t.final, false
}

// pruneLocked forgets the tasks idle for longer than retention.
func (r *registry) pruneLocked(now time.Time) {
	for id, t := range r.tasks {
		if len(t.works) == 0 && now.Sub(t.idleSince) > retention {
			delete(r.tasks, id)
		}
	}
}

// finish unregisters a work that ended.
func (r *registry) finish(w *Work) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.tasks[w.TaskID]; t != nil {
		delete(t.works, w)
		if len(t.works) == 0 {
			t.idleSince = time.Now()
		}
	}
}

// forget unregisters a work that was refused, and forgets that its message
// was offered: an offer of it again is new work.
func (r *registry) forget(w *Work) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.tasks[w.TaskID]; t != nil {
		delete(t.works, w)
		delete(t.messages, w.MessageID)
		if len(t.works) == 0 {
			t.idleSince = time.Now()
		}
	}
}

// confirm records a state of a task that the server confirmed; only final
// states are kept.
func (r *registry) confirm(id a2a.TaskID, state a2a.TaskState) {
	if !state.Terminal() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.tasks[id]; t != nil {
		t.final = state
	}
}

// cancel marks a task canceled and cancels its works with ErrTaskCanceled.
// It returns the task's context id, if the task is known.
func (r *registry) cancel(id a2a.TaskID) (contextID string) {
	r.mu.Lock()
	t := r.tasks[id]
	var cancels []context.CancelCauseFunc
	if t != nil {
		t.final = a2a.TaskStateCanceled
		contextID = t.contextID
		for _, c := range t.works {
			cancels = append(cancels, c)
		}
	}
	r.mu.Unlock()
	for _, c := range cancels {
		c(ErrTaskCanceled)
	}
	return contextID
}

// holding returns the tasks with works queued or running.
func (r *registry) holding() []a2a.TaskID {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []a2a.TaskID
	for id, t := range r.tasks {
		if len(t.works) > 0 {
			out = append(out, id)
		}
	}
	return out
}
