package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/switchboard-dev/switchboard/connector"
)

// Timing of the calls to the forward target.
const (
	cardTimeout   = 30 * time.Second // to read its agent card
	cancelTimeout = 10 * time.Second // to cancel a task there
	pollFirst     = 100 * time.Millisecond
	pollMax       = 2 * time.Second
	// maxRemembered bounds the task and context ids kept per map.
	maxRemembered = 10000
)

// checkForwardURL checks the --forward URL. Forward targets are loopback
// or private by design: there is no SSRF guard here, the operator chose
// the target.
func checkForwardURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--forward must be an http(s) URL, got %q", raw)
	}
	return nil
}

// forwarder relays each task to an A2A server (connect --forward) and
// relays its answers back. The target's agent card decides the protocol
// version it is spoken to in (1.0 or 0.3, JSON-RPC), and whether its
// answers are streamed.
type forwarder struct {
	target  string       // immutable
	http    *http.Client // immutable: carries --forward-token
	timeout time.Duration
	log     *slog.Logger

	mu       sync.Mutex
	upstream *upstream                 // guarded by mu: nil until the card was read (and after a failure)
	tasks    map[a2a.TaskID]a2a.TaskID // guarded by mu: our task id → the target's
	contexts map[string]string         // guarded by mu: our context id → the target's
}

// upstream is a client of the forward target, made from its card.
type upstream struct {
	client    *a2aclient.Client
	streaming bool
}

func newForwarder(target, token string, timeout time.Duration, log *slog.Logger) *forwarder {
	target = strings.TrimRight(target, "/")
	var rt http.RoundTripper = http.DefaultTransport
	if token != "" {
		rt = newBearerTransport(token, target, http.DefaultTransport)
	}
	origin, _ := url.Parse(target) // checked by checkForwardURL
	hc := &http.Client{Transport: rt, CheckRedirect: func(r *http.Request, via []*http.Request) error {
		if !sameOrigin(r.URL, origin) {
			return fmt.Errorf("the forward target redirected to %s, another host than --forward's; not following", r.URL.Redacted())
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}}
	return &forwarder{target: target, http: hc, timeout: timeout, log: log.With("forward", target),
		tasks: make(map[a2a.TaskID]a2a.TaskID), contexts: make(map[string]string)}
}

// bearerTransport adds the forward target's token to the requests to the
// --forward URL's scheme, host and port, and to no other.
type bearerTransport struct {
	token  string
	origin *url.URL
	base   http.RoundTripper
}

func newBearerTransport(token, target string, base http.RoundTripper) *bearerTransport {
	origin, _ := url.Parse(target)
	return &bearerTransport{token: token, origin: origin, base: base}
}

// RoundTrip implements http.RoundTripper.
func (b *bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.origin == nil || !sameOrigin(r.URL, b.origin) {
		return b.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// sameOrigin reports whether a and b have the same scheme, host and port
// (an absent port is the scheme's default).
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// port returns u's port, or its scheme's default.
func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// Handle relays one message to the target and its answers back, until the
// target ends the turn. A canceled task is canceled at the target too: at
// once if the target named its task already, otherwise as soon as it does
// (within cancelTimeout), and not at all if the message was not sent yet.
func (f *forwarder) Handle(ctx context.Context, w *connector.Work) {
	deadline := time.Now().Add(f.timeout)
	tctx, cancel := context.WithDeadlineCause(ctx, deadline, errTaskTimeout)
	defer cancel()
	up, err := f.connect(tctx)
	if err != nil {
		if ctx.Err() == nil {
			f.log.Warn("the forward target is unreachable", "err", err)
			fail(ctx, w, f.log, "the agent behind this connector is unreachable: "+err.Error())
		}
		return
	}
	if ctx.Err() != nil {
		return // canceled or stopping before anything was sent
	}
	call := f.newUpstreamCall(ctx, w, deadline)
	defer call.stop()
	ended, err := f.exchange(call.ctx, up, w, call)
	switch {
	case ended && err == nil:
	case errors.Is(context.Cause(ctx), connector.ErrTaskCanceled):
		if id := call.upstreamID(); id != "" {
			f.cancelUpstream(up, w, id)
		} else {
			f.log.Warn("the task was canceled before the forward target named its task, which may keep running there", "task_id", w.TaskID)
		}
	case ctx.Err() != nil: // stopping
	case errors.Is(context.Cause(call.ctx), errTaskTimeout):
		if id := call.upstreamID(); id != "" {
			f.cancelUpstream(up, w, id)
		}
		fail(ctx, w, f.log, fmt.Sprintf("the agent behind this connector did not finish within %s", f.timeout))
	case err != nil:
		f.reset(up)
		f.log.Warn("forwarding a task failed", "task_id", w.TaskID, "err", err)
		fail(ctx, w, f.log, "the agent behind this connector failed: "+err.Error())
	case !ended:
		fail(ctx, w, f.log, "the agent behind this connector stopped answering before the task finished")
	}
}

// upstreamCall is one message relayed to the target: the context of its
// calls there, and what a cancel of our task needs, which may arrive
// before the target named its task.
type upstreamCall struct {
	ctx  context.Context // ends at the timeout, when the client stops, or when a cancel is applied or given up
	end  context.CancelCauseFunc
	stop func() // releases what the call holds

	mu       sync.Mutex
	id       a2a.TaskID  // guarded by mu: the target's task, once known
	peerStop bool        // guarded by mu: the peer canceled our task
	giveUp   *time.Timer // guarded by mu: ends the call if the target does not name its task in time
}

// errCanceled ends an upstream call whose task the peer canceled.
var errCanceled = errors.New("the task was canceled")

// newUpstreamCall returns the call of w, which ends at deadline. Its
// context does not end with a cancel of the task while the target's task
// id is unknown: the call goes on until the target names its task (the
// caller then cancels it there) or cancelTimeout passes.
func (f *forwarder) newUpstreamCall(ctx context.Context, w *connector.Work, deadline time.Time) *upstreamCall {
	base, end := context.WithCancelCause(context.WithoutCancel(ctx))
	cctx, cancel := context.WithDeadlineCause(base, deadline, errTaskTimeout)
	c := &upstreamCall{ctx: cctx, end: end, id: f.upstreamTask(w.TaskID)} // a follow-up's task is known
	stopWatch := context.AfterFunc(ctx, func() {
		if errors.Is(context.Cause(ctx), connector.ErrTaskCanceled) {
			c.onPeerCancel()
			return
		}
		end(context.Cause(ctx)) // the client stops, or the handler returned
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

// onPeerCancel ends the call if the target's task is known, and otherwise
// gives the target cancelTimeout to name it.
func (c *upstreamCall) onPeerCancel() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.peerStop = true
	if c.id != "" {
		c.end(errCanceled)
		return
	}
	c.giveUp = time.AfterFunc(cancelTimeout, func() { c.end(errCanceled) })
}

// named records the target's task id; the call ends if the peer canceled
// our task meanwhile, and the caller cancels it at the target.
func (c *upstreamCall) named(id a2a.TaskID) {
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

// upstreamID returns the target's task id, or "" if it is unknown.
func (c *upstreamCall) upstreamID() a2a.TaskID {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.id
}

// exchange sends the message and relays the answers until the turn ends.
func (f *forwarder) exchange(ctx context.Context, up *upstream, w *connector.Work, call *upstreamCall) (ended bool, err error) {
	req := f.request(w)
	if up.streaming {
		for ev, err := range up.client.SendStreamingMessage(ctx, req) {
			if err != nil {
				return false, err
			}
			if ended, err := f.relay(w, ev, call); err != nil || ended {
				return ended, err
			}
		}
	} else {
		// Without a stream, the target is asked to answer at once with its
		// task, then polled: a blocking call would name the task only when
		// it ends, too late to cancel it.
		req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
		res, err := up.client.SendMessage(ctx, req)
		if err != nil {
			return false, err
		}
		ev, _ := res.(a2a.Event)
		if ended, err := f.relay(w, ev, call); err != nil || ended {
			return ended, err
		}
	}
	return f.settle(ctx, up, w, call)
}

// settle polls the target's task until its turn ends (a blocking send
// that returned early, a stream that ended early) and relays it.
func (f *forwarder) settle(ctx context.Context, up *upstream, w *connector.Work, call *upstreamCall) (bool, error) {
	id := call.upstreamID()
	if id == "" {
		return false, nil
	}
	for wait := pollFirst; ; wait = min(wait*2, pollMax) {
		t, err := up.client.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
		if err != nil {
			return false, err
		}
		if turnEnded(t.Status.State) {
			return f.relay(w, t, call)
		}
		select {
		case <-ctx.Done():
			return false, context.Cause(ctx)
		case <-time.After(wait):
		}
	}
}

// request is the message as the target receives it: in the target's task
// and context when they are known (a follow-up), with the sender named in
// metadata.
func (f *forwarder) request(w *connector.Work) *a2a.SendMessageRequest {
	m := *w.Message
	f.mu.Lock()
	m.TaskID, m.ContextID = f.tasks[w.TaskID], f.contexts[w.ContextID]
	f.mu.Unlock()
	m.Role = a2a.MessageRoleUser
	if !w.NewTask && m.TaskID == "" {
		f.log.Info("a follow-up of a task this connector does not know (did it restart?): sent as a new task", "task_id", w.TaskID)
	}
	meta := map[string]any{"switchboard": map[string]any{"from": w.From, "taskId": string(w.TaskID), "contextId": w.ContextID}}
	return &a2a.SendMessageRequest{Message: &m, Metadata: meta}
}

// relay reports one event of the target as an event of our task, and
// reports whether it ended the turn. The first event names the target's
// task, which call learns (and cancels, if the peer canceled meanwhile).
func (f *forwarder) relay(w *connector.Work, ev a2a.Event, call *upstreamCall) (ended bool, err error) {
	if ev == nil {
		return false, nil
	}
	f.remember(w, ev.TaskInfo())
	call.named(ev.TaskInfo().TaskID)
	var out a2a.Event
	var state a2a.TaskState
	switch e := ev.(type) {
	case *a2a.Message: // a direct answer: it completes the task
		if len(e.Parts) == 0 {
			return false, nil
		}
		out, state = &a2a.Message{ID: e.ID, Parts: e.Parts, Metadata: e.Metadata}, a2a.TaskStateCompleted
	case *a2a.Task:
		t := &a2a.Task{Artifacts: e.Artifacts}
		if st := relayableStatus(e.Status); st != nil {
			t.Status, state = *st, st.State
		} else if len(e.Artifacts) == 0 {
			return false, nil
		}
		out = t
	case *a2a.TaskStatusUpdateEvent:
		st := relayableStatus(e.Status)
		if st == nil {
			return false, nil
		}
		out, state = &a2a.TaskStatusUpdateEvent{Status: *st, Metadata: e.Metadata}, st.State
	case *a2a.TaskArtifactUpdateEvent:
		if e.Artifact == nil || len(e.Artifact.Parts) == 0 {
			return false, nil
		}
		out = &a2a.TaskArtifactUpdateEvent{Artifact: e.Artifact, Append: e.Append, LastChunk: e.LastChunk, Metadata: e.Metadata}
	default:
		return false, nil
	}
	if err := w.Update(out); err != nil {
		return false, err
	}
	if state.Terminal() {
		f.forget(w)
	}
	return turnEnded(state), nil
}

// relayableStatus returns the status to report for a status of the
// target, or nil if there is nothing to report: an agent cannot set
// submitted, and a message without parts is dropped.
func relayableStatus(st a2a.TaskStatus) *a2a.TaskStatus {
	if st.State == a2a.TaskStateUnspecified || st.State == a2a.TaskStateSubmitted {
		return nil
	}
	c := a2a.TaskStatus{State: st.State, Message: st.Message}
	if c.Message != nil && len(c.Message.Parts) == 0 {
		c.Message = nil
	}
	return &c
}

// turnEnded reports whether a task in state s waits for nothing more from
// its agent.
func turnEnded(s a2a.TaskState) bool {
	return s.Terminal() || s == a2a.TaskStateInputRequired || s == a2a.TaskStateAuthRequired
}

// remember maps our task and context to the target's.
func (f *forwarder) remember(w *connector.Work, theirs a2a.TaskInfo) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if theirs.TaskID != "" {
		setBounded(f.tasks, w.TaskID, theirs.TaskID)
	}
	if theirs.ContextID != "" {
		setBounded(f.contexts, w.ContextID, theirs.ContextID)
	}
}

// forget drops the task mapping once our task finished.
func (f *forwarder) forget(w *connector.Work) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.tasks, w.TaskID)
}

// setBounded sets m[k] = v, dropping an arbitrary entry when m is full.
func setBounded[K comparable, V any](m map[K]V, k K, v V) {
	if _, ok := m[k]; !ok && len(m) >= maxRemembered {
		for old := range m {
			delete(m, old)
			break
		}
	}
	m[k] = v
}

func (f *forwarder) upstreamTask(id a2a.TaskID) a2a.TaskID {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tasks[id]
}

// cancelUpstream cancels the target's task id, which is w's there.
func (f *forwarder) cancelUpstream(up *upstream, w *connector.Work, id a2a.TaskID) {
	ctx, cancel := context.WithTimeout(context.Background(), cancelTimeout)
	defer cancel()
	if _, err := up.client.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id}); err != nil {
		f.log.Warn("cancel the task at the forward target", "task_id", w.TaskID, "upstream_task_id", id, "err", err)
		return
	}
	f.log.Info("canceled the task at the forward target", "task_id", w.TaskID, "upstream_task_id", id)
}
