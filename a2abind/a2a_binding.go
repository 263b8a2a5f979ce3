package a2abind

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/a2aedge"
	"github.com/switchboard-dev/switchboard/httpapi"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// An address speaks three A2A bindings: JSON-RPC, which this package
// decodes itself (a2a.go), and HTTP+JSON and gRPC, which the a2a-go SDK's
// transports decode (a2asrv.NewRESTHandler, a2av0.NewRESTHandler,
// a2agrpc.NewHandler) and hand to an a2asrv.RequestHandler.
//
// bindingHandler is that RequestHandler, and the one seam between the
// SDK's transports and the relay. The SDK's own handler runs an agent in
// process over its own task store; Switchboard is not the agent but a
// relay to it, and its guarantees (per-peer tokens, isolation of tasks and
// contexts, the body and rate limits, idempotent sends by message id,
// durable tasks, resumable streams, pushes, fronts) live in the task
// service and in the call each JSON-RPC method takes (rpcCall: the caller,
// the agent or community of the address, the peer, the protocol version,
// the address URL). So the transports are not given the SDK's handler:
// each of their calls is turned into that same rpcCall and given to the
// same operations the JSON-RPC methods use, so that every binding keeps
// every guarantee by construction rather than by a second implementation.
//
// Authentication, the rate limit and the body limit happen before the
// SDK's transport sees the request (serveREST, the gRPC interceptors),
// which puts the resolved call in the context (bindingState); the
// handler's methods only read it.
type bindingHandler struct{ s *Face }

var _ a2asrv.RequestHandler = (*bindingHandler)(nil)

// bindingState is a call in a non-JSON-RPC binding, carried in the
// request's context from the authentication in front of the SDK's
// transport to bindingHandler.
type bindingState struct {
	r *http.Request // for logging
	// call is the authenticated call; nil until resolve sets it (gRPC,
	// where the tenant names the target inside the request message).
	call *a2aedge.Call
	// resolve authenticates a gRPC call once its tenant is known.
	resolve func(ctx context.Context, tenant string) (*a2aedge.Call, error)
	// tenant is the tenant of the gRPC request message (recordTenant).
	tenant string
	// err is the error the handler last returned, in Switchboard's terms:
	// the HTTP+JSON binding answers it with its own status and reason
	// (restWriter), which the SDK's error table does not all have.
	err error
	// pageSizeGiven: the HTTP+JSON request's query names pageSize, which
	// the SDK's request keeps as a plain int, so that pageSize=0 is
	// refused as JSON-RPC refuses it rather than taken as no page size.
	pageSizeGiven bool
	// negativeHistory: the gRPC request named a negative history length,
	// which the SDK's conversion drops as if absent; it is refused.
	negativeHistory bool
	// events holds the ids of the stream events handed to the SDK's
	// transport and not yet written, in order (-1: an error event, which
	// has none); restWriter writes them in place of the SDK's random ids,
	// so that an HTTP+JSON client resumes with Last-Event-ID as a
	// JSON-RPC one does. Nil for gRPC, which has no event ids.
	events *eventIDs
}

// historyLength is the history length a request asks for: -1 when the
// gRPC request named a negative one, so that it is refused.
func (st *bindingState) historyLength(hl *int) *int {
	if st.negativeHistory {
		n := -1
		return &n
	}
	return hl
}

// eventIDs is a queue of stream event ids, filled by the stream's
// producer and emptied by the writer: the SDK's transport writes from
// another goroutine than the one that yields its events.
type eventIDs struct {
	mu  sync.Mutex
	ids []int64
}

// push queues id; on a nil queue it does nothing.
func (q *eventIDs) push(id int64) {
	if q == nil {
		return
	}
	q.mu.Lock()
	q.ids = append(q.ids, id)
	q.mu.Unlock()
}

// pop returns the oldest id, or -1 when none is queued.
func (q *eventIDs) pop() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.ids) == 0 {
		return -1
	}
	id := q.ids[0]
	q.ids = q.ids[1:]
	return id
}

type bindingKey struct{}

// withBinding returns ctx carrying st.
func withBinding(ctx context.Context, st *bindingState) context.Context {
	return context.WithValue(ctx, bindingKey{}, st)
}

// call returns the authenticated call of ctx.
func (h *bindingHandler) call(ctx context.Context, tenant string) (*a2aedge.Call, *bindingState, error) {
	st, _ := ctx.Value(bindingKey{}).(*bindingState)
	if st == nil {
		return nil, nil, errBindingUnauthenticated
	}
	if st.call == nil && st.resolve != nil {
		if tenant == "" {
			tenant = st.tenant
		}
		c, err := st.resolve(ctx, tenant)
		if err != nil {
			return nil, st, err
		}
		st.call = c
	}
	if st.call == nil {
		return nil, st, errBindingUnauthenticated
	}
	return st.call, st, nil
}

var errBindingUnauthenticated = switchboard.Errorf(switchboard.EUNAUTHORIZED, "send Authorization: Bearer <token>")

// fail records err on the call and returns it as the SDK's transports
// expect it (bindingError). Internal errors are logged and shown as
// "internal error".
func (h *bindingHandler) fail(st *bindingState, err error) error {
	if err == nil {
		return nil
	}
	if st != nil {
		st.err = err
		if switchboard.ErrorCode(err) == switchboard.EINTERNAL && st.r != nil {
			h.s.LogInternal(st.r, err)
		}
	}
	return newBindingError(err)
}

func (h *bindingHandler) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	c, st, err := h.call(ctx, req.Tenant)
	if err != nil {
		return nil, h.fail(st, err)
	}
	t, err := h.s.GetTask(ctx, c, req.ID, st.historyLength(req.HistoryLength))
	return t, h.fail(st, err)
}

func (h *bindingHandler) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	c, st, err := h.call(ctx, req.Tenant)
	if err != nil {
		return nil, h.fail(st, err)
	}
	p := a2aedge.ListTasksParams{ContextID: req.ContextID, Status: string(req.Status), PageToken: req.PageToken,
		HistoryLength: st.historyLength(req.HistoryLength), IncludeArtifacts: req.IncludeArtifacts}
	if req.PageSize != 0 || st.pageSizeGiven {
		p.PageSize = &req.PageSize
	}
	if req.StatusTimestampAfter != nil {
		p.StatusTimestampAfter = req.StatusTimestampAfter.Format(time.RFC3339Nano)
	}
	out, err := h.s.ListTasks(ctx, c, &p)
	return out, h.fail(st, err)
}

func (h *bindingHandler) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	c, st, err := h.call(ctx, req.Tenant)
	if err != nil {
		return nil, h.fail(st, err)
	}
	if req.ID == "" {
		return nil, h.fail(st, switchboard.Errorf(switchboard.EINVALID, "Invalid params: id is required"))
	}
	t, err := h.s.CancelTask(ctx, c, req.ID)
	if err != nil {
		return nil, h.fail(st, err)
	}
	return &t.A2A, nil
}

func (h *bindingHandler) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	c, st, err := h.call(ctx, req.Tenant)
	if err != nil {
		return nil, h.fail(st, err)
	}
	if req.Message == nil {
		return nil, h.fail(st, switchboard.Errorf(switchboard.EINVALID, "Invalid params: message is required"))
	}
	t, err := h.s.SendAndWait(ctx, c, req)
	if err != nil {
		return nil, h.fail(st, err)
	}
	return switchboard.TrimTask(&t.A2A, a2aedge.SendHistoryLength(req), true), nil
}

func (h *bindingHandler) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return h.stream(ctx, req.Tenant, func(c *a2aedge.Call) (a2aedge.StreamPlan, error) {
		if req.Message == nil {
			return a2aedge.StreamPlan{}, switchboard.Errorf(switchboard.EINVALID, "Invalid params: message is required")
		}
		return h.s.SendStreamPlan(ctx, c, req)
	})
}

func (h *bindingHandler) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	return h.stream(ctx, req.Tenant, func(c *a2aedge.Call) (a2aedge.StreamPlan, error) {
		return h.s.SubscribePlan(ctx, c, req.ID)
	})
}

// stream runs a stream method: the peer's stream allowance, the plan,
// then the task's events, as the JSON-RPC stream methods do.
func (h *bindingHandler) stream(ctx context.Context, tenant string, plan func(c *a2aedge.Call) (a2aedge.StreamPlan, error)) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		c, st, err := h.call(ctx, tenant)
		if err != nil {
			yield(nil, h.fail(st, err))
			return
		}
		release, ok := h.s.AcquireStream(c.Peer())
		if !ok {
			yield(nil, h.fail(st, switchboard.Errorf(switchboard.ERATELIMITED, "too many open streams: at most %d per peer", h.s.Cfg.MaxStreamsPerPeer)))
			return
		}
		defer release()
		p, err := plan(c)
		if err != nil {
			yield(nil, h.fail(st, err))
			return
		}
		h.s.FollowStream(ctx, st.r, &yieldSink{h: h, st: st, yield: yield}, c, p)
	}
}

// yieldSink is the stream of a call in the SDK's transports: its event
// sequence. The transport writes keep-alives of its own.
type yieldSink struct {
	h     *bindingHandler
	st    *bindingState
	yield func(a2a.Event, error) bool
}

// errSinkClosed ends a stream whose consumer stopped reading.
var errSinkClosed = errors.New("stream consumer stopped")

func (k *yieldSink) Start() error     { return nil }
func (k *yieldSink) KeepAlive() error { return nil }
func (k *yieldSink) Fail(err error) {
	k.st.events.push(-1)
	k.yield(nil, k.h.fail(k.st, err))
}
func (k *yieldSink) Send(id int64, ev a2a.Event, _ bool) error {
	k.st.events.push(id)
	if !k.yield(ev, nil) {
		return errSinkClosed
	}
	return nil
}

// pushCall is call for the push configuration methods, which fail while
// push notifications are off.
func (h *bindingHandler) pushCall(ctx context.Context, tenant string) (*a2aedge.Call, *bindingState, error) {
	c, st, err := h.call(ctx, tenant)
	if err == nil && h.s.PushOff(ctx, c) {
		err = a2aedge.ErrPushNotSupported
	}
	return c, st, err
}

func (h *bindingHandler) GetTaskPushConfig(ctx context.Context, req *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	c, st, err := h.pushCall(ctx, req.Tenant)
	if err != nil {
		return nil, h.fail(st, err)
	}
	pc, err := h.s.Tasks.GetPushConfig(ctx, c.Peer(), req.TaskID, req.ID)
	if err != nil {
		return nil, h.fail(st, err)
	}
	return &pc.Config, nil
}

func (h *bindingHandler) ListTaskPushConfigs(ctx context.Context, req *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	c, st, err := h.pushCall(ctx, req.Tenant)
	if err != nil {
		return nil, h.fail(st, err)
	}
	pcs, err := h.s.Tasks.ListPushConfigs(ctx, c.Peer(), req.TaskID)
	if err != nil {
		return nil, h.fail(st, err)
	}
	out := &a2a.ListTaskPushConfigResponse{Configs: make([]*a2a.PushConfig, 0, len(pcs))}
	for _, pc := range pcs {
		out.Configs = append(out.Configs, &pc.Config)
	}
	return out, nil
}

func (h *bindingHandler) CreateTaskPushConfig(ctx context.Context, req *a2a.PushConfig) (*a2a.PushConfig, error) {
	c, st, err := h.pushCall(ctx, req.Tenant)
	if err != nil {
		return nil, h.fail(st, err)
	}
	if req.TaskID == "" {
		return nil, h.fail(st, switchboard.Errorf(switchboard.EINVALID, "Invalid params: taskId is required"))
	}
	cfg := *req
	cfg.Tenant = ""
	pc, err := h.s.Tasks.SetPushConfig(ctx, c.Peer(), cfg, c.Version())
	if err != nil {
		return nil, h.fail(st, err)
	}
	return &pc.Config, nil
}

func (h *bindingHandler) DeleteTaskPushConfig(ctx context.Context, req *a2a.DeleteTaskPushConfigRequest) error {
	c, st, err := h.pushCall(ctx, req.Tenant)
	if err != nil {
		return h.fail(st, err)
	}
	return h.fail(st, h.s.Tasks.DeletePushConfig(ctx, c.Peer(), req.TaskID, req.ID))
}

func (h *bindingHandler) GetExtendedAgentCard(ctx context.Context, req *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	c, st, err := h.call(ctx, req.Tenant)
	if err != nil {
		return nil, h.fail(st, err)
	}
	card, err := h.s.ExtendedCard(ctx, c)
	if err != nil {
		return nil, h.fail(st, err)
	}
	// The card is this package's union card (1.0 and 0.3 fields); the
	// transports want the SDK's type, which reads the 1.0 fields.
	raw, err := json.Marshal(card)
	if err != nil {
		return nil, h.fail(st, err)
	}
	var out a2a.AgentCard
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, h.fail(st, err)
	}
	return &out, nil
}

// bindingError is a Switchboard error as the SDK's transports take it: it
// unwraps to the A2A error of the same meaning, which the HTTP+JSON
// transport maps to its status and reason, and it carries its own gRPC
// status (with a google.rpc.ErrorInfo of the reason in codes), which the
// gRPC transport sends as it is, so that codes A2A does not name (rate
// limits, quotas, an unavailable store) keep their meaning there too.
type bindingError struct {
	err error
	a2a *a2a.Error
}

func newBindingError(err error) *bindingError {
	return &bindingError{err: err, a2a: a2a.NewError(a2aErrorOf(switchboard.ErrorCode(err)), switchboard.ErrorMessage(err))}
}

func (e *bindingError) Error() string { return switchboard.ErrorMessage(e.err) }
func (e *bindingError) Unwrap() error { return e.a2a }

// GRPCStatus returns the error's gRPC status.
func (e *bindingError) GRPCStatus() *status.Status {
	code := switchboard.ErrorCode(e.err)
	c := httpapi.Translate(code)
	st := status.New(grpcCode(code), e.Error())
	if d, err := st.WithDetails(&errdetails.ErrorInfo{Reason: c.Reason, Domain: a2a.ProtocolDomain}); err == nil {
		return d
	}
	return st
}

// a2aErrorOf returns the A2A error of a Switchboard error code; codes A2A
// has no error for are an internal error to the SDK's tables.
func a2aErrorOf(code switchboard.Code) error {
	switch code {
	case switchboard.EINVALID, switchboard.EUNPROCESSABLE, switchboard.ECONFLICT:
		return a2a.ErrInvalidParams
	case switchboard.ETOOLARGE:
		return a2a.ErrInvalidRequest
	case switchboard.ENOTFOUND:
		return a2a.ErrTaskNotFound
	case switchboard.EUNAUTHORIZED:
		return a2a.ErrUnauthenticated
	case switchboard.EFORBIDDEN:
		return a2a.ErrUnauthorized
	case switchboard.ENOTCANCELABLE:
		return a2a.ErrTaskNotCancelable
	case switchboard.EPUSHNOTSUPPORTED:
		return a2a.ErrPushNotificationNotSupported
	case switchboard.EUNSUPPORTED:
		return a2a.ErrUnsupportedOperation
	case switchboard.ECONTENTTYPE:
		return a2a.ErrUnsupportedContentType
	case switchboard.EINVALIDAGENTRESPONSE:
		return a2a.ErrInvalidAgentResponse
	case switchboard.EEXTENDEDCARDNOTCONFIG:
		return a2a.ErrExtendedCardNotConfigured
	case switchboard.EEXTENSIONSUPPORTNEEDED:
		return a2a.ErrExtensionSupportRequired
	case switchboard.EVERSIONNOTSUPPORTED:
		return a2a.ErrVersionNotSupported
	}
	return a2a.ErrInternalError
}

// grpcCode returns the gRPC status code of a Switchboard error code, as
// the A2A specification maps its errors and Google's AIP-193 the others.
func grpcCode(code switchboard.Code) grpccodes.Code {
	switch code {
	case switchboard.EINVALID, switchboard.EUNPROCESSABLE, switchboard.ETOOLARGE, switchboard.ECONTENTTYPE:
		return grpccodes.InvalidArgument
	case switchboard.ENOTFOUND, switchboard.ENOAGENT:
		return grpccodes.NotFound
	case switchboard.ECONFLICT:
		return grpccodes.AlreadyExists
	case switchboard.EUNAUTHORIZED:
		return grpccodes.Unauthenticated
	case switchboard.EFORBIDDEN:
		return grpccodes.PermissionDenied
	case switchboard.ERATELIMITED, switchboard.EQUOTA:
		return grpccodes.ResourceExhausted
	case switchboard.EUNAVAILABLE, switchboard.EUPSTREAM:
		return grpccodes.Unavailable
	case switchboard.ENOTCANCELABLE, switchboard.EPUSHNOTSUPPORTED, switchboard.EUNSUPPORTED,
		switchboard.EEXTENDEDCARDNOTCONFIG, switchboard.EEXTENSIONSUPPORTNEEDED, switchboard.EVERSIONNOTSUPPORTED:
		return grpccodes.FailedPrecondition
	}
	return grpccodes.Internal
}

// grpcStatusName returns the name a google.rpc.Status body gives a gRPC
// code ("RESOURCE_EXHAUSTED").
func grpcStatusName(c grpccodes.Code) string {
	var b strings.Builder
	for i, r := range c.String() {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}
