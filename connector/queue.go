package connector

import (
	"context"
	"errors"
	"sync"
)

// DefaultQueueSize is the number of works a Client acknowledges ahead of
// its handlers when Client.QueueSize is zero.
const DefaultQueueSize = 64

// maxWithheld bounds the offers the client leaves unanswered while its
// queue is full. A Switchboard server keeps at most its in-flight limit
// (64 by default) of offers unanswered on one connection, so only a server
// configured beyond this one sends more; the client refuses those.
const maxWithheld = 1024

// queuedState is where a work waiting for a handler stands.
type queuedState int

const (
	// withheld: the offer is not answered yet, because the queue was full.
	withheld queuedState = iota
	// answering: the offer is being answered; no worker may take the work
	// until the answer is queued, so that the acknowledgement is written
	// before the report that the work started.
	answering
	// ready: the offer was answered; a worker may take the work.
	ready
)

// queued is one work waiting for a handler.
type queued struct {
	w      *Work              // immutable
	answer func(working bool) // immutable: answers the offer (submitted, or working when an idle worker takes it at once); it gives up when the offer's connection ended
	stop   func() bool        // immutable after push: stops the drop that a cancel of w triggers

	state   queuedState // guarded by workQueue.mu
	removed bool        // guarded by workQueue.mu: taken by a worker, or dropped
	working bool        // guarded by workQueue.mu: an idle worker takes it at once, so the answer says working
}

// workQueue holds the works waiting for a handler, oldest first, and hands
// them to the client's workers, of which there are MaxConcurrent. Holding
// a work costs no goroutine.
//
// The queue is bounded: at most limit works are acknowledged ahead of the
// workers. An offer beyond that is withheld (left unanswered) and answered
// as the queue drains, so that the work waits at the server, where the
// server stops offering more once its in-flight limit of unanswered offers
// is reached. A withheld offer unanswered past the server's ack timeout is
// offered again, on this connection or a later one; the client's
// de-duplication answers that repeat without running the work twice.
//
// Whoever removes an item from items (a worker taking it, drop, close)
// owns its work from then on and ends it.
type workQueue struct {
	limit int        // immutable: works acknowledged and waiting, at most
	reg   *registry  // immutable: told when a work is dropped
	mu    sync.Mutex // guards the fields below
	cond  *sync.Cond // on mu: a work became ready, or the queue closed
	items []*queued  // guarded by mu: oldest first
	acked int        // guarded by mu: items answering or ready
	held  int        // guarded by mu: items withheld
	idle  int        // guarded by mu: workers waiting in next
	done  bool       // guarded by mu: the client stopped
}

func newWorkQueue(limit int, reg *registry) *workQueue {
	q := &workQueue{limit: limit, reg: reg}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// errQueueFull is returned by push when too many offers are withheld.
var errQueueFull = errors.New("connector: too many offers wait for room in the queue")

// push queues w, whose offer answer acknowledges, and answers the offer
// now if the queue has room. It queues nothing and returns ErrClosed when
// the client stopped, errQueueFull when too many offers are withheld
// already.
func (q *workQueue) push(w *Work, answer func(working bool)) error {
	it := &queued{w: w, answer: answer}
	// Registered before the item is visible: a cancel from now on drops it
	// (drop finds nothing to do until the item is in items).
	it.stop = context.AfterFunc(w.ctx, func() { q.drop(it) })
	q.mu.Lock()
	if q.done || q.held >= maxWithheld {
		err := errQueueFull
		if q.done {
			err = ErrClosed
		}
		q.mu.Unlock()
		it.stop()
		return err
	}
	if w.ctx.Err() != nil {
		// Canceled already, and the drop above may have missed it: end it
		// here, answering the offer so that the server does not wait for it.
		q.mu.Unlock()
		it.stop()
		answer(false)
		q.reg.finish(w)
		return nil
	}
	q.items = append(q.items, it)
	q.held++
	promoted := q.promoteLocked()
	q.mu.Unlock()
	q.answerAll(promoted)
	return nil
}

// promoteLocked moves the oldest withheld items to answering while the
// queue has room, and returns them for answerAll. An item that a waiting
// worker will take at once (more workers wait than items are acknowledged
// ahead of it) is answered as working: the worker then needs no report of
// its own before it starts, which saves the agent a round trip and the
// server a write per task.
func (q *workQueue) promoteLocked() []*queued {
	var out []*queued
	for _, it := range q.items {
		if q.acked >= q.limit || q.held == 0 {
			break
		}
		if it.state == withheld {
			it.state = answering
			it.working = q.idle > q.acked
			q.held--
			q.acked++
			out = append(out, it)
		}
	}
	return out
}

// answerAll answers the offers of items promoted by promoteLocked, then
// makes them ready for a worker.
func (q *workQueue) answerAll(items []*queued) {
	if len(items) == 0 {
		return
	}
	for _, it := range items {
		it.answer(it.working)
	}
	q.mu.Lock()
	for _, it := range items {
		if !it.removed {
			it.state = ready
			it.w.startReported = it.working
		}
	}
	q.mu.Unlock()
	q.cond.Broadcast()
}

// next waits for the oldest ready work and takes it; it returns nil once
// the queue is closed.
func (q *workQueue) next() *Work {
	q.mu.Lock()
	q.idle++
	for {
		if q.done {
			q.idle--
			q.mu.Unlock()
			return nil
		}
		if it := q.takeReadyLocked(); it != nil {
			q.idle--
			promoted := q.promoteLocked()
			q.mu.Unlock()
			it.stop()
			q.answerAll(promoted)
			return it.w
		}
		q.cond.Wait()
	}
}

// takeReadyLocked removes and returns the oldest ready item, or nil.
func (q *workQueue) takeReadyLocked() *queued {
	for i, it := range q.items {
		if it.state == ready {
			q.removeLocked(i)
			return it
		}
	}
	return nil
}

// removeLocked removes items[i] and updates the counts.
func (q *workQueue) removeLocked(i int) {
	it := q.items[i]
	q.items = append(q.items[:i], q.items[i+1:]...)
	it.removed = true
	if it.state == withheld {
		q.held--
	} else {
		q.acked--
	}
}

// drop removes a work whose context ended (its task was canceled, or the
// client is stopping) before a worker took it, and ends it. A withheld
// offer is answered now: the server holds a slot for every unanswered
// offer.
func (q *workQueue) drop(it *queued) {
	q.mu.Lock()
	i := -1
	for j, x := range q.items {
		if x == it {
			i = j
			break
		}
	}
	if i < 0 {
		q.mu.Unlock()
		return // not yet pushed (push ends it), or owned by someone else
	}
	wasWithheld := it.state == withheld
	q.removeLocked(i)
	promoted := q.promoteLocked()
	q.mu.Unlock()
	if wasWithheld {
		it.answer(false)
	}
	q.reg.finish(it.w)
	q.answerAll(promoted)
}

// close stops the workers and ends the works still waiting, without
// answering their offers: the connection is gone, and the server offers
// them again.
func (q *workQueue) close() {
	q.mu.Lock()
	q.done = true
	items := q.items
	q.items = nil
	for _, it := range items {
		it.removed = true
	}
	q.acked, q.held = 0, 0
	q.mu.Unlock()
	q.cond.Broadcast()
	for _, it := range items {
		it.stop()
		it.w.cancel(ErrClosed)
		q.reg.finish(it.w)
	}
}
