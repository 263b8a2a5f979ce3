package connector

import (
	"container/list"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// retention is how long the client remembers a task it no longer works
// on, to recognise a redelivery of a message it already handled: as long
// as the server's default delivery deadline.
const retention = time.Hour

// maxIdleTasks bounds the tasks remembered after their works ended, the
// oldest forgotten first: an agent that finishes 1,000 tasks a second
// still recognises the redeliveries of the last 200 seconds (a redelivery
// comes after a lost acknowledgement, within a lease or a reconnection),
// in tens of megabytes instead of gigabytes.
const maxIdleTasks = 200_000

// taskRecord is what the client knows about one task. Slices, not maps:
// a task has a message or a few, and a work running at a time, and the
// client may remember maxIdleTasks of them.
type taskRecord struct {
	id        a2a.TaskID
	contextID string
	messages  []string      // the message ids offered so far
	works     []runningWork // works queued or running
	final     a2a.TaskState // the final state the server confirmed, or canceled
	idleSince time.Time     // when works last became empty
	idle      *list.Element // its place in registry.idle while works is empty
}

// runningWork is a work queued or running, with the function that cancels it.
type runningWork struct {
	w      *Work
	cancel context.CancelCauseFunc
}

// offered reports whether the message was offered for the task before.
func (t *taskRecord) offered(messageID string) bool {
	return slices.Contains(t.messages, messageID)
}

// registry holds the tasks the client has been offered: it de-duplicates
// offers, cancels the works of a canceled task and lists what the client
// holds.
type registry struct {
	mu    sync.Mutex
	tasks map[a2a.TaskID]*taskRecord // guarded by mu
	// idle lists the tasks whose works ended, in the order they became
	// idle, so the oldest come first: forgetting the expired ones reads
	// only those, however many tasks the client remembers. Guarded by mu.
	idle list.List
	// busy are the tasks with works queued or running, which a new
	// connection names to the server. Guarded by mu.
	busy map[a2a.TaskID]*taskRecord
	now  func() time.Time // immutable; time.Now but in tests
}

func newRegistry() *registry {
	return &registry{tasks: make(map[a2a.TaskID]*taskRecord), busy: make(map[a2a.TaskID]*taskRecord), now: time.Now}
}

// accept records the offer of w's message and registers w with the
// function that cancels it. For a message already offered it reports dup,
// does not register w, and returns the task's final state if the server
// confirmed one.
func (r *registry) accept(w *Work, cancel context.CancelCauseFunc) (final a2a.TaskState, dup bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pruneLocked(r.now())
	t := r.tasks[w.TaskID]
	if t == nil {
		t = &taskRecord{id: w.TaskID, contextID: w.ContextID}
		r.tasks[w.TaskID] = t
	}
	if t.offered(w.MessageID) {
		return t.final, true
	}
	t.messages = append(t.messages, w.MessageID)
	t.works = append(t.works, runningWork{w, cancel})
	r.busy[t.id] = t
	if t.idle != nil {
		r.idle.Remove(t.idle)
		t.idle = nil
	}
	return t.final, false
}

// pruneLocked forgets the tasks idle for longer than retention, and the
// oldest idle ones beyond maxIdleTasks.
func (r *registry) pruneLocked(now time.Time) {
	for e := r.idle.Front(); e != nil; e = r.idle.Front() {
		t := e.Value.(*taskRecord)
		if r.idle.Len() <= maxIdleTasks && now.Sub(t.idleSince) <= retention {
			return
		}
		r.idle.Remove(e)
		delete(r.tasks, t.id)
	}
}

// unregisterLocked removes w from its task's works; a task left without
// works starts being idle.
func (r *registry) unregisterLocked(t *taskRecord, w *Work) {
	t.works = slices.DeleteFunc(t.works, func(rw runningWork) bool { return rw.w == w })
	if len(t.works) == 0 && t.idle == nil {
		delete(r.busy, t.id)
		t.idleSince = r.now()
		t.idle = r.idle.PushBack(t)
		r.pruneLocked(t.idleSince)
	}
}

// finish unregisters a work that ended.
func (r *registry) finish(w *Work) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.tasks[w.TaskID]; t != nil {
		r.unregisterLocked(t, w)
	}
}

// forget unregisters a work that was refused, and forgets that its message
// was offered: an offer of it again is new work.
func (r *registry) forget(w *Work) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.tasks[w.TaskID]; t != nil {
		t.messages = slices.DeleteFunc(t.messages, func(id string) bool { return id == w.MessageID })
		r.unregisterLocked(t, w)
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
		for _, rw := range t.works {
			cancels = append(cancels, rw.cancel)
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
	out := make([]a2a.TaskID, 0, len(r.busy))
	for id := range r.busy {
		out = append(out, id)
	}
	return out
}
