package switchboard

import (
	"context"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// WakePreset names the shape of the request a wake webhook expects: the
// runtime that sleeps behind the URL.
type WakePreset string

// WakeConfig is how an agent that sleeps is woken when work arrives for it:
// a URL that Switchboard POSTs to, in the shape of a preset.
type WakeConfig struct {
	AgentID    string
	URL        string
	Key        string // bearer or API key; never shown in full
	HMACSecret string // signs the body (hermes; generic when set); never shown
	Preset     WakePreset
	// Debounce is how long the wake for a conversation waits after its
	// first message, so that a burst becomes one wake.
	Debounce time.Duration
	// MaxPerHour caps the wakes sent for the agent per clock hour; 0: no cap.
	MaxPerHour int
	// KeyHeader and KeyPrefix say how generic sends the key:
	// "<KeyHeader>: <KeyPrefix><Key>".
	KeyHeader string
	KeyPrefix string
	// BodyTemplate replaces generic's standard payload (docs/agents.md
	// lists its placeholders); the rendered body must be JSON.
	BodyTemplate string
	// OpenClawAgentID is the agentId of the OpenClaw presets.
	OpenClawAgentID string
	// CLICommand starts the hint command the woken agent is told to run.
	CLICommand string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// WakeKind says why an agent is woken.
type WakeKind string

// Wake kinds.
const (
	// WakeInbound: peers sent messages to the agent's address (new tasks
	// and follow-ups).
	WakeInbound WakeKind = "inbound"
	// WakeOutboundUpdate: a task the agent sent to another agent changed
	// (a push arrived for it).
	WakeOutboundUpdate WakeKind = "outbound_update"
	// WakeTest: the owner asked for a test wake; it is sent at once and
	// never queued.
	WakeTest WakeKind = "test"
	// WakePairingRequest: a peer asks for a token of the agent
	// (docs/pairing.md). It is due at once (no debounce), one wake per
	// request (its ContextID is "pairing-" and the user code), and counts
	// against the hourly cap.
	WakePairingRequest WakeKind = "pairing_request"
)

// WakeRequest asks for an agent to be woken about a conversation. Requests
// for the same agent, conversation (peer and contextId) and kind that come
// while a wake is pending are merged into it.
type WakeRequest struct {
	AgentID string
	// PeerID is the peer whose conversation it is (inbound wakes): two
	// peers' messages in the same contextId are two conversations, woken
	// apart. Empty for outbound updates, whose conversation is our agent's.
	PeerID    string
	ContextID string
	TaskID    a2a.TaskID
	Kind      WakeKind
	// From names who wrote (a peer label; for outbound updates, the remote
	// agent). It is shown marked as untrusted.
	From string
	// Preview is text the peer wrote; it is redacted and trimmed
	// (redact.Preview) before it is stored.
	Preview string
	// TraceParent is the W3C trace context of the request that asks for
	// the wake, when the deployment traces.
	TraceParent string
	// Message, for a wake about a peer's message, is that message. While
	// Preview is empty, the store makes the preview from its text, only
	// once it finds the agent's wake configuration: most agents have none,
	// and redaction passes over the whole text.
	Message *a2a.Message
}

// WakeState is where a queued wake stands.
type WakeState string

// Wake states: pending (waiting for its debounce, its retry or the next
// hour's budget) → sending (claimed by a sender, under a lease) → sent,
// failed (the receiver refused it: not retried), dropped (429/503 past the
// retries, or the wake configuration went away). A sending wake whose lease
// ends without an outcome is sent again (at least once), counted as a retry.
const (
	WakePending WakeState = "pending"
	WakeSending WakeState = "sending"
	WakeSent    WakeState = "sent"
	WakeFailed  WakeState = "failed"
	WakeDropped WakeState = "dropped"
)

// WakeMaxRetries is how many times a wake answered with 429 or 503 (or
// not at all) is retried before it is dropped.
const WakeMaxRetries = 3

// MaxWakeTaskIDs bounds the task ids one wake names: any number of peers
// may write into one conversation while its wake waits. Count still counts
// every message, and the agent's inbox lists every task.
const MaxWakeTaskIDs = 100

// Wake is one queued wake: the messages of one conversation merged while it
// waited.
type Wake struct {
	ID        string
	AgentID   string
	PeerID    string // the peer whose conversation it is; empty for outbound updates
	ContextID string
	Kind      WakeKind
	// TaskIDs are the tasks merged into the wake, in the order they came,
	// the first MaxWakeTaskIDs of them; TaskID is the latest.
	TaskIDs []a2a.TaskID
	TaskID  a2a.TaskID
	From    string // the latest sender (untrusted)
	Preview string // the latest preview (untrusted, redacted, trimmed)
	Count   int    // how many requests were merged
	// TraceParent is the latest request's trace context (WakeRequest),
	// which the wake's request carries; empty when not traced.
	TraceParent string
	State       WakeState
	// Retries counts the retries after 429 or 503 and the claims of a
	// sending wake whose lease ended (its sender stopped mid-attempt).
	Retries    int
	DueAt      time.Time // a pending wake is sent at or after this time
	Holder     string
	LeaseUntil time.Time // a sending wake is sent again past this time
	LastStatus int       // the receiver's last HTTP status, 0 if none
	LastError  string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// WakeStore keeps wake configurations and the durable wake queue.
// Inbound wakes are queued by TaskStore.CreateTask and ModifyTask
// (TaskChange.Wake), in the transaction of the message that causes them.
type WakeStore interface {
	// SaveWakeConfig stores c, replacing the agent's configuration. It
	// returns ENOTFOUND if the agent does not exist.
	SaveWakeConfig(ctx context.Context, c *WakeConfig) error

	// FindWakeConfig returns the agent's configuration, or ENOTFOUND.
	FindWakeConfig(ctx context.Context, agentID string) (*WakeConfig, error)

	// DeleteWakeConfig removes the agent's configuration and drops its
	// pending wakes, or returns ENOTFOUND.
	DeleteWakeConfig(ctx context.Context, agentID string) error

	// EnqueueWake queues r in a transaction of its own, as TaskChange.Wake
	// does in a task's: merged into the pending wake of the same agent,
	// conversation and kind if there is one, else a new wake due after the
	// configuration's debounce. It reports false (and no error) when the
	// agent has no wake configuration.
	EnqueueWake(ctx context.Context, r *WakeRequest) (bool, error)

	// ClaimWakes hands up to max due wakes to holder for lease, oldest due
	// first: pending wakes due now, and sending wakes whose lease ended.
	// A claim of a wake whose lease ended counts as a retry; one that has
	// used WakeMaxRetries already is dropped instead.
	// Each wake is claimed by one holder; on PostgreSQL concurrent claims
	// skip each other's rows. A wake whose agent has used its hourly cap
	// waits, pending, for the next hour; one whose configuration is gone
	// is dropped. Each claimed wake counts toward its agent's cap.
	ClaimWakes(ctx context.Context, holder string, max int, lease time.Duration) ([]*Wake, error)

	// FinishWake records the outcome of a claimed wake: sent, failed or
	// dropped. It reports false if holder no longer holds the wake.
	FinishWake(ctx context.Context, id, holder string, state WakeState, status int, lastErr string) (bool, error)

	// RetryWake returns a claimed wake to pending, due at due. retried
	// counts it as a retry after 429 or 503; otherwise (a sender shutting
	// down) it is only given back. If another wake of the same agent,
	// conversation and kind became pending meanwhile, the two are merged,
	// due at the later time. It reports false if holder no longer holds
	// the wake.
	RetryWake(ctx context.Context, id, holder string, due time.Time, retried bool, status int, lastErr string) (bool, error)

	// FindWakes returns the agent's most recent wakes, newest first, at
	// most limit.
	FindWakes(ctx context.Context, agentID string, limit int) ([]*Wake, error)

	// PruneWakes deletes finished wakes and hourly counts older than
	// before, and returns how many wakes it deleted.
	PruneWakes(ctx context.Context, before time.Time) (int, error)
}
