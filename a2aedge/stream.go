package a2aedge

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/a2arpc"
	"github.com/switchboard-dev/switchboard/relay"
)

// streamPlan says what a stream sends: optionally a task snapshot, then the
// task's events after a sequence number, until an event ends the turn.
type streamPlan struct {
	taskID a2a.TaskID
	// snapshot is sent first, with its Seq as event id, unless nil.
	snapshot *switchboard.Task
	// snapshotEnds: a snapshot already in a final or waiting state ends the
	// stream (a send stream), rather than waiting for the next turn (a
	// subscription to an input-required task).
	snapshotEnds  bool
	after         int64
	historyLength *int
	// pass, if set, follows the task instead of Tasks.FollowTask: a
	// pass-through front's upstream (passthrough.go).
	pass func(ctx context.Context, id a2a.TaskID, after int64, fn func(*switchboard.TaskEvent) (bool, error)) error
}

// streamEncoder turns a task event into the result object of one stream
// event in the call's protocol version. final is set on the event that ends
// the stream.
type streamEncoder func(ev a2a.Event, final bool) (any, error)

// streamFailed answers a stream method that failed before its stream began.
func (s *Edge) streamFailed(w http.ResponseWriter, r *http.Request, c *rpcCall, err error) {
	if switchboard.ErrorCode(err) == switchboard.EINTERNAL {
		s.LogInternal(r, err)
	}
	s.Unavailable(w, err)
	_ = a2arpc.NewSSE(w).RPCError(c.req.ID, a2arpc.ErrorFor(err, c.version))
}

// streamSink is where a stream's events go: an SSE response of JSON-RPC
// envelopes (sseSink), or the event sequence of the SDK's HTTP+JSON and
// gRPC transports (a2a_binding.go).
type streamSink interface {
	// start begins the stream (response headers, for SSE).
	start() error
	// send sends one event with its sequence number; final is set on the
	// event that ends the stream.
	send(seq int64, ev a2a.Event, final bool) error
	// fail ends the stream with an error, inside the stream.
	fail(err error)
	// keepAlive keeps an idle stream open.
	keepAlive() error
}

// sseSink is the stream of a JSON-RPC stream method: each event a JSON-RPC
// response in the call's protocol version, its id the event's sequence
// number.
type sseSink struct {
	sw     *a2arpc.SSE
	c      *rpcCall
	encode streamEncoder
}

func (k *sseSink) start() error     { return k.sw.Start() }
func (k *sseSink) keepAlive() error { return k.sw.KeepAlive() }
func (k *sseSink) fail(err error)   { _ = k.sw.RPCError(k.c.req.ID, a2arpc.ErrorFor(err, k.c.version)) }
func (k *sseSink) send(seq int64, ev a2a.Event, final bool) error {
	result, err := k.encode(ev, final)
	if err != nil {
		return err
	}
	return k.sw.RPCEvent(seq, k.c.req.ID, result)
}

// runStream sends a stream according to plan as SSE.
func (s *Edge) runStream(w http.ResponseWriter, r *http.Request, c *rpcCall, plan streamPlan, encode streamEncoder) {
	s.followStream(r.Context(), r, &sseSink{sw: a2arpc.NewSSE(w), c: c, encode: encode}, c, plan)
}

// followStream sends a stream according to plan to sink. It returns when
// an event ends the turn, the client goes away (ctx ends, or the sink
// fails), the peer's token is revoked, the stream has lasted
// StreamMaxDuration, or the server shuts down. r is for logging only.
func (s *Edge) followStream(ctx context.Context, r *http.Request, sink streamSink, c *rpcCall, plan streamPlan) {
	send := func(ev *switchboard.TaskEvent, final bool) error {
		e := ev.Event
		if t, ok := e.(*a2a.Task); ok {
			e = switchboard.TrimTask(t, plan.historyLength, true)
		}
		return sink.send(ev.Seq, e, final)
	}
	if err := sink.start(); err != nil {
		return
	}
	if t := plan.snapshot; t != nil {
		ends := t.State().Terminal() || (plan.snapshotEnds && switchboard.Interrupted(t.State()))
		if err := send(&switchboard.TaskEvent{TaskID: t.ID(), Seq: t.Seq, Event: &t.A2A}, ends); err != nil || ends {
			return
		}
	}

	ctx, cancel := context.WithTimeout(ctx, s.Cfg.StreamMaxDuration)
	defer cancel()
	defer context.AfterFunc(s.Closing, cancel)()
	events := make(chan *switchboard.TaskEvent)
	followErr := make(chan error, 1)
	follow := s.Tasks.FollowTask
	if plan.pass != nil {
		follow = plan.pass
	}
	go func() {
		followErr <- follow(ctx, plan.taskID, plan.after, func(ev *switchboard.TaskEvent) (bool, error) {
			select {
			case events <- ev:
				return !relay.EndsTurn(ev.Event), nil
			case <-ctx.Done():
				return false, context.Cause(ctx)
			}
		})
		close(events)
	}()
	defer func() {
		cancel()
		for range events { // let the follower finish before the handler returns
		}
	}()

	// A revoked token ends the stream at once, whichever instance revoked
	// it; the keep-alive check catches a lost hint.
	var credentials <-chan struct{}
	if w, err := s.Bus.Watch(ctx, c.caller.revoked); err == nil {
		defer w.Close()
		credentials = w.C()
	}
	revoked := switchboard.Errorf(switchboard.EUNAUTHORIZED, "the peer token was revoked")
	keepAlive := time.NewTicker(s.Cfg.StreamKeepAlive)
	defer keepAlive.Stop()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				if err := <-followErr; err != nil && ctx.Err() == nil {
					if switchboard.ErrorCode(err) == switchboard.EINTERNAL {
						s.LogInternal(r, fmt.Errorf("follow task %s: %w", plan.taskID, err))
					}
					sink.fail(err)
				}
				return
			}
			if err := send(ev, relay.EndsTurn(ev.Event)); err != nil {
				return
			}
		case _, ok := <-credentials:
			if !ok {
				credentials = nil // the bus closed: keep-alives still check
			} else if !c.caller.valid(switchboard.FreshRead(ctx)) { // the change may be another instance's
				sink.fail(revoked)
				return
			}
		case <-keepAlive.C:
			if !c.caller.valid(ctx) {
				sink.fail(revoked)
				return
			}
			if err := sink.keepAlive(); err != nil {
				return
			}
		}
	}
}

// sendStreamPlan plans the stream of a send: the task as it stands, then
// its events until the turn ends. A client that reconnects to a send stream
// (the same message again, with Last-Event-ID) gets the events it missed;
// the header means nothing with a message that is new.
func sendStreamPlan(c *rpcCall, t *switchboard.Task, replayed bool, historyLength *int) (streamPlan, error) {
	if replayed && c.lastEventID >= 0 {
		plan, err := resumePlan(c, t, true)
		plan.historyLength = historyLength
		return plan, err
	}
	return streamPlan{taskID: t.ID(), historyLength: historyLength, snapshotEnds: true, snapshot: t, after: t.Seq}, nil
}

// subscribePlan plans a subscription: the task as it stands (which must not
// be finished), then its events until the next turn ends; or, for a client
// resuming with Last-Event-ID, the events it missed, even of a task that
// has finished since.
func (s *Edge) subscribePlan(ctx context.Context, c *rpcCall, id a2a.TaskID) (streamPlan, error) {
	if id == "" {
		return streamPlan{}, switchboard.Errorf(switchboard.EINVALID, "Invalid params: id is required")
	}
	if g := s.passAgent(ctx, c, id); g != nil {
		return s.passSubscribePlan(c, g, id)
	}
	t, err := s.Tasks.GetTask(ctx, c.peer, id)
	switch {
	case err != nil:
		return streamPlan{}, err
	case c.lastEventID >= 0:
		return resumePlan(c, t, false)
	case t.State().Terminal():
		return streamPlan{}, switchboard.Errorf(switchboard.EUNSUPPORTED, "task %s is %s; there is nothing to subscribe to", t.ID(), switchboard.ShortState(t.State()))
	}
	return streamPlan{taskID: t.ID(), snapshot: t, after: t.Seq}, nil
}

// resumePlan plans the rest of a stream for a client that reconnects with
// Last-Event-ID: the events after that id. When nothing was missed and the
// stream had already ended (the task finished or, for a send stream,
// waits for its peer), the task as it stands is sent so that the client
// sees the end instead of waiting for more.
func resumePlan(c *rpcCall, t *switchboard.Task, sendStream bool) (streamPlan, error) {
	n := c.lastEventID
	if n > t.Seq {
		return streamPlan{}, switchboard.Errorf(switchboard.EINVALID, "Last-Event-ID %d is ahead of the task's last event %d", n, t.Seq)
	}
	plan := streamPlan{taskID: t.ID(), after: n, snapshotEnds: sendStream}
	ended := t.State().Terminal() || (sendStream && switchboard.Interrupted(t.State()))
	if n == t.Seq && ended {
		plan.snapshot = t
	}
	return plan, nil
}

func (s *Edge) v1SendStreamingMessage(w http.ResponseWriter, r *http.Request, c *rpcCall) {
	var p a2a.SendMessageRequest
	if err := decodeParams(c, &p); err != nil {
		s.streamFailed(w, r, c, err)
		return
	}
	plan, err := s.sendStream(r.Context(), c, &p)
	if err != nil {
		s.streamFailed(w, r, c, err)
		return
	}
	s.runStream(w, r, c, plan, encodeV1Event)
}

func (s *Edge) v1SubscribeToTask(w http.ResponseWriter, r *http.Request, c *rpcCall) {
	var p a2a.SubscribeToTaskRequest
	if err := decodeParams(c, &p); err != nil {
		s.streamFailed(w, r, c, err)
		return
	}
	plan, err := s.subscribePlan(r.Context(), c, p.ID)
	if err != nil {
		s.streamFailed(w, r, c, err)
		return
	}
	s.runStream(w, r, c, plan, encodeV1Event)
}

// encodeV1Event wraps an event in a 1.0 StreamResponse.
func encodeV1Event(ev a2a.Event, _ bool) (any, error) {
	return a2a.StreamResponse{Event: ev}, nil
}
