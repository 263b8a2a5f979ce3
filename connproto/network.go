package connproto

import (
	"encoding/json"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// The network (docs/connector-protocol.md, "Work for other agents"): an
// agent sends work to another agent of the deployment with no peer token,
// by name or by discovery; sharing a community is the authorization.

// MethodSendTask, agent to server: work for another agent of the network
// (SendTaskParams → SendTaskResult). An answer that no agent may take is
// an error with CodeNoAgentFound and data {"reason": "no_agent_found",
// "detail": …}.
const MethodSendTask = "SendTask"

// CodeNoAgentFound is the error code of a SendTask that no agent of the
// network may take now (as the HTTP API's JSON-RPC errors).
const CodeNoAgentFound = -32051

// ReasonNoAgentFound is the reason of a CodeNoAgentFound error's data.
const ReasonNoAgentFound = "no_agent_found"

// CodeForbidden answers a SendTask of an agent that may not use the
// network (not approved) or names a community it is not in.
const CodeForbidden = -31403

// SendTaskParams is an agent's work for another agent of the network.
type SendTaskParams struct {
	// To names the receiver: its handle or its address URL on this
	// deployment (a URL of another is refused). Empty: discovery
	// chooses, in Community (or any community of the sender), among the
	// agents offering Skill.
	To        string `json:"to,omitempty"`
	Community string `json:"community,omitempty"`
	Skill     string `json:"skill,omitempty"`
	// Request is the A2A request. A message with a taskId continues that
	// task (one the agent sent), on its agent. A message sent again (the
	// same messageId) returns its task.
	Request *a2a.SendMessageRequest `json:"request"`
	// Wait makes the answer wait until the receiver finished its turn (or
	// waits for input), at most TimeoutSeconds (default 60, at most 600).
	Wait           bool `json:"wait,omitempty"`
	TimeoutSeconds int  `json:"timeoutSeconds,omitempty"`
}

// SendTaskResult is the server's answer to SendTask: the task as it
// stands and the handle of the agent it went to.
type SendTaskResult struct {
	Task  *a2a.Task `json:"task"`
	Agent string    `json:"agent"`
}

// ErrorData is the data of a CodeNoAgentFound error.
type ErrorData struct {
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
}

// NoAgentFound returns the error of a SendTask that no agent may take;
// detail says which gate emptied the list.
func NoAgentFound(detail string) Error {
	data, _ := json.Marshal(ErrorData{Reason: ReasonNoAgentFound, Detail: detail})
	return Error{Code: CodeNoAgentFound, Message: "no agent found: " + detail, Data: data}
}
