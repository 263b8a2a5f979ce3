package switchboard

import (
	"context"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Bus moves hints between the parts of a deployment, in one process or
// across instances. It never carries the truth: every event is persisted in
// the Store first, and the Bus only says "look again". A lost or late hint
// delays a reader until its next poll; it never loses anything.
type Bus interface {
	// NotifyTask tells every watcher of the task, on any instance, that its
	// event log has grown to seq. It does not block on slow watchers.
	NotifyTask(ctx context.Context, id a2a.TaskID, seq int64) error

	// WatchTask starts watching a task. The watch's channel receives a
	// value after each NotifyTask for the task; notifications that arrive
	// while one is pending are merged into it. The caller must Close the
	// watch. It returns ErrBusClosed after Close.
	WatchTask(ctx context.Context, id a2a.TaskID) (TaskWatch, error)

	// Close stops the bus and closes every watch.
	Close() error
}

// TaskWatch is an open watch on one task's events.
type TaskWatch interface {
	// C returns a channel that receives a value when the task's event log
	// may have grown. It is closed when the bus closes.
	C() <-chan struct{}
	// Close ends the watch. It is safe to call more than once.
	Close()
}
