package sqlstore

import (
	"maps"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// taskCache keeps, for SQLite, the A2A part of the tasks this process wrote
// or read last, so that ModifyTask need not decode again the JSON it has
// just encoded (an agent's answer comes a few milliseconds after the task
// was created), and a list read again (an inbox) need not either. Every change to a SQLite database goes through this process's
// writer, and each entry is checked against the task's sequence number and
// update time, read with the rest of its row in the changing transaction,
// so an entry that is not the stored task is never used. Finished tasks are
// not kept, and the cache holds at most taskCacheSize tasks (a full cache
// forgets one at random).
type taskCache struct {
	mu      sync.Mutex
	entries map[a2a.TaskID]*cachedTask
}

// taskCacheSize bounds the cached tasks: a few MB for tasks of a few KB.
const taskCacheSize = 1024

// cachedTask is a task's A2A part as written at sequence number seq.
type cachedTask struct {
	seq     int64
	updated int64 // nanos
	task    a2a.Task
}

func newTaskCache() *taskCache {
	return &taskCache{entries: make(map[a2a.TaskID]*cachedTask)}
}

// get returns a copy of the task's A2A part written at seq and updated,
// that the caller may change.
func (c *taskCache) get(id a2a.TaskID, seq, updated int64) (a2a.Task, bool) {
	if c == nil {
		return a2a.Task{}, false
	}
	c.mu.Lock()
	e := c.entries[id]
	c.mu.Unlock()
	if e == nil || e.seq != seq || e.updated != updated {
		return a2a.Task{}, false
	}
	return cloneTask(&e.task), true
}

// put keeps a copy of the task as written, or forgets it once finished.
func (c *taskCache) put(t *switchboard.Task) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.State().Terminal() {
		delete(c.entries, t.ID())
		return
	}
	if _, ok := c.entries[t.ID()]; !ok && len(c.entries) >= taskCacheSize {
		for id := range c.entries {
			delete(c.entries, id)
			break
		}
	}
	c.entries[t.ID()] = &cachedTask{seq: t.Seq, updated: nanos(t.UpdatedAt), task: cloneTask(&t.A2A)}
}

// cloneTask copies t so that changing the copy, as the task service does
// (appending to its history and artifacts, replacing an artifact or the
// status, setting metadata), leaves t as it was. Messages, parts and
// artifacts themselves are shared: the service replaces them and never
// changes them in place.
func cloneTask(t *a2a.Task) a2a.Task {
	c := *t
	c.History = append([]*a2a.Message(nil), t.History...)
	c.Artifacts = append([]*a2a.Artifact(nil), t.Artifacts...)
	if t.Metadata != nil {
		c.Metadata = maps.Clone(t.Metadata)
	}
	return c
}
