package a2abind

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/a2aedge"
	"github.com/switchboard-dev/switchboard/a2arpc"
	"github.com/switchboard-dev/switchboard/httpapi"
	"google.golang.org/grpc"
)

// The HTTP+JSON binding (A2A 1.0 §11, and 0.3's under /v1) is served under
// every address: {address}/message:send, /message:stream, /tasks,
// /tasks/{id}, /tasks/{id}:cancel, /tasks/{id}:subscribe, the push
// configuration routes under /tasks/{id}/pushNotificationConfigs and
// /extendedAgentCard; 0.3's the same under {address}/v1 (its card at
// /v1/card). The SDK's transports decode and encode; bindingHandler
// (a2a_binding.go) does the work.

// bindings holds the SDK's transports of the server, built once.
type bindings struct {
	rest   http.Handler // A2A 1.0 HTTP+JSON
	rest03 http.Handler // A2A 0.3 HTTP+JSON, under /v1
	grpc   *grpc.Server // A2A 1.0 gRPC (a2a_grpc.go)
}

// restRoutes are the routes of the SDK's HTTP+JSON transports (1.0's, and
// 0.3's under /v1), as a2asrv.NewRESTHandler and a2av0.NewRESTHandler
// register them: serveREST answers a path that is none of them 404
// before it looks at credentials, so that on an agent domain the
// deployment's own paths (/tasks/{id}/reply) stay unknown rather than
// unauthorized.
var restRoutes = func() *http.ServeMux {
	mux := http.NewServeMux()
	nop := func(http.ResponseWriter, *http.Request) {}
	for _, p := range []string{"", "/v1"} {
		for _, rt := range []string{"POST /message:send", "POST /message:stream", "GET /tasks", "GET /tasks/{idAndAction}",
			"POST /tasks/{idAndAction}", "POST /tasks/{id}/pushNotificationConfigs", "GET /tasks/{id}/pushNotificationConfigs",
			"GET /tasks/{id}/pushNotificationConfigs/{configId}", "DELETE /tasks/{id}/pushNotificationConfigs/{configId}"} {
			method, path, _ := strings.Cut(rt, " ")
			mux.HandleFunc(method+" "+p+path, nop)
		}
	}
	mux.HandleFunc("GET /extendedAgentCard", nop)
	mux.HandleFunc("GET /v1/card", nop)
	return mux
}()

// isRESTRoute reports whether the binding serves method at path (under
// an address). OPTIONS is every route's preflight.
func isRESTRoute(method, path string) bool {
	if method == http.MethodOptions {
		method = http.MethodGet
		if !isRESTRoute(method, path) {
			method = http.MethodPost
		}
	}
	_, pattern := restRoutes.Handler(&http.Request{Method: method, URL: &url.URL{Path: path}})
	return pattern != ""
}

var errNoRESTRoute = switchboard.Errorf(switchboard.ENOTFOUND, "not found: no route of the HTTP+JSON binding")

// newBindings builds the SDK's transports over the server's
// bindingHandler. The transports write keep-alives on idle streams at
// the server's interval.
func (s *Face) newBindings() bindings {
	h := &bindingHandler{s: s}
	keep := a2asrv.WithTransportKeepAlive(s.Cfg.StreamKeepAlive)
	return bindings{
		rest:   a2asrv.NewRESTHandler(h, keep),
		rest03: a2av0.NewRESTHandler(h, keep),
		grpc:   s.newGRPC(h),
	}
}

// handleAgentREST serves the HTTP+JSON binding under an agent's address.
func (s *Face) handleAgentREST(w http.ResponseWriter, r *http.Request) {
	agent, ok := s.AgentFromPath(w, r)
	if !ok {
		return
	}
	s.serveREST(w, r, a2aedge.AgentTarget(agent, s.ReachedAddress(r, agent)), "/a/"+r.PathValue("handle"))
}

// handleCommunityREST serves the HTTP+JSON binding under a community's
// address.
func (s *Face) handleCommunityREST(w http.ResponseWriter, r *http.Request) {
	c, ok := s.CommunityFromPath(w, r)
	if !ok {
		return
	}
	s.serveREST(w, r, a2aedge.CommunityTarget(c, s.CommunityURL(r, c.Name)), "/c/"+r.PathValue("name"))
}

// serveREST runs the request pipeline of the HTTP+JSON binding at an
// address whose path is prefix, in the order serveRPC runs it:
// authentication, rate limit, content type and body limit; then the SDK's
// transport, with the call in the context. Each refusal is the binding's
// own error: an HTTP status and a google.rpc.Status body (writeProblem).
func (s *Face) serveREST(w http.ResponseWriter, r *http.Request, target a2aedge.Target, prefix string) {
	rest := strings.TrimPrefix(r.URL.Path, prefix)
	if !isRESTRoute(r.Method, rest) {
		s.writeProblem(w, r, errNoRESTRoute)
		return
	}
	httpapi.SetCORS(w)
	w.Header().Set("Access-Control-Allow-Methods", "GET, HEAD, POST, DELETE, OPTIONS")
	if r.Method == http.MethodOptions {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	caller, err := s.Authenticate(r, target)
	if err != nil {
		if switchboard.ErrorCode(err) == switchboard.EUNAUTHORIZED {
			w.Header().Set("WWW-Authenticate", s.bearerChallenge(r, target.Agent()))
		}
		s.writeProblem(w, r, err)
		return
	}
	if ok, retry, _ := s.Limiter.Allow(r.Context(), caller.Peer().Key()); !ok {
		secs := max(int(math.Ceil(retry.Seconds())), 1)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		s.writeProblem(w, r, switchboard.Errorf(switchboard.ERATELIMITED, "rate limit exceeded: retry in %d s", secs))
		return
	}
	if r.Method == http.MethodPost {
		if err := checkJSONContentType(r); err != nil {
			s.writeProblem(w, r, err)
			return
		}
		body, err := s.ReadBody(w, r)
		if err != nil {
			s.writeProblem(w, r, err)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(jsonFieldNames(body)))
	}
	if _, err := a2arpc.RequestedVersion(r); err != nil {
		s.writeProblem(w, r, err)
		return
	}
	handler, version := s.bind.rest, switchboard.ProtocolV1
	if rest == "/v1" || strings.HasPrefix(rest, "/v1/") {
		handler, version = s.bind.rest03, switchboard.ProtocolV03
	}
	call := a2aedge.NewCall(r.Method+" "+rest, target, caller, version)
	if err := call.ReadLastEventID(r); err != nil {
		s.writeProblem(w, r, err)
		return
	}
	st := &bindingState{r: r, call: call, pageSizeGiven: r.Method == http.MethodGet && r.URL.Query().Has("pageSize"), events: &eventIDs{}}
	r2 := atPath(r.WithContext(withBinding(r.Context(), st)), rest)
	handler.ServeHTTP(&restWriter{ResponseWriter: w, s: s, r: r, st: st}, r2)
}

// checkJSONContentType refuses a body that is not declared JSON: the
// binding's bodies are application/json (A2A also names
// application/a2a+json). A request without a body needs no type.
func checkJSONContentType(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" && r.ContentLength == 0 {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != "application/json" && mt != "application/a2a+json") {
		return errRESTContentType
	}
	return nil
}

var errRESTContentType = switchboard.Errorf(switchboard.EINVALID, "Content-Type must be application/json")

// bearerChallenge is the WWW-Authenticate challenge of a refused call at
// an address: it names the agent's resource metadata when the agent (nil
// for a community) takes pairing requests, and tells a bad token from a
// missing one.
func (s *Face) bearerChallenge(r *http.Request, agent *switchboard.Agent) string {
	challenge := `Bearer realm="a2a"`
	if agent != nil && s.TakesPairing(agent) {
		challenge += `, resource_metadata="` + s.ResourceMetadataURL(r, agent) + `"`
	}
	if httpapi.BearerToken(r) != "" {
		challenge += `, error="invalid_token", error_description="the bearer token is not valid (revoked, rotated or mistyped)"`
	}
	return challenge
}

// restWriter answers an error of bindingHandler with Switchboard's own
// status and reason for it (writeProblem) rather than the SDK's table,
// which has no rate limit, quota or unavailable store: when the SDK's
// transport writes an error status after the handler failed, the SDK's
// body is dropped and the problem written instead.
type restWriter struct {
	http.ResponseWriter
	s       *Face
	r       *http.Request
	st      *bindingState
	swallow bool // the SDK's error body is being dropped
}

func (w *restWriter) WriteHeader(status int) {
	if status >= 400 && w.st.err != nil && !w.swallow {
		w.swallow = true
		w.ResponseWriter.Header().Del("Content-Length")
		w.s.writeProblem(w.ResponseWriter, w.r, w.st.err)
		return
	}
	if w.swallow {
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *restWriter) Write(b []byte) (int, error) {
	if w.swallow {
		return len(b), nil
	}
	if bytes.HasPrefix(b, sseIDLine) && w.Header().Get("Content-Type") == "text/event-stream" {
		return w.writeEventID(len(b))
	}
	return w.ResponseWriter.Write(b)
}

// sseIDLine begins the id line the SDK's SSE writer writes, alone, before
// each event's data line.
var sseIDLine = []byte("id: ")

// writeEventID writes, in place of the SDK's id line of n bytes (a random
// UUID, which no later request could resume from), the id the stream gave
// the event, or nothing for an event without one.
func (w *restWriter) writeEventID(n int) (int, error) {
	id := w.st.events.pop()
	if id < 0 {
		return n, nil
	}
	line := strconv.AppendInt(append([]byte(nil), sseIDLine...), id, 10)
	if _, err := w.ResponseWriter.Write(append(line, '\n')); err != nil {
		return 0, err
	}
	return n, nil
}

// Unwrap lets http.ResponseController reach the connection (flushes and
// deadlines of streams).
func (w *restWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush flushes the response, for the SDK's SSE writer, which asks for an
// http.Flusher.
func (w *restWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

// problem is the error body of the HTTP+JSON binding: a google.rpc.Status
// (AIP-193) with one google.rpc.ErrorInfo detail, as A2A 1.0 §11.6 and the
// SDK's clients read it.
type problem struct {
	Error problemStatus `json:"error"`
}

type problemStatus struct {
	Code    int              `json:"code"`
	Status  string           `json:"status"`
	Message string           `json:"message"`
	Details []map[string]any `json:"details"`
}

// writeProblem writes err as the binding's error: its status and reason
// from the codes table, its gRPC status name, its message (internal
// errors are logged and shown as "internal error").
func (s *Face) writeProblem(w http.ResponseWriter, r *http.Request, err error) {
	code := switchboard.ErrorCode(err)
	if code == switchboard.EINTERNAL {
		s.LogInternal(r, err)
	}
	s.Unavailable(w, err)
	c := httpapi.Translate(code)
	status, reason := c.Status, c.Reason
	switch err {
	case errRESTContentType:
		status = http.StatusUnsupportedMediaType
	case errNoRESTRoute:
		reason = "METHOD_NOT_FOUND"
	}
	info := a2arpc.ErrorInfo(reason)
	body, _ := json.Marshal(problem{Error: problemStatus{Code: status, Status: grpcStatusName(grpcCode(code)), Message: switchboard.ErrorMessage(err),
		Details: info}})
	httpapi.WriteJSONBody(w, status, append(body, '\n'))
}
