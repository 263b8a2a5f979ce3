package relay

import (
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// localTurns hands the end of a turn, recorded by this instance, straight to
// the blocking calls on this instance that wait for it, with the task as
// just written: they need not read back from the store what was just
// written to it. Waiters on other instances hear of the change on the bus
// and read the store, as they would without this.
type localTurns struct {
	mu      sync.Mutex
	waiters map[a2a.TaskID][]*turnWaiter
}

// turnWaiter is one call waiting for a turn of a task to end.
type turnWaiter struct {
	afterSeq int64
	done     chan struct{} // closed once task and fault are set
	task     *switchboard.Task
	fault    switchboard.Code // what the turn's end makes a blocking caller answer (turnFault)
}

// watch registers a wait for the end of a turn after afterSeq.
func (l *localTurns) watch(id a2a.TaskID, afterSeq int64) *turnWaiter {
	w := &turnWaiter{afterSeq: afterSeq, done: make(chan struct{})}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.waiters == nil {
		l.waiters = make(map[a2a.TaskID][]*turnWaiter)
	}
	l.waiters[id] = append(l.waiters[id], w)
	return w
}

// forget removes w, which may have been handed its turn already.
func (l *localTurns) forget(id a2a.TaskID, w *turnWaiter) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ws := l.waiters[id]
	for i, x := range ws {
		if x == w {
			ws = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(l.waiters, id)
	} else {
		l.waiters[id] = ws
	}
}

// finish hands t, as just committed with events, to the waiters whose turn
// one of those events ended. The task is shared between them and the
// caller: none of them may change it.
func (l *localTurns) finish(t *switchboard.Task, events []*switchboard.TaskEvent) {
	if len(events) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ws := l.waiters[t.ID()]
	if len(ws) == 0 {
		return
	}
	kept := ws[:0]
	for _, w := range ws {
		if ev := turnEnd(events, w.afterSeq); ev != nil {
			w.task, w.fault = t, turnFault(ev.Event)
			close(w.done)
		} else {
			kept = append(kept, w)
		}
	}
	if len(kept) == 0 {
		delete(l.waiters, t.ID())
	} else {
		l.waiters[t.ID()] = kept
	}
}

// turnEnd returns the first of events after afterSeq that ends a turn, or
// nil.
func turnEnd(events []*switchboard.TaskEvent, afterSeq int64) *switchboard.TaskEvent {
	for _, ev := range events {
		if ev.Seq > afterSeq && EndsTurn(ev.Event) {
			return ev
		}
	}
	return nil
}
