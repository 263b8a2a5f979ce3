package a2aedge

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/a2ajson"
	"github.com/switchboard-dev/switchboard/a2arpc"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/metrics"
	"github.com/switchboard-dev/switchboard/ownerapi"
	"github.com/switchboard-dev/switchboard/tracing"
	"go.opentelemetry.io/otel/trace"
)

// rpcCall is one authenticated JSON-RPC call to an agent's address.
type rpcCall struct {
	req *a2arpc.Request
	// agent is the agent of the address; at a community's address it is
	// nil, and each method finds the agent its task is on (routeSend,
	// taskAgent).
	agent     *switchboard.Agent
	community *switchboard.Community // set at a community's address
	peer      switchboard.Peer
	// caller is who presented the credential; long streams check with it
	// that the credential still opens the address.
	caller  rpcCaller
	version switchboard.ProtocolVersion // decided by the method name
	addr    string                      // the address URL the call reached
	// lastEventID is the Last-Event-ID a reconnecting SSE client sent, or -1.
	lastEventID int64
}

// rpcMethod handles one JSON-RPC method. Exactly one of unary and stream is
// set: unary returns the result object, stream writes an SSE response.
type rpcMethod struct {
	version switchboard.ProtocolVersion
	unary   func(ctx context.Context, c *rpcCall) (any, error)
	stream  func(w http.ResponseWriter, r *http.Request, c *rpcCall)
	// push marks the push notification config methods, which answer
	// -32003 while push notifications are off.
	push bool
	// calls counts the method's calls (switchboard_jsonrpc_requests_total).
	calls *metrics.Counter
}

// methods returns the method table: 1.0 and 0.3 names are disjoint, so the
// name alone decides the version and the shapes of the answer.
func (s *Edge) methods() map[string]rpcMethod {
	v1, v03 := switchboard.ProtocolV1, switchboard.ProtocolV03
	return map[string]rpcMethod{
		"SendMessage":                      {version: v1, unary: s.v1SendMessage},
		"SendStreamingMessage":             {version: v1, stream: s.v1SendStreamingMessage},
		"GetTask":                          {version: v1, unary: s.v1GetTask},
		"ListTasks":                        {version: v1, unary: s.v1ListTasks},
		"CancelTask":                       {version: v1, unary: s.v1CancelTask},
		"SubscribeToTask":                  {version: v1, stream: s.v1SubscribeToTask},
		"CreateTaskPushNotificationConfig": {version: v1, unary: s.v1CreatePushConfig, push: true},
		"GetTaskPushNotificationConfig":    {version: v1, unary: s.v1GetPushConfig, push: true},
		"ListTaskPushNotificationConfigs":  {version: v1, unary: s.v1ListPushConfigs, push: true},
		"DeleteTaskPushNotificationConfig": {version: v1, unary: s.v1DeletePushConfig, push: true},
		"GetExtendedAgentCard":             {version: v1, unary: s.v1GetExtendedAgentCard},

		"message/send":                        {version: v03, unary: s.v03SendMessage},
		"message/stream":                      {version: v03, stream: s.v03StreamMessage},
		"tasks/get":                           {version: v03, unary: s.v03GetTask},
		"tasks/cancel":                        {version: v03, unary: s.v03CancelTask},
		"tasks/resubscribe":                   {version: v03, stream: s.v03Resubscribe},
		"tasks/pushNotificationConfig/set":    {version: v03, unary: s.v03SetPushConfig, push: true},
		"tasks/pushNotificationConfig/get":    {version: v03, unary: s.v03GetPushConfig, push: true},
		"tasks/pushNotificationConfig/list":   {version: v03, unary: s.v03ListPushConfigs, push: true},
		"tasks/pushNotificationConfig/delete": {version: v03, unary: s.v03DeletePushConfig, push: true},
		"agent/getAuthenticatedExtendedCard":  {version: v03, unary: s.v03GetExtendedCard},
	}
}

// handleAddress serves an agent's address: the landing page on GET, A2A
// JSON-RPC on POST.
func (s *Edge) handleAddress(w http.ResponseWriter, r *http.Request) {
	agent, ok := s.AgentFromPath(w, r)
	if !ok {
		return
	}
	s.serveAgent(w, r, agent)
}

func (s *Edge) serveAgent(w http.ResponseWriter, r *http.Request, agent *switchboard.Agent) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		s.serveLanding(w, r, agent)
	case http.MethodPost:
		s.serveRPC(w, r, rpcTarget{agent: agent, addr: s.ReachedAddress(r, agent)})
	case http.MethodOptions:
		httpapi.SetCORS(w)
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST, OPTIONS")
		httpapi.WriteJSON(w, http.StatusMethodNotAllowed, ownerapi.Error{Error: "method not allowed"})
	}
}

// serveRPC runs the request pipeline of an address, in this order:
// authentication, rate limit, body limit, envelope, method, version,
// params, and the method itself. Each step answers with its own error.
func (s *Edge) serveRPC(w http.ResponseWriter, r *http.Request, target rpcTarget) {
	httpapi.SetCORS(w)
	if s.Tracer.On() {
		// The call's span, in the trace of the peer's traceparent (a
		// malformed one is ignored: a new trace starts).
		ctx, span := s.Tracer.StartServer(r, "a2a call", "switchboard.agent_id", targetAgentID(target))
		defer span.End()
		r = r.WithContext(ctx)
	}
	// Until the method is known, errors take the shape the header asks for.
	shape := switchboard.ProtocolV03
	if strings.HasPrefix(r.Header.Get("A2A-Version"), "1") {
		shape = switchboard.ProtocolV1
	}

	caller, err := s.authenticateCaller(r, target)
	if err != nil {
		s.writeUnauthorized(w, r, err, shape, target.agent)
		return
	}
	peer := caller.peer
	// A limiter that cannot count lets the request through (it logs and
	// counts that itself).
	if ok, retry, _ := s.Limiter.Allow(r.Context(), peer.Key()); !ok {
		secs := int(math.Ceil(retry.Seconds()))
		w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
		e := a2arpc.ErrorFor(switchboard.Errorf(switchboard.ERATELIMITED, "rate limit exceeded: retry in %d s", max(secs, 1)), shape)
		e.Status = http.StatusTooManyRequests
		a2arpc.WriteError(w, a2arpc.NullID, e)
		return
	}
	body, err := s.ReadBody(w, r)
	if err != nil {
		e := a2arpc.ErrorFor(err, shape)
		e.Status = httpapi.HTTPStatus(switchboard.ErrorCode(err))
		a2arpc.WriteError(w, a2arpc.NullID, e)
		return
	}

	req, rerr := a2arpc.DecodeEnvelope(body)
	if rerr != nil {
		a2arpc.WriteError(w, req.ID, rerr)
		return
	}
	m, ok := s.rpc[req.Method]
	s.met.countRPC(m)
	if ok && s.Tracer.On() {
		trace.SpanFromContext(r.Context()).SetName("a2a " + req.Method) // one of ours: a name in s.rpc
	}
	if !ok {
		a2arpc.WriteError(w, req.ID, &a2arpc.Error{Code: a2arpc.MethodNotFound, Message: fmt.Sprintf("Method not found: %s", switchboard.Truncate(req.Method, 64))})
		return
	}
	if _, err := a2arpc.RequestedVersion(r); err != nil {
		a2arpc.WriteError(w, req.ID, a2arpc.ErrorFor(err, m.version))
		return
	}
	if e := a2arpc.CheckParams(req); e != nil {
		a2arpc.WriteError(w, req.ID, e)
		return
	}
	if m.push && (!s.Cfg.PushNotifications || s.passThrough(r.Context(), target.agent)) {
		a2arpc.WriteError(w, req.ID, a2arpc.ErrorFor(errPushNotSupported, m.version))
		return
	}
	call := &rpcCall{req: req, agent: target.agent, community: target.community, peer: peer, caller: caller,
		version: m.version, addr: target.addr, lastEventID: -1}

	if m.stream != nil {
		release, ok := s.acquireStream(peer)
		if !ok {
			w.Header().Set("Retry-After", "5")
			e := a2arpc.ErrorFor(switchboard.Errorf(switchboard.ERATELIMITED, "too many open streams: at most %d per peer", s.Cfg.MaxStreamsPerPeer), m.version)
			e.Status = http.StatusTooManyRequests
			a2arpc.WriteError(w, req.ID, e)
			return
		}
		defer release()
		if err := parseLastEventID(r, call); err != nil {
			s.streamFailed(w, r, call, err)
			return
		}
		m.stream(w, r, call)
		return
	}
	result, err := m.unary(r.Context(), call)
	if err != nil {
		tracing.Fail(trace.SpanFromContext(r.Context()), err)
		if switchboard.ErrorCode(err) == switchboard.EINTERNAL {
			s.LogInternal(r, err)
		}
		e := a2arpc.ErrorFor(err, m.version)
		if switchboard.ErrorCode(err) == switchboard.EUPSTREAM {
			e.Status = http.StatusBadGateway // a front's upstream failed: a gateway's answer
		}
		if s.Unavailable(w, err) {
			e.Status = http.StatusServiceUnavailable
		}
		a2arpc.WriteError(w, req.ID, e)
		return
	}
	_, span := s.Tracer.Start(r.Context(), "a2a reply", trace.SpanKindInternal, "", "")
	a2arpc.WriteResult(w, req.ID, result)
	span.End()
}

// targetAgentID is the id of the agent an address names ("" for a
// community's).
func targetAgentID(t rpcTarget) string {
	if t.agent == nil {
		return ""
	}
	return t.agent.ID
}

// acquireStream counts an open stream of the peer, unless it already holds
// MaxStreamsPerPeer. The returned function releases it.
func (s *Edge) acquireStream(p switchboard.Peer) (release func(), ok bool) {
	key := p.Key()
	s.streamsMu.Lock()
	defer s.streamsMu.Unlock()
	if s.streamsByPeer[key] >= s.Cfg.MaxStreamsPerPeer {
		return nil, false
	}
	s.streamsByPeer[key]++
	s.met.streams.Inc()
	return func() {
		s.met.streams.Dec()
		s.streamsMu.Lock()
		defer s.streamsMu.Unlock()
		if s.streamsByPeer[key]--; s.streamsByPeer[key] <= 0 {
			delete(s.streamsByPeer, key)
		}
	}, true
}

// unauthenticatedBodyLimit bounds what is read of a request that failed
// authentication, only to echo its JSON-RPC id.
const unauthenticatedBodyLimit = 64 << 10

// writeUnauthorized answers a call without a valid peer token: HTTP 401, a
// WWW-Authenticate challenge that tells a missing token from a bad one, and
// a JSON-RPC error that echoes the request's id when it can be read from
// the first 64 KiB of the body. When the agent (nil for a community)
// takes pairing requests, the challenge names its resource metadata and
// the error's data says where to pair (pairingHint).
func (s *Edge) writeUnauthorized(w http.ResponseWriter, r *http.Request, err error, shape switchboard.ProtocolVersion, agent *switchboard.Agent) {
	if switchboard.ErrorCode(err) != switchboard.EUNAUTHORIZED {
		s.LogInternal(r, err)
		a2arpc.WriteError(w, a2arpc.NullID, &a2arpc.Error{Code: a2arpc.InternalError, Message: "internal error", Status: http.StatusInternalServerError})
		return
	}
	id := a2arpc.NullID
	body, readErr := io.ReadAll(io.LimitReader(r.Body, unauthenticatedBodyLimit))
	if readErr == nil {
		var env struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(body, &env) == nil && len(env.ID) > 0 && a2arpc.ValidID(env.ID) {
			id = env.ID
		}
	}
	challenge := `Bearer realm="a2a"`
	pairs := agent != nil && s.takesPairing(agent)
	if pairs {
		challenge += `, resource_metadata="` + s.ResourceMetadataURL(r, agent) + `"`
	}
	if httpapi.BearerToken(r) != "" {
		challenge += `, error="invalid_token", error_description="the bearer token is not valid (revoked, rotated or mistyped)"`
	}
	w.Header().Set("WWW-Authenticate", challenge)
	e := a2arpc.ErrorFor(err, shape)
	e.Message = "Unauthorized: " + switchboard.ErrorMessage(err) + ". Ask this agent's owner for a peer token."
	if pairs {
		e.Message = "Unauthorized: " + switchboard.ErrorMessage(err) + ". Ask this agent's owner for a peer token, or pair: switchboard pair " + s.ReachedBase(r, agent)
		e.Data = s.PairingHint(r, agent, e.Data, shape)
	}
	e.Status = http.StatusUnauthorized
	a2arpc.WriteError(w, id, e)
}

// parseLastEventID reads the Last-Event-ID header of a reconnecting SSE
// client: the sequence number of the last event it received.
func parseLastEventID(r *http.Request, c *rpcCall) error {
	v := strings.TrimSpace(r.Header.Get("Last-Event-ID"))
	if v == "" {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return switchboard.Errorf(switchboard.EINVALID, "Last-Event-ID must be the id of an event this server sent")
	}
	c.lastEventID = n
	return nil
}

// decodeParams decodes a call's params into v.
func decodeParams(c *rpcCall, v any) error {
	var err error
	if p, ok := v.(*a2a.SendMessageRequest); ok {
		err = a2ajson.UnmarshalSendMessageRequest(c.req.Params, p) // one pass over the message, not ten
	} else {
		err = json.Unmarshal(c.req.Params, v)
	}
	if err != nil {
		return switchboard.Errorf(switchboard.EINVALID, "Invalid params: %s", err.Error())
	}
	return nil
}
