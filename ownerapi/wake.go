package ownerapi

import (
	"time"
)

// WakeConfig is an agent's wake configuration: the answer of GET and
// PUT /agents/{ref}/wake. The key and the secret are never shown, only
// whether they are set and a fingerprint ("(set, sha256:1a2b3c4d)" or
// "(not set)"); the URL is shown with its long path segments and query
// values cut.
type WakeConfig struct {
	Agent string `json:"agent"`
	// Inbound says whether peers' messages wake the agent: only inbox
	// agents are woken by them; any agent is woken by outbound updates.
	Inbound         bool      `json:"inbound"`
	URL             string    `json:"url"`
	URLFingerprint  string    `json:"url_fingerprint"`
	Preset          string    `json:"preset"`
	Key             string    `json:"key"`
	HMACSecret      string    `json:"hmac_secret"`
	DebounceSeconds float64   `json:"debounce_seconds"`
	MaxPerHour      int       `json:"max_per_hour"`
	KeyHeader       string    `json:"key_header"`
	KeyPrefix       string    `json:"key_prefix"`
	BodyTemplate    string    `json:"body_template,omitempty"`
	OpenClawAgentID string    `json:"openclaw_agent_id"`
	CLICommand      string    `json:"cli_command"`
	UpdatedAt       time.Time `json:"updated_at"`
	// Wakes are the latest wakes, queued or finished, newest first; PUT
	// answers with none.
	Wakes []Wake `json:"wakes"`
}

// Wake is a queued or finished wake of an agent.
type Wake struct {
	ID         string    `json:"id"`
	ContextID  string    `json:"context_id"`
	Kind       string    `json:"kind"`
	State      string    `json:"state"`
	TaskIDs    []string  `json:"task_ids"`
	Count      int       `json:"count"`
	Retries    int       `json:"retries"`
	DueAt      time.Time `json:"due_at"`
	LastStatus int       `json:"last_status,omitempty"`
	LastError  string    `json:"last_error,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
}

// WakeUpdate is the body of PUT /agents/{ref}/wake. Absent fields keep their
// value (or take their default for a new configuration); an empty key or
// hmac_secret removes it.
type WakeUpdate struct {
	URL             *string  `json:"url,omitempty"`
	Key             *string  `json:"key,omitempty"`
	HMACSecret      *string  `json:"hmac_secret,omitempty"`
	Preset          *string  `json:"preset,omitempty"`
	DebounceSeconds *float64 `json:"debounce_seconds,omitempty"`
	MaxPerHour      *int     `json:"max_per_hour,omitempty"`
	KeyHeader       *string  `json:"key_header,omitempty"`
	KeyPrefix       *string  `json:"key_prefix,omitempty"`
	BodyTemplate    *string  `json:"body_template,omitempty"`
	OpenClawAgentID *string  `json:"openclaw_agent_id,omitempty"`
	CLICommand      *string  `json:"cli_command,omitempty"`
}

// WakeTest is the answer of POST /agents/{ref}/wake/test: how the receiver
// answered one test wake. OK reports a 2xx status; Body is the start of the
// receiver's answer.
type WakeTest struct {
	Agent      string `json:"agent"`
	Body       string `json:"body"`
	OK         bool   `json:"ok"`
	RetryAfter string `json:"retry_after"`
	Status     int    `json:"status"`
}
