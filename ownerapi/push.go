package ownerapi

import (
	"time"
)

// TaskPushes is the answer of GET /tasks/{id}/pushes: the task's push
// configurations, secrets masked, and every push with its attempts.
type TaskPushes struct {
	Configs []PushConfig `json:"configs"`
	Pushes  []Push       `json:"pushes"`
	TaskID  string       `json:"task_id"`
}

// PushConfig is a peer's push configuration. Its secrets are never shown in
// full: the token shows at most its first 4 characters, credentials not at
// all ("…"), and the URL's query (which may carry a key) is replaced by "…".
type PushConfig struct {
	ID          string    `json:"id"`
	URL         string    `json:"url"`
	Protocol    string    `json:"protocol"`
	Token       string    `json:"token,omitempty"`
	AuthScheme  string    `json:"auth_scheme,omitempty"`
	Credentials string    `json:"credentials,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
}

// Push is one push notification with its attempts. NextAttemptAt is set
// while it is queued.
type Push struct {
	ID            string        `json:"id"`
	ConfigID      string        `json:"config_id"`
	Seq           int64         `json:"seq"`
	TaskState     string        `json:"task_state"`
	State         string        `json:"state"`
	Attempts      int           `json:"attempts"`
	NextAttemptAt *time.Time    `json:"next_attempt_at,omitempty"`
	LastError     string        `json:"last_error,omitempty"`
	LastStatus    int           `json:"last_status,omitempty"`
	CreatedAt     time.Time     `json:"created_at"`
	DoneAt        *time.Time    `json:"done_at,omitempty"`
	AttemptLog    []PushAttempt `json:"attempt_log"`
}

// PushAttempt is one attempt to deliver a push: the receiver's status, or
// the error; NextAttemptAt is when it is tried again.
type PushAttempt struct {
	At            time.Time  `json:"at"`
	StatusCode    int        `json:"status_code,omitempty"`
	Error         string     `json:"error,omitempty"`
	NextAttemptAt *time.Time `json:"next_attempt_at,omitempty"`
}
