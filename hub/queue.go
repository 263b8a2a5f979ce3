package hub

import "sync"

// frameQueue holds the frames waiting for a connection's writer. It costs a
// few words while empty, which is how an idle connection spends its life:
// its slice grows only while frames wait, up to max.
type frameQueue struct {
	mu     sync.Mutex
	frames [][]byte
	max    int
	pushed func() // called after each push
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

// pop takes the oldest frame, if any.
func (q *frameQueue) pop() ([]byte, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.frames) == 0 {
		return nil, false
	}
	b := q.frames[0]
	q.frames[0] = nil
	q.frames = q.frames[1:]
	if len(q.frames) == 0 {
		q.frames = nil // give the array back
	}
	return b, true
}

// size returns how many frames wait.
func (q *frameQueue) size() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.frames)
}
