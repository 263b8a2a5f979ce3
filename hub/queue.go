package hub

import (
	"sync"

	"github.com/switchboard-dev/switchboard/connproto"
)

// frameQueue holds the frames waiting for a connection's writer. It costs a
// few words while empty, which is how an idle connection spends its life:
// its slice grows only while frames wait, up to max.
type frameQueue struct {
	mu     sync.Mutex
	frames [][]byte
	max    int
	pushed func() // called after each push
	// session holds the frames of live sessions (pushSession): their own
	// windows bound them, not max, and sessionMax bounds what they cost
	// (sessionCost) against an agent that breaks the windows' rules. They
	// wait until sessionsOpen, which the answer to hello sets once it is
	// queued, so that no session frame comes before it.
	session      [][]byte
	sessionCost  int
	sessionMax   int // 0: no bound
	sessionsOpen bool
	// batches is set when the agent said it reads session batches
	// (connproto.HelloParams.SessionBatches): popBatch then joins the
	// session notes queued in a row.
	batches bool
}

// newFrameQueue returns a queue of at most max frames that calls pushed
// after each push.
func newFrameQueue(max int, pushed func()) *frameQueue {
	return &frameQueue{max: max, pushed: pushed}
}

// push queues b and reports false when the queue is full.
func (q *frameQueue) push(b []byte) bool {
	q.mu.Lock()
	if len(q.frames) >= q.max {
		q.mu.Unlock()
		return false
	}
	q.frames = append(q.frames, b)
	q.mu.Unlock()
	q.pushed()
	return true
}

// pushSession queues b, a frame of a live session, after the session
// frames already queued, and reports false when the session frames
// already cost sessionMax. The session package bounds what it queues
// (each direction of a session holds at most its window), and sessionMax
// is set far above what the windows allow: a connection is not closed as
// too slow for what they allow, but an agent that makes the server queue
// past them (acknowledging frames it has not read, asking for answers it
// does not read) is.
func (q *frameQueue) pushSession(b []byte) bool {
	q.mu.Lock()
	cost := frameCost(b)
	if q.sessionMax > 0 && q.sessionCost+cost > q.sessionMax {
		q.mu.Unlock()
		return false
	}
	q.session = append(q.session, b)
	q.sessionCost += cost
	q.mu.Unlock()
	q.pushed()
	return true
}

// frameCost is what a queued frame costs in memory, roughly: its bytes
// and its slice header.
func frameCost(b []byte) int { return len(b) + 32 }

// popSession takes the oldest session frame, with q.mu held.
func (q *frameQueue) popSession() []byte {
	b := popFront(&q.session)
	q.sessionCost -= frameCost(b)
	return b
}

// pop takes the oldest frame, if any: the answers first, then the
// sessions' frames (each kind keeps its order).
func (q *frameQueue) pop() ([]byte, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.frames) > 0 {
		return popFront(&q.frames), true
	}
	if len(q.session) > 0 && q.sessionsOpen {
		return q.popSession(), true
	}
	return nil, false
}

// popBatch takes the oldest frame, as pop does, and appends it to notes.
// When it is a session note (connproto.IsSessionNote) and the agent reads
// batches, it takes the session notes queued right after it too, as many
// as fit in connproto.MaxSessionBatchBytes with it, which the writer then
// sends as one batch. It returns notes empty when nothing waits.
func (q *frameQueue) popBatch(notes [][]byte) [][]byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.frames) > 0 {
		return append(notes, popFront(&q.frames))
	}
	if len(q.session) == 0 || !q.sessionsOpen {
		return notes
	}
	first := q.popSession()
	notes = append(notes, first)
	if !q.batches || !connproto.IsSessionNote(first) {
		return notes
	}
	size := len(first) + 2
	for len(q.session) > 0 && connproto.IsSessionNote(q.session[0]) && size+len(q.session[0])+1 <= connproto.MaxSessionBatchBytes {
		size += len(q.session[0]) + 1
		notes = append(notes, q.popSession())
	}
	return notes
}

// openSessions lets the sessions' frames out (after the answer to hello);
// batches says whether the agent reads session batches.
func (q *frameQueue) openSessions(batches bool) {
	q.mu.Lock()
	q.sessionsOpen = true
	q.batches = batches
	q.mu.Unlock()
}

// popFront takes the first of a non-empty list.
func popFront(list *[][]byte) []byte {
	l := *list
	b := l[0]
	l[0] = nil
	if len(l) == 1 {
		*list = nil // give the array back
	} else {
		*list = l[1:]
	}
	return b
}

// size returns how many frames wait.
func (q *frameQueue) size() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.frames) + len(q.session)
}
