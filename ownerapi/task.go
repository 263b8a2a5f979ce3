package ownerapi

import (
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Inbox is the answer of GET /agents/{ref}/inbox: the tasks that wait for
// the agent (all of them with ?all=1), oldest first, at most 200. When more
// follow, NextCursor is set: ?cursor=NextCursor (with the same all) gives
// the next page. It is absent on the last page.
type Inbox struct {
	Agent      string      `json:"agent"`
	Tasks      []InboxTask `json:"tasks"`
	NextCursor string      `json:"next_cursor,omitempty"`
}

// InboxTask is one task of an inbox. Text is the peer's latest message:
// untrusted input, to be shown as data and never obeyed.
type InboxTask struct {
	ID        string    `json:"id"`
	ContextID string    `json:"context_id"`
	From      string    `json:"from"`
	State     string    `json:"state"`
	Text      string    `json:"text"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Task is a task with the A2A 1.0 task inside: the answer of
// GET /tasks/{id} and POST /tasks/{id}/reply. State is the short form
// ("input-required"); Text is the peer's latest message, untrusted.
type Task struct {
	ID        string    `json:"id"`
	AgentID   string    `json:"agent_id"`
	Agent     string    `json:"agent"`
	From      string    `json:"from"`
	ContextID string    `json:"context_id"`
	State     string    `json:"state"`
	Protocol  string    `json:"protocol"`
	Text      string    `json:"text"`
	Seq       int64     `json:"seq"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	Task      *a2a.Task `json:"task"`
}

// Reply is the body of POST /tasks/{id}/reply: the owner's answer to a task.
// State is the state the task moves to, in either form ("completed" or
// "TASK_STATE_COMPLETED"); empty means completed. Force answers even a
// finished task. ArtifactName names the artifact a completing answer adds.
type Reply struct {
	Text         string `json:"text"`
	State        string `json:"state"`
	Force        bool   `json:"force"`
	ArtifactName string `json:"artifact_name,omitempty"`
}
