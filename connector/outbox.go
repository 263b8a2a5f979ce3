package connector

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/switchboard-dev/switchboard/connproto"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// call is a request the client sent (or will send) to the server and whose
// answer someone waits for: a report, a GetTask, a send. It is written on
// the current connection, and written again on the next one if the
// connection drops before the answer arrives.
type call struct {
	id     string     // immutable: the JSON-RPC id
	seq    uint64     // immutable: calls are written in the order they were made
	frame  []byte     // immutable: the encoded request, the same on every attempt
	taskID a2a.TaskID // immutable: the task a report is about; "" for other calls
	done   chan callResult

	sentOn uint64 // guarded by outbox.mu: the session it was last written on; 0: none
}

// callResult is the server's answer to a call.
type callResult struct {
	result json.RawMessage
	err    error
}

// outbox holds the calls that wait for an answer, across connections.
type outbox struct {
	mu    sync.Mutex
	calls map[string]*call // guarded by mu
	// unwritten are the calls not yet written on session, in order (some
	// may have been removed since): the writer takes them without reading
	// every call in flight. A new session starts with all the calls.
	unwritten []*call       // guarded by mu
	session   uint64        // guarded by mu: the session unwritten is for
	next      uint64        // guarded by mu: the last seq handed out
	closed    error         // guarded by mu: set once the client stopped
	wake      chan struct{} // capacity 1: there are calls to write
}

func newOutbox() *outbox {
	return &outbox{calls: make(map[string]*call), wake: make(chan struct{}, 1)}
}

// add encodes a request and queues it for the writer. It fails if the
// client has stopped or the request is larger than the server reads.
func (o *outbox) add(method string, params any, taskID a2a.TaskID, traceparent string) (*call, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed != nil {
		return nil, o.closed
	}
	o.next++
	c := &call{id: "c" + strconv.FormatUint(o.next, 10), seq: o.next, taskID: taskID, done: make(chan callResult, 1)}
	b, err := connproto.Encode(connproto.Request{JSONRPC: "2.0", ID: c.id, Method: method, Params: params, TraceParent: traceparent})
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", method, err)
	}
	if len(b) > maxFrameBytes {
		return nil, fmt.Errorf("%s is %d bytes; the server reads at most %d", method, len(b), maxFrameBytes)
	}
	c.frame = b
	o.calls[c.id] = c
	o.unwritten = append(o.unwritten, c)
	o.signal()
	return c, nil
}

func (o *outbox) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// remove forgets a call whose caller stopped waiting. Calls removed before
// they were written leave unwritten when it holds twice as many as wait,
// so that callers giving up while the connection is down free their frames.
func (o *outbox) remove(c *call) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.calls, c.id)
	if len(o.unwritten) > 2*len(o.calls)+16 {
		o.unwritten = slices.DeleteFunc(o.unwritten, func(c *call) bool { return o.calls[c.id] != c })
	}
}

// unsent returns, in order, the calls not yet written on session, and
// marks them written on it. On a session it has not seen before, that is
// every call still waiting.
func (o *outbox) unsent(session uint64) []*call {
	o.mu.Lock()
	defer o.mu.Unlock()
	if session != o.session {
		o.session = session
		o.unwritten = o.unwritten[:0]
		for _, c := range o.calls {
			o.unwritten = append(o.unwritten, c)
		}
		slices.SortFunc(o.unwritten, func(a, b *call) int { return cmp.Compare(a.seq, b.seq) })
	}
	var out []*call
	for _, c := range o.unwritten {
		if o.calls[c.id] == c && c.sentOn != session {
			c.sentOn = session
			out = append(out, c)
		}
	}
	clear(o.unwritten) // let answered calls go
	o.unwritten = o.unwritten[:0]
	return out
}

// resolve hands the answer with the given id to its caller. It reports
// whether a call waited for it.
func (o *outbox) resolve(id string, res callResult) bool {
	o.mu.Lock()
	c := o.calls[id]
	delete(o.calls, id)
	o.mu.Unlock()
	if c == nil {
		return false
	}
	c.done <- res // capacity 1, and resolved once
	return true
}

// tasks returns the tasks that reports still wait for.
func (o *outbox) tasks() []a2a.TaskID {
	o.mu.Lock()
	defer o.mu.Unlock()
	seen := make(map[a2a.TaskID]bool)
	var out []a2a.TaskID
	for _, c := range o.calls {
		if c.taskID != "" && !seen[c.taskID] {
			seen[c.taskID] = true
			out = append(out, c.taskID)
		}
	}
	return out
}

// close fails every waiting call, and every later one, with err.
func (o *outbox) close(err error) {
	o.mu.Lock()
	calls := o.calls
	o.calls = make(map[string]*call)
	o.unwritten = nil
	o.closed = err
	o.mu.Unlock()
	for _, c := range calls {
		c.done <- callResult{err: err}
	}
}
