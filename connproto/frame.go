package connproto

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Subprotocol is the WebSocket subprotocol of the connector protocol.
const Subprotocol = "switchboard.connector.v1"

// Methods of the connector protocol.
const (
	// Agent to server.
	MethodHello      = "hello"      // start of a session: what the agent still holds
	MethodTaskUpdate = "TaskUpdate" // an event about one of the agent's tasks
	MethodGetTask    = "GetTask"    // read one of the agent's tasks
	MethodPing       = "ping"       // either side: answered with "pong"

	// Server to agent (and MethodSendMessage agent to server: a send to
	// another agent).
	MethodSendMessage = "SendMessage" // a message for the agent: a new task or a follow-up
	MethodCancelTask  = "CancelTask"  // a task the agent holds was canceled
)

// JSON-RPC error codes either side answers with.
const (
	CodeParse                = -32700
	CodeInvalidRequest       = -32600
	CodeMethodNotFound       = -32601
	CodeInvalidParams        = -32602
	CodeInternal             = -32603
	CodeTaskNotFound         = -32001
	CodeInvalidAgentResponse = -32006
	CodeUnauthorized         = -31401 // a SendMessage with a token that is not a peer token of its target
	CodeRateLimited          = -32000 // a SendMessage past its peer token's rate limit (as the HTTP front door answers)
	CodeQuotaExceeded        = -32050 // a send past the peer's quota of open tasks or bytes on its target (as over HTTP)
	CodeUnavailable          = -32052 // a send the server cannot store now, its storage full: retry later (as over HTTP)
)

// Frame is any JSON-RPC 2.0 object read from the socket: a request, a
// notification or a response.
type Frame struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
	// TraceParent is the W3C trace context of the work the frame is about,
	// when the deployment traces: on the server's SendMessage and
	// CancelTask offers, and on the agent's TaskUpdate reports of that
	// work. Optional; a side that does not trace ignores it.
	TraceParent string `json:"traceparent,omitempty"`
}

// IsResponse reports whether f answers a request: it has an id, no method,
// and a result or an error.
func (f *Frame) IsResponse() bool {
	return f.Method == "" && len(f.ID) > 0 && (f.Result != nil || f.Error != nil)
}

// Error is a JSON-RPC error object.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	// Data, when set, says more (see ErrorData).
	Data json.RawMessage `json:"data,omitempty"`
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("switchboard answered %d: %s", e.Code, e.Message)
}

// Request is a request one side sends. The ids of the server's requests are
// delivery ids; the client's are its own call ids.
type Request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      string `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
	// TraceParent is Frame.TraceParent.
	TraceParent string `json:"traceparent,omitempty"`
}

// Result is a successful response.
type Result struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
}

// Failure is an error response. Its ID is null when the request's id could
// not be read.
type Failure struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   Error           `json:"error"`
}

// Encode marshals a frame without HTML escaping and without the trailing
// newline.
func Encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// HelloParams is what an agent says when its session starts.
type HelloParams struct {
	// Holding lists the tasks the agent is still working on; acknowledged
	// work of other unfinished tasks is offered again.
	Holding []string `json:"holding"`
	// Client names the agent's software, for logs.
	Client string `json:"client,omitempty"`
	// SessionBatches says that the agent reads session batches (several
	// SessionFrame and SessionAck notifications in one message, a JSON
	// array; see ParseSessionBatch), which the server then may send it.
	SessionBatches bool `json:"sessionBatches,omitempty"`
}

// HelloResult is the server's answer to hello: who the agent is and the
// session's timing.
type HelloResult struct {
	Agent struct {
		ID      string `json:"id"`
		Handle  string `json:"handle"`
		Name    string `json:"name"`
		Address string `json:"address,omitempty"`
	} `json:"agent"`
	HeartbeatSeconds int    `json:"heartbeatSeconds"` // rounded up
	HeartbeatMillis  int64  `json:"heartbeatMs"`
	AckTimeoutMillis int64  `json:"ackTimeoutMs"`
	Server           string `json:"server"`
	// SessionBatches says that the server reads session batches, which
	// the agent then may send it.
	SessionBatches bool `json:"sessionBatches,omitempty"`
}

// TaskUpdateResult is the server's answer to TaskUpdate: the task's state
// after the update and the sequence number of its last event.
type TaskUpdateResult struct {
	TaskID string `json:"taskId"`
	State  string `json:"state"`
	Seq    int64  `json:"seq"`
}

// SendParams is an agent's own send to another agent of the deployment.
type SendParams struct {
	To      string                  `json:"to"`    // the agent's handle or its address URL on this deployment
	Token   string                  `json:"token"` // a peer token of that agent
	Request *a2a.SendMessageRequest `json:"request"`
}

// ValidTraceparent reports whether s is a W3C traceparent a connector may
// pass on (version 00: "00-" 32 hex digits "-" 16 hex digits "-" flags
// 00 to 03 (sampled, random), lower case, ids not all zero). The server sends one with an
// offer when the deployment traces; anything else is ignored.
func ValidTraceparent(s string) bool {
	if len(s) != 55 || s[:3] != "00-" || s[35] != '-' || s[52] != '-' || s[53] != '0' || s[54] < '0' || s[54] > '3' {
		return false
	}
	zeroTrace, zeroSpan := true, true
	for i := 3; i < 55; i++ {
		if i == 35 || i == 52 {
			continue
		}
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
		if c != '0' && i < 35 {
			zeroTrace = false
		} else if c != '0' && i > 35 && i < 52 {
			zeroSpan = false
		}
	}
	return !zeroTrace && !zeroSpan
}
