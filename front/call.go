package front

import (
	"context"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// call is one message relayed to the upstream: the context of its calls
// there, and what a cancel of our task needs, which may arrive before the
// upstream named its task.
type call struct {
	ctx  context.Context // ends at the timeout, when the job's context ends, or when a cancel is applied or given up
	end  context.CancelCauseFunc
	stop func() // releases what the call holds

	mu       sync.Mutex
	id       a2a.TaskID  // guarded by mu: the upstream's task, once known
	peerStop bool        // guarded by mu: the peer canceled our task
	giveUp   *time.Timer // guarded by mu: ends the call if the upstream does not name its task in time
}

// newCall returns the call of j, which ends at deadline. Its context does
// not end with the peer's cancel of the task while the upstream's task id
// is unknown: the call goes on until the upstream names its task (the
// caller then cancels it there) or cancelTimeout passes.
func newCall(ctx context.Context, j *Job, deadline time.Time) *call {
	base, end := context.WithCancelCause(context.WithoutCancel(ctx))
	cctx, cancel := context.WithDeadlineCause(base, deadline, ErrTimeout)
	c := &call{ctx: cctx, end: end, id: j.UpstreamTaskID} // a follow-up's task is known
	stopWatch := context.AfterFunc(ctx, func() {
		if j.PeerCanceled != nil && j.PeerCanceled(context.Cause(ctx)) {
			c.onPeerCancel()
			return
		}
		end(context.Cause(ctx)) // the job's owner stops, or the handler returned
	})
	c.stop = func() {
		stopWatch()
		c.mu.Lock()
		if c.giveUp != nil {
			c.giveUp.Stop()
		}
		c.mu.Unlock()
		cancel()
		end(nil)
	}
	return c
}

// onPeerCancel ends the call if the upstream's task is known, and
// otherwise gives the upstream cancelTimeout to name it.
func (c *call) onPeerCancel() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.peerStop = true
	if c.id != "" {
		c.end(errCanceled)
		return
	}
	c.giveUp = time.AfterFunc(cancelTimeout, func() { c.end(errCanceled) })
}

// named records the upstream's task id; the call ends if the peer
// canceled our task meanwhile, and the caller cancels it upstream.
func (c *call) named(id a2a.TaskID) {
	if id == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.id == "" {
		c.id = id
	}
	if c.peerStop {
		c.end(errCanceled)
	}
}

// upstreamID returns the upstream's task id, or "" if it is unknown.
func (c *call) upstreamID() a2a.TaskID {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.id
}
