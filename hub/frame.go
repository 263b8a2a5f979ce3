package hub

import (
	"bytes"
	"encoding/json"
)

// Subprotocol is the WebSocket subprotocol of the connector protocol.
const Subprotocol = "switchboard.connector.v1"

// Methods of the connector protocol (docs/connector-protocol.md).
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

// frame is any JSON-RPC 2.0 object read from the socket: a request, a
// notification or a response.
type frame struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// isResponse reports whether f answers a request the server sent.
func (f *frame) isResponse() bool {
	return f.Method == "" && len(f.ID) > 0 && (f.Result != nil || f.Error != nil)
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// JSON-RPC error codes the hub answers with.
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
	codeTaskNotFound   = -32001
	codeInvalidAgent   = -32006
)

type request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      string `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

type result struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
}

type failure struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   rpcError        `json:"error"`
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

// helloParams is what an agent says when its session starts.
type helloParams struct {
	// Holding lists the tasks the agent is still working on; acknowledged
	// work of other unfinished tasks is offered again.
	Holding []string `json:"holding"`
	// Client names the agent's software, for logs.
	Client string `json:"client,omitempty"`
}

// helloResult is the server's answer to hello.
type helloResult struct {
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
}

// taskUpdateResult is the server's answer to TaskUpdate: the task's state
// after the update and the sequence number of its last event.
type taskUpdateResult struct {
	TaskID string `json:"taskId"`
	State  string `json:"state"`
	Seq    int64  `json:"seq"`
}
