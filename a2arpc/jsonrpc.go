package a2arpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/a2ajson"
	"github.com/switchboard-dev/switchboard/httpapi"
)

// JSON-RPC 2.0 error codes of the envelope itself.
const (
	ParseError     = -32700
	InvalidRequest = -32600
	MethodNotFound = -32601
	InvalidParams  = -32602
	InternalError  = -32603
)

// Request is a decoded JSON-RPC 2.0 request envelope.
type Request struct {
	ID     json.RawMessage // a string, a number or null; never empty after decoding
	Method string
	Params json.RawMessage // always a JSON object
}

// Error is a JSON-RPC error object.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`

	Status int `json:"-"` // the HTTP status to answer with, 200 unless the envelope itself is refused
}

// NullID is the id of a response to a request whose id is unknown.
var NullID = json.RawMessage("null")

// DecodeEnvelope checks the JSON-RPC envelope of a request body. On failure
// it returns the error to answer with and whatever id could be read.
func DecodeEnvelope(body []byte) (*Request, *Error) {
	if req, ok := scanEnvelope(body); ok {
		return req, nil
	}
	return decodeEnvelope(body)
}

// decodeEnvelope is DecodeEnvelope for every body: what scanEnvelope
// takes, and each refusal.
func decodeEnvelope(body []byte) (*Request, *Error) {
	req := &Request{ID: NullID}
	trimmed := bytes.TrimSpace(body)
	// json.Unmarshal checks the whole body before it decodes any of it: a
	// syntax error is a body that is not JSON at all.
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &fields); err != nil {
		var syntax *json.SyntaxError
		switch {
		case errors.As(err, &syntax):
			return req, &Error{Code: ParseError, Message: "Parse error: the body is not valid JSON", Status: http.StatusBadRequest}
		case trimmed[0] == '[':
			return req, &Error{Code: InvalidRequest, Message: "Invalid Request: batch requests are not supported", Status: http.StatusBadRequest}
		}
		return req, &Error{Code: InvalidRequest, Message: "Invalid Request: the body must be a JSON-RPC request object"}
	}
	if id, ok := fields["id"]; ok {
		if !ValidID(id) {
			return req, &Error{Code: InvalidRequest, Message: "Invalid Request: id must be a string, a number or null"}
		}
		req.ID = id
	}
	if string(fields["jsonrpc"]) != `"2.0"` {
		return req, &Error{Code: InvalidRequest, Message: `Invalid Request: jsonrpc must be "2.0"`}
	}
	if err := json.Unmarshal(fields["method"], &req.Method); err != nil || req.Method == "" {
		return req, &Error{Code: InvalidRequest, Message: "Invalid Request: method must be a non-empty string"}
	}
	req.Params = fields["params"]
	return req, nil
}

// CheckParams makes sure params is a JSON object; absent or null params
// count as an empty object.
func CheckParams(req *Request) *Error {
	p := bytes.TrimSpace(req.Params)
	if len(p) == 0 || string(p) == "null" {
		req.Params = json.RawMessage("{}")
		return nil
	}
	if p[0] != '{' {
		return &Error{Code: InvalidParams, Message: "Invalid params: params must be an object"}
	}
	return nil
}

func ValidID(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	if len(id) == 0 {
		return false
	}
	switch c := id[0]; {
	case c == '"':
		return true
	case c == 'n':
		return string(id) == "null"
	case c == '-' || ('0' <= c && c <= '9'):
		var f float64
		return json.Unmarshal(id, &f) == nil
	}
	return false
}

// versionPattern matches the A2A-Version values this server speaks: 0.3 and
// 1.0 (also written 1), optionally with a patch number, which is ignored.
var versionPattern = regexp.MustCompile(`^(0\.3|1|1\.0)(\.[0-9]+)?$`)

// RequestedVersion returns the A2A-Version the request asks for (header, or
// query parameter as the spec allows), "" when it names none, or an error
// when it names a version this server does not speak.
func RequestedVersion(r *http.Request) (string, error) {
	v := r.Header.Get("A2A-Version")
	if v == "" {
		v = r.URL.Query().Get("A2A-Version")
	}
	if v == "" {
		return "", nil
	}
	if !versionPattern.MatchString(v) {
		return "", switchboard.Errorf(switchboard.EVERSIONNOTSUPPORTED, "A2A version %q is not supported (supported: 0.3, 1.0)", switchboard.Truncate(v, 32))
	}
	return v, nil
}

// ErrorFor translates an error into the JSON-RPC error of the given
// protocol version. A2A 1.0 errors carry a google.rpc.ErrorInfo detail;
// 0.3 errors carry no data, since 0.3 clients read data as an object.
func ErrorFor(err error, v switchboard.ProtocolVersion) *Error {
	code := switchboard.ErrorCode(err)
	c := httpapi.Translate(code)
	e := &Error{Code: c.RPC, Message: switchboard.ErrorMessage(err)}
	switch {
	case code == switchboard.ENOAGENT:
		e.Data = noAgentData(e.Message, v)
	case v == switchboard.ProtocolV1:
		e.Data = ErrorInfo(c.Reason)
	}
	return e
}

// noAgentData is the data of an ENOAGENT error: {"reason":
// "no_agent_found", "detail": the gate} in 0.3 (and on the connector
// socket); in 1.0, whose data is a list of details, an ErrorInfo with
// reason NO_AGENT_FOUND and that object as its metadata.
func noAgentData(detail string, v switchboard.ProtocolVersion) any {
	meta := map[string]any{"reason": string(switchboard.ENOAGENT), "detail": detail}
	if v != switchboard.ProtocolV1 {
		return meta
	}
	info := ErrorInfo(httpapi.Translate(switchboard.ENOAGENT).Reason)
	info[0]["metadata"] = meta
	return info
}

// ErrorInfo returns the A2A 1.0 error details: one google.rpc.ErrorInfo.
func ErrorInfo(reason string) []map[string]any {
	return []map[string]any{{
		"@type":  "type.googleapis.com/google.rpc.ErrorInfo",
		"reason": reason,
		"domain": "a2a-protocol.org",
	}}
}

// rpcResult is a successful JSON-RPC response. Result is always present.
type rpcResult struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
}

// Failure is a failed JSON-RPC response.
type Failure struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *Error          `json:"error"`
}

// WriteResult writes a successful JSON-RPC response.
func WriteResult(w http.ResponseWriter, id json.RawMessage, result any) {
	buf := resultBufs.Get().(*[]byte)
	defer putResultBuf(buf)
	if body, ok := appendA2AResult((*buf)[:0], id, result); ok {
		httpapi.WriteJSONBody(w, http.StatusOK, append(body, '\n'))
		*buf = body[:0] // grown, if it was
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, rpcResult{JSONRPC: "2.0", ID: id, Result: result})
}

// resultBufs holds the buffers WriteResult writes answers in: they are
// garbage as soon as the answer is written.
var resultBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// putResultBuf gives buf back to resultBufs unless an answer made it large.
func putResultBuf(buf *[]byte) {
	if cap(*buf) <= 64<<10 {
		resultBufs.Put(buf)
	}
}

// EncodeResult returns a successful JSON-RPC response as one line.
func EncodeResult(id json.RawMessage, result any) ([]byte, error) {
	if body, ok := appendA2AResult(nil, id, result); ok {
		return body, nil
	}
	return json.Marshal(rpcResult{JSONRPC: "2.0", ID: id, Result: result})
}

// appendA2AResult appends the response of the A2A 1.0 results that carry
// messages (tasks, stream responses, events) to dst in one pass, with
// a2ajson; ok is false for any other result, and for one a2ajson could
// not write.
func appendA2AResult(dst []byte, id json.RawMessage, result any) (body []byte, ok bool) {
	switch result.(type) {
	case a2a.StreamResponse, *a2a.Task, *a2a.Message, *a2a.TaskStatusUpdateEvent, *a2a.TaskArtifactUpdateEvent:
	default:
		return nil, false
	}
	if len(id) == 0 {
		return nil, false
	}
	var compact bytes.Buffer
	if json.Compact(&compact, id) != nil {
		return nil, false
	}
	body = append(dst, `{"jsonrpc":"2.0","id":`...)
	body = append(body, compact.Bytes()...)
	body = append(body, `,"result":`...)
	body, err := a2ajson.Append(body, result)
	if err != nil {
		return nil, false
	}
	return append(body, '}'), true
}

// WriteError writes a failed JSON-RPC response with the error's status.
func WriteError(w http.ResponseWriter, id json.RawMessage, e *Error) {
	status := e.Status
	if status == 0 {
		status = http.StatusOK
	}
	httpapi.WriteJSON(w, status, Failure{JSONRPC: "2.0", ID: id, Error: e})
}
