package front

import (
	"context"
	"errors"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// errPeerCanceled ends an attempt whose task its peer canceled: the
// forwarder cancels the upstream's task, now or as soon as the upstream
// names it.
var errPeerCanceled = errors.New("the peer canceled the task")

// attempts are the attempts in flight on this instance, by task, so that
// a peer's cancel, delivered here, can end its task's attempt.
type attempts struct {
	mu   sync.Mutex
	byID map[a2a.TaskID]*attempt // guarded by mu
}

// attempt is one attempt in flight.
type attempt struct {
	stop context.CancelCauseFunc
}

// start registers an attempt of task id, and returns its context, which
// stopPeer ends, and the function that ends the registration.
func (as *attempts) start(ctx context.Context, id a2a.TaskID) (context.Context, func()) {
	ctx, stop := context.WithCancelCause(ctx)
	a := &attempt{stop: stop}
	as.mu.Lock()
	if as.byID == nil {
		as.byID = make(map[a2a.TaskID]*attempt)
	}
	as.byID[id] = a
	as.mu.Unlock()
	return ctx, func() {
		as.mu.Lock()
		if as.byID[id] == a {
			delete(as.byID, id)
		}
		as.mu.Unlock()
		stop(nil)
	}
}

// stopPeer ends the attempt of task id in flight on this instance with
// errPeerCanceled, and reports whether there was one.
func (as *attempts) stopPeer(id a2a.TaskID) bool {
	as.mu.Lock()
	a := as.byID[id]
	as.mu.Unlock()
	if a == nil {
		return false
	}
	a.stop(errPeerCanceled)
	return true
}
