package front

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/switchboard-dev/switchboard"
)

// Timing of the calls to an upstream.
const (
	cardTimeout   = 30 * time.Second // to read its agent card
	cancelTimeout = 10 * time.Second // to cancel a task there
	pollFirst     = 100 * time.Millisecond
	pollMax       = 2 * time.Second
)

// ErrTimeout is the cause of a job's context when the forwarder's
// timeout passed.
var ErrTimeout = errors.New("the task took longer than its timeout")

// errCanceled ends an upstream call whose task the peer canceled.
var errCanceled = errors.New("the task was canceled")

// Config configures a Forwarder.
type Config struct {
	// Target is where requests go, whatever the card names.
	Target string
	// CardURL is where the card is read; empty means the well-known paths
	// under Target, then under its origin.
	CardURL string
	// WholeURL sends every request to Target itself; otherwise to the
	// path the card names on Target's origin.
	WholeURL bool
	// FallbackCard, if set, lets the forwarder work without the card: it
	// then speaks JSON-RPC 1.0 (then 0.3) at Target, without streaming.
	FallbackCard bool
	// Blocking sends a blocking request to an upstream that does not
	// stream: its answer comes when its turn ends, in one round trip, but
	// its task cannot be canceled before then. Without it the upstream is
	// asked to answer at once, then polled (connect --forward, whose
	// peers' cancels must reach the upstream while it works).
	Blocking bool
	// HTTP is the client of the upstream (its credentials, bounds and
	// redirect policy).
	HTTP *http.Client
	// Timeout bounds one job.
	Timeout time.Duration
	Log     *slog.Logger
	// Secrets are the values of the credentials HTTP sends: removed from
	// every event relayed back and every failure reported, since an
	// upstream may reflect the headers it is sent. nil: none.
	Secrets *Secrets
}

// Forwarder relays work to one upstream A2A server and its answers back:
// the server's front mode and connect --forward both use it. The
// upstream's card decides the protocol version (1.0 or 0.3) and the
// binding (JSON-RPC, HTTP+JSON or gRPC; see PickInterface) it is spoken to
// in, and whether its answers are streamed, whatever the version and
// binding of the peer that sent the work.
type Forwarder struct {
	cfg Config // immutable
	log *slog.Logger

	mu       sync.Mutex
	upstream *upstream // guarded by mu: nil until the card was read (and after a failure)
	closed   bool      // guarded by mu: Close was called
}

// upstream is a client of the upstream, made from its card. Its client
// may be a gRPC connection that every job shares: it is closed when it is
// retired (after a failure, or Close) and no job uses it any longer, not
// under the calls of the jobs still using it.
type upstream struct {
	client    *a2aclient.Client
	streaming bool
	binding   string                      // the binding spoken there: JSON-RPC, HTTP+JSON or gRPC
	version   switchboard.ProtocolVersion // the protocol version spoken there
	users     int                         // guarded by the Forwarder's mu: connects not yet released
	retired   bool                        // guarded by the Forwarder's mu: no longer handed out
}

// NewForwarder returns the forwarder of cfg.Target.
func NewForwarder(cfg Config) *Forwarder {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Forwarder{cfg: cfg, log: cfg.Log.With("upstream", RedactURL(cfg.Target))}
}

// Close releases the forwarder's client: at once, or when the last job
// using it ends. A client made after Close (a job's late cancel) is
// released when that use ends.
func (f *Forwarder) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	if f.upstream != nil {
		f.retireLocked(f.upstream)
		f.upstream = nil
	}
}

// retireLocked hands up out no more, and closes its client unless a job
// still uses it (then release does). f.mu is held.
func (f *Forwarder) retireLocked(up *upstream) {
	up.retired = true
	if up.users == 0 {
		_ = up.client.Destroy()
	}
}

// release ends a use of up that connect returned.
func (f *Forwarder) release(up *upstream) {
	f.mu.Lock()
	defer f.mu.Unlock()
	up.users--
	if up.users == 0 && up.retired {
		_ = up.client.Destroy()
	}
}

// Job is one message to relay to the upstream, and where its answers go.
type Job struct {
	// TaskID and ContextID are our task's ids.
	TaskID    a2a.TaskID
	ContextID string
	// NewTask is set for the first message of a task.
	NewTask bool
	// From is the label of the peer that sent it.
	From string
	// Message is the peer's message.
	Message *a2a.Message
	// UpstreamTaskID and UpstreamContextID are the upstream's ids of our
	// task and context, where known (a follow-up).
	UpstreamTaskID    a2a.TaskID
	UpstreamContextID string
	// Update reports one event of our task; an error stops the job, and
	// one that wraps switchboard.ErrTaskUnwritten cancels the upstream's
	// task too, without a failure (our task was refused, not failed).
	Update func(a2a.Event) error
	// Fail reports that the task failed: reason says so to the peer, err
	// (nil for a timeout or an upstream that stopped answering) is the
	// cause, for the owner.
	Fail func(reason string, err error)
	// Named, if set, is told the upstream's ids with each event, and once
	// more with ended set when the task ended there (its ids are no
	// longer needed).
	Named func(theirs a2a.TaskInfo, ended bool)
	// PeerCanceled, if set, says whether the job's context ending with
	// cause means the peer canceled the task: the task is then canceled
	// upstream too, at once if the upstream named it already, otherwise
	// as soon as it does (within cancelTimeout).
	PeerCanceled func(cause error) bool
}

// connect returns the client of the upstream, reading its card the first
// time (and again after a failure); the caller calls release when done
// with it.
func (f *Forwarder) connect(ctx context.Context) (*upstream, error) {
	f.mu.Lock()
	up := f.upstream
	if up != nil {
		up.users++
	}
	f.mu.Unlock()
	if up != nil {
		return up, nil
	}
	cctx, cancel := context.WithTimeout(ctx, cardTimeout)
	defer cancel()
	card, err := ResolveCard(cctx, f.cfg.HTTP, f.cfg.Target, f.cfg.CardURL)
	if err != nil && (!f.cfg.FallbackCard || ctx.Err() != nil) {
		return nil, err // no fallback for a read cut short by the job's end: the card is unknown, not missing
	}
	if err != nil {
		f.log.Info("the upstream's card cannot be read: speaking JSON-RPC at its URL", "err", f.describe(err))
		card = FallbackCard(f.cfg.Target)
	}
	PinInterfaces(card, f.cfg.Target, f.cfg.WholeURL, func(cardURL string) {
		f.log.Info("the upstream's card names another host; sending to the configured one instead", "card_url", RedactURL(cardURL))
	})
	// The card's interfaces decide the version and the binding: 1.0
	// first, and JSON-RPC, then HTTP+JSON, then gRPC (see Bindings).
	iface, proto, err := PickInterface(card)
	if err != nil {
		return nil, err
	}
	client, err := newClient(cctx, f.cfg.HTTP, iface, withJSONRPCTransport(f.cfg.HTTP))
	if err != nil {
		return nil, fmt.Errorf("speak %s %s to it: %w", BindingName(iface.ProtocolBinding), proto, err)
	}
	_ = client.UpdateCard(card) // the client reads its capabilities; it lists iface
	up = &upstream{client: client, streaming: card.Capabilities.Streaming, binding: BindingName(iface.ProtocolBinding), version: proto}
	f.mu.Lock()
	switch {
	case f.closed:
		up.retired = true // closed by release: no one else will
	case f.upstream == nil:
		f.upstream = up
	default:
		_ = client.Destroy()
		up = f.upstream
	}
	up.users++
	f.mu.Unlock()
	f.log.Info("read the upstream's card", "name", f.cfg.Secrets.String(card.Name), "interfaces", RedactURL(DescribeInterfaces(card)),
		"binding", up.binding, "version", up.version, "streaming", up.streaming)
	return up, nil
}

// describe is Describe with the forwarder's secrets.
func (f *Forwarder) describe(err error) string {
	return Describe(err, f.cfg.Secrets)
}

// reset forgets the upstream's client after a failure, so that the next
// job reads its card again (it may have restarted or changed).
func (f *Forwarder) reset(up *upstream) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.upstream == up {
		f.upstream = nil
		f.retireLocked(up)
	}
}

// Handle relays one message to the upstream and its answers back, until
// the upstream ends the turn, and reports a failure through j.Fail. It
// returns the error that ended the job, if any.
func (f *Forwarder) Handle(ctx context.Context, j *Job) error {
	deadline := time.Now().Add(f.cfg.Timeout)
	tctx, cancel := context.WithDeadlineCause(ctx, deadline, ErrTimeout)
	defer cancel()
	up, err := f.connect(WithPeer(tctx, j.From))
	if err != nil {
		if ctx.Err() == nil {
			f.log.Warn("the upstream is unreachable", "err", f.describe(err))
			j.Fail("the agent behind this address is unreachable: "+f.describe(err), err)
		}
		return err
	}
	defer f.release(up)
	if ctx.Err() != nil {
		return context.Cause(ctx) // canceled or stopping before anything was sent
	}
	call := newCall(ctx, j, deadline)
	defer call.stop()
	cctx := WithPeer(call.ctx, j.From)
	ended, err := f.exchange(cctx, up, j, call)
	switch {
	case ended && err == nil:
	case j.PeerCanceled != nil && j.PeerCanceled(context.Cause(ctx)):
		if id := call.upstreamID(); id != "" {
			_ = f.Cancel(WithPeer(context.WithoutCancel(ctx), j.From), id)
		} else {
			f.log.Warn("the task was canceled before the upstream named its task, which may keep running there", "task_id", j.TaskID)
		}
	case errors.Is(err, switchboard.ErrTaskUnwritten):
		// Our task could not be written: no one will read the upstream's.
		f.log.Info("the task was refused as it answered; canceling it upstream", "task_id", j.TaskID, "err", f.describe(err))
		if id := call.upstreamID(); id != "" {
			_ = f.Cancel(WithPeer(context.WithoutCancel(ctx), j.From), id)
		}
	case ctx.Err() != nil: // stopping
	case errors.Is(context.Cause(call.ctx), ErrTimeout):
		if id := call.upstreamID(); id != "" {
			_ = f.Cancel(WithPeer(context.WithoutCancel(ctx), j.From), id)
		}
		j.Fail(fmt.Sprintf("the agent behind this address did not finish within %s", f.cfg.Timeout), nil)
	case err != nil:
		f.reset(up)
		f.log.Warn("forwarding a task failed", "task_id", j.TaskID, "err", f.describe(err))
		j.Fail("the agent behind this address failed: "+f.describe(err), err)
	case !ended:
		j.Fail("the agent behind this address stopped answering before the task finished", nil)
	}
	return err
}

// Cancel cancels the upstream's task id.
func (f *Forwarder) Cancel(ctx context.Context, id a2a.TaskID) error {
	ctx, cancel := context.WithTimeout(ctx, cancelTimeout)
	defer cancel()
	up, err := f.connect(ctx)
	if err != nil {
		return err
	}
	defer f.release(up)
	if _, err := up.client.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id}); err != nil {
		f.log.Warn("cancel the task upstream", "upstream_task_id", id, "err", f.describe(err))
		return err
	}
	f.log.Info("canceled the task upstream", "upstream_task_id", id)
	return nil
}

// exchange sends the message and relays the answers until the turn ends.
func (f *Forwarder) exchange(ctx context.Context, up *upstream, j *Job, call *call) (ended bool, err error) {
	req := request(j)
	if up.streaming {
		for ev, err := range up.client.SendStreamingMessage(ctx, req) {
			if err != nil {
				return false, err
			}
			if ended, err := relay(j, ev, call, f.cfg.Secrets); err != nil || ended {
				return ended, err
			}
		}
	} else {
		// Without a stream, the upstream is asked to answer at once with
		// its task, then polled: a blocking call would name the task only
		// when it ends, too late to cancel it (unless Blocking says that
		// does not matter).
		req.Config = &a2a.SendMessageConfig{ReturnImmediately: !f.cfg.Blocking}
		res, err := sendMessage(ctx, up, req)
		if err != nil {
			return false, err
		}
		ev, _ := res.(a2a.Event)
		if ended, err := relay(j, ev, call, f.cfg.Secrets); err != nil || ended {
			return ended, err
		}
	}
	return f.settle(ctx, up, j, call)
}

// inProgress is what an a2a-go upstream (v2.4.0) answers a follow-up that
// comes while its execution of the task's last turn has not let go of the
// task: it writes the state that ends a turn before it marks the
// execution ending, so a client that polled that state may send the next
// message in between. It refuses the message without acting on it.
const inProgress = "task execution is already in progress"

// inProgressTries bounds the sends of a follow-up refused with inProgress;
// the waits between them double from 20 ms (0.3 s in all).
const inProgressTries = 5

// sendMessage sends req, and a follow-up refused with inProgress again,
// after a short wait, a few times.
func sendMessage(ctx context.Context, up *upstream, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	wait := 20 * time.Millisecond
	for try := 1; ; try++ {
		res, err := up.client.SendMessage(ctx, req)
		if err == nil || req.Message.TaskID == "" || try == inProgressTries || !strings.Contains(err.Error(), inProgress) {
			return res, err
		}
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// settle polls the upstream's task until its turn ends (a blocking send
// that returned early, a stream that ended early) and relays it.
func (f *Forwarder) settle(ctx context.Context, up *upstream, j *Job, call *call) (bool, error) {
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
			return relay(j, t, call, f.cfg.Secrets)
		}
		select {
		case <-ctx.Done():
			return false, context.Cause(ctx)
		case <-time.After(wait):
		}
	}
}

// metadataKey is the key of Switchboard's own metadata (relay.MetadataKey):
// the server's to set, never a peer's.
const metadataKey = "switchboard"

// request is the message as the upstream receives it: in the upstream's
// task and context when they are known (a follow-up), with the sender and
// our task named under metadataKey, in the request's metadata and in the
// message's. Whatever the peer put under that key in its message is
// replaced, so that the upstream can trust what it reads there.
func request(j *Job) *a2a.SendMessageRequest {
	m := *j.Message
	m.TaskID, m.ContextID = j.UpstreamTaskID, j.UpstreamContextID
	m.Role = a2a.MessageRoleUser
	m.ReferenceTasks = nil // our ids mean nothing upstream
	own := func() map[string]any {
		return map[string]any{"from": j.From, "taskId": string(j.TaskID), "contextId": j.ContextID}
	}
	m.Metadata = maps.Clone(m.Metadata) // the peer's message is not ours to change
	if m.Metadata == nil {
		m.Metadata = map[string]any{}
	}
	m.Metadata[metadataKey] = own()
	return &a2a.SendMessageRequest{Message: &m, Metadata: map[string]any{metadataKey: own()}}
}

// relay reports one event of the upstream as an event of our task,
// without the values of secrets, and reports whether it ended the turn.
// The first event names the upstream's task, which call learns (and
// cancels, if the peer canceled meanwhile).
func relay(j *Job, ev a2a.Event, call *call, secrets *Secrets) (ended bool, err error) {
	if ev == nil {
		return false, nil
	}
	theirs := ev.TaskInfo()
	call.named(theirs.TaskID)
	if j.Named != nil {
		j.Named(theirs, false)
	}
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
	if err := j.Update(secrets.Event(out)); err != nil {
		return false, err
	}
	if j.Named != nil && state.Terminal() {
		j.Named(theirs, true)
	}
	return turnEnded(state), nil
}

// relayableStatus returns the status to report for a status of the
// upstream, or nil if there is nothing to report: an agent cannot set
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
