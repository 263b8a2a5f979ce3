package connector

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/coder/websocket"
)

// Subprotocol is the WebSocket subprotocol of the connector protocol.
const Subprotocol = "switchboard.connector.v1"

// Methods of the connector protocol.
const (
	methodHello       = "hello"       // agent → server: start of a session
	methodTaskUpdate  = "TaskUpdate"  // agent → server: an event about a task
	methodGetTask     = "GetTask"     // agent → server: read one of its tasks
	methodPing        = "ping"        // either side: answered with "pong"
	methodSendMessage = "SendMessage" // server → agent: work; agent → server: a send to another agent
	methodCancelTask  = "CancelTask"  // server → agent: a task was canceled
)

// Close codes the server uses (docs/connector-protocol.md, "Close codes").
const (
	closeRestart      websocket.StatusCode = 1012 // the server restarts: reconnect with backoff
	closeProtocol     websocket.StatusCode = 4000 // the client broke the protocol
	closeReplaced     websocket.StatusCode = 4001 // a newer connection of this agent took over
	closeUnauthorized websocket.StatusCode = 4003 // the agent token was revoked or rotated: stop
	closeGone         websocket.StatusCode = 4004 // the agent was deleted, disabled or changed mode: stop
)

// JSON-RPC error codes the client answers with.
const (
	codeInvalidParams  = -32602
	codeMethodNotFound = -32601
)

// maxFrameBytes bounds a frame the client sends: the server reads at most
// 4 MiB, and a larger frame would close the connection again on every
// retry.
const maxFrameBytes = 4 << 20

// readLimit bounds a frame the client reads.
const readLimit = 8 << 20

// frame is any JSON-RPC 2.0 object read from the socket: a request, a
// notification or a response.
type frame struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// isResponse reports whether f answers a request the client sent.
func (f *frame) isResponse() bool {
	return f.Method == "" && len(f.ID) > 0 && (f.Result != nil || f.Error != nil)
}

// RPCError is a JSON-RPC error the server answered a request with.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Error implements the error interface.
func (e *RPCError) Error() string {
	return fmt.Sprintf("switchboard answered %d: %s", e.Code, e.Message)
}

type request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      string `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

type result struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
}

type failure struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   RPCError        `json:"error"`
}

// encode marshals a frame without HTML escaping.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// helloParams is what the client says when a session starts.
type helloParams struct {
	Holding []string `json:"holding"`
	Client  string   `json:"client,omitempty"`
}

// helloResult is the server's answer to hello: who the agent is and the
// session's timing.
type helloResult struct {
	Agent struct {
		ID      string `json:"id"`
		Handle  string `json:"handle"`
		Name    string `json:"name"`
		Address string `json:"address,omitempty"`
	} `json:"agent"`
	HeartbeatSeconds int    `json:"heartbeatSeconds"`
	AckTimeoutMillis int64  `json:"ackTimeoutMs"`
	Server           string `json:"server"`
}

// updateResult is the server's answer to TaskUpdate.
type updateResult struct {
	TaskID string `json:"taskId"`
	State  string `json:"state"`
	Seq    int64  `json:"seq"`
}

// sendParams is the agent's own send to another agent.
type sendParams struct {
	To      string `json:"to"`
	Token   string `json:"token"`
	Request any    `json:"request"`
}
