package switchboard

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// WakePreset names the shape of the request a wake webhook expects: the
// runtime that sleeps behind the URL.
type WakePreset string

// Wake presets (docs/agents.md has a recipe for each).
const (
	// WakeGeneric posts the standard JSON payload, or a body template, with
	// the key in a header of the owner's choice (default Authorization:
	// Bearer).
	WakeGeneric WakePreset = "generic"
	// WakeClaudeCode fires a Claude Code routine: {"text": …}, Bearer key,
	// anthropic-version header.
	WakeClaudeCode WakePreset = "claude-code"
	// WakeOpenClawWake posts an OpenClaw /hooks/wake system event: a text
	// that carries no peer-written text at all.
	WakeOpenClawWake WakePreset = "openclaw-wake"
	// WakeOpenClawAgent posts an OpenClaw /hooks/agent run with an
	// idempotency key.
	WakeOpenClawAgent WakePreset = "openclaw-agent"
	// WakeHermes posts the standard payload signed with Hermes' HMAC
	// headers.
	WakeHermes WakePreset = "hermes"
	// WakeGrokBot posts the standard payload with a Bearer key.
	WakeGrokBot WakePreset = "grok-bot"
)

// WakePresets lists every preset, in the order help texts show them.
var WakePresets = []WakePreset{WakeGeneric, WakeClaudeCode, WakeOpenClawWake, WakeOpenClawAgent, WakeHermes, WakeGrokBot}

// ValidWakePreset reports whether p is a known preset.
func ValidWakePreset(p WakePreset) bool {
	for _, q := range WakePresets {
		if p == q {
			return true
		}
	}
	return false
}

// Defaults and limits of wake configurations.
const (
	DefaultWakeDebounce           = 10 * time.Second
	DefaultClaudeCodeWakeDebounce = 20 * time.Second
	DefaultClaudeCodeMaxPerHour   = 25
	DefaultWakeKeyHeader          = "Authorization"
	DefaultWakeKeyPrefix          = "Bearer "
	DefaultOpenClawAgentID        = "main"
	DefaultWakeCLICommand         = "switchboard"
	MaxWakeDebounce               = time.Hour
	MaxWakeMaxPerHour             = 3600
	MaxWakeTemplateLen            = 16 << 10
	MaxWakeSecretLen              = 4096
	MaxWakeURLLen                 = 2048
	// MaxWakePreview is the most characters of peer text a wake carries.
	MaxWakePreview = 300
)

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

// WakeUpdate changes a wake configuration; nil fields keep their value (or
// take their default when there was no configuration). An empty Key or
// HMACSecret removes it.
type WakeUpdate struct {
	URL             *string
	Key             *string
	HMACSecret      *string
	Preset          *WakePreset
	Debounce        *time.Duration
	MaxPerHour      *int
	KeyHeader       *string
	KeyPrefix       *string
	BodyTemplate    *string
	OpenClawAgentID *string
	CLICommand      *string
}

// ApplyWakeUpdate returns the configuration that results from applying upd
// to old (nil: none yet), with defaults filled in and checked. A preset
// change without a debounce or cap takes the new preset's defaults.
// checkTemplate, if not nil, checks a body template (the renderer lives
// with the sender).
func ApplyWakeUpdate(agentID string, old *WakeConfig, upd WakeUpdate, now time.Time, checkTemplate func(string) error) (*WakeConfig, error) {
	c := WakeConfig{AgentID: agentID, Preset: WakeGeneric, CreatedAt: now, KeyHeader: DefaultWakeKeyHeader,
		KeyPrefix: DefaultWakeKeyPrefix, OpenClawAgentID: DefaultOpenClawAgentID, CLICommand: DefaultWakeCLICommand}
	presetChanged := old == nil
	if old != nil {
		c = *old
	}
	c.UpdatedAt = now
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = strings.TrimSpace(*src)
		}
	}
	set(&c.URL, upd.URL)
	set(&c.Key, upd.Key)
	set(&c.HMACSecret, upd.HMACSecret)
	set(&c.KeyHeader, upd.KeyHeader)
	set(&c.OpenClawAgentID, upd.OpenClawAgentID)
	set(&c.CLICommand, upd.CLICommand)
	if upd.KeyPrefix != nil {
		c.KeyPrefix = *upd.KeyPrefix // an empty prefix is allowed
	}
	if upd.BodyTemplate != nil {
		c.BodyTemplate = *upd.BodyTemplate
	}
	if upd.Preset != nil && *upd.Preset != c.Preset {
		c.Preset, presetChanged = WakePreset(strings.TrimSpace(string(*upd.Preset))), true
	}
	if presetChanged {
		c.Debounce, c.MaxPerHour = DefaultWakeDebounce, 0
		if c.Preset == WakeClaudeCode {
			c.Debounce, c.MaxPerHour = DefaultClaudeCodeWakeDebounce, DefaultClaudeCodeMaxPerHour
		}
	}
	if upd.Debounce != nil {
		c.Debounce = *upd.Debounce
	}
	if upd.MaxPerHour != nil {
		c.MaxPerHour = *upd.MaxPerHour
	}
	if c.KeyHeader == "" {
		c.KeyHeader = DefaultWakeKeyHeader
	}
	if c.OpenClawAgentID == "" {
		c.OpenClawAgentID = DefaultOpenClawAgentID
	}
	if c.CLICommand == "" {
		c.CLICommand = DefaultWakeCLICommand
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if c.BodyTemplate != "" && checkTemplate != nil {
		if err := checkTemplate(c.BodyTemplate); err != nil {
			return nil, Errorf(EINVALID, "body template: %s", ErrorMessage(err))
		}
	}
	return &c, nil
}

// Validate checks a wake configuration.
func (c *WakeConfig) Validate() error {
	if c.URL == "" {
		return Errorf(EINVALID, "a wake needs a url")
	}
	if len(c.URL) > MaxWakeURLLen {
		return Errorf(EINVALID, "the wake url is longer than %d characters", MaxWakeURLLen)
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return Errorf(EINVALID, "the wake url must be an absolute http(s) URL")
	}
	if u.User != nil {
		return Errorf(EINVALID, "the wake url must not carry credentials; use the key")
	}
	if strings.Contains(u.Hostname(), "%") {
		return Errorf(EINVALID, "the wake url must not name an IPv6 zone")
	}
	if !ValidWakePreset(c.Preset) {
		names := make([]string, len(WakePresets))
		for i, p := range WakePresets {
			names[i] = string(p)
		}
		return Errorf(EINVALID, "preset %q is not known (known: %s)", truncateRunes(string(c.Preset), 32), strings.Join(names, ", "))
	}
	if c.Debounce < 0 || c.Debounce > MaxWakeDebounce {
		return Errorf(EINVALID, "debounce must be between 0 and %s", MaxWakeDebounce)
	}
	if c.MaxPerHour < 0 || c.MaxPerHour > MaxWakeMaxPerHour {
		return Errorf(EINVALID, "max per hour must be between 0 (no cap) and %d", MaxWakeMaxPerHour)
	}
	if len(c.Key) > MaxWakeSecretLen || len(c.HMACSecret) > MaxWakeSecretLen {
		return Errorf(EINVALID, "the key and the hmac secret are at most %d bytes", MaxWakeSecretLen)
	}
	if !validHeaderValue(c.Key) || !validHeaderValue(c.KeyPrefix) {
		return Errorf(EINVALID, "the key and its prefix must be printable text without line breaks")
	}
	if !validHeaderName(c.KeyHeader) {
		return Errorf(EINVALID, "key header %q is not a valid header name", truncateRunes(c.KeyHeader, 64))
	}
	if len(c.BodyTemplate) > MaxWakeTemplateLen {
		return Errorf(EINVALID, "the body template is longer than %d bytes", MaxWakeTemplateLen)
	}
	if c.Preset == WakeHermes && c.HMACSecret == "" {
		return Errorf(EINVALID, "the hermes preset signs every wake: it needs an hmac secret")
	}
	if c.BodyTemplate != "" && c.Preset != WakeGeneric {
		return Errorf(EINVALID, "a body template is for the generic preset only")
	}
	if !ValidRef(c.OpenClawAgentID) {
		return Errorf(EINVALID, "the OpenClaw agent id must be 1-%d characters of A-Z a-z 0-9 . _ : -", MaxRefLen)
	}
	if len(c.CLICommand) > 200 || !validHeaderValue(c.CLICommand) {
		return Errorf(EINVALID, "the cli command must be at most 200 printable characters on one line")
	}
	return nil
}

// CheckScheme refuses a wake URL over plain http unless allowHTTP: the key,
// the signature and the payload would cross the network in clear. Plain
// http is for deployments whose operator opened the network guard
// (--allow-private-networks, or an outbound allow-list): receivers on a
// private network. It is checked when a configuration is saved and again
// when a wake is sent.
func (c *WakeConfig) CheckScheme(allowHTTP bool) error {
	u, err := url.Parse(c.URL)
	if err != nil || u.Scheme == "https" || allowHTTP {
		return nil // Validate reports a URL that does not parse
	}
	return Errorf(EINVALID, "the wake url must be https: over plain http the key would cross the network in clear "+
		"(plain http is accepted only when the server runs with --allow-private-networks)")
}

// validHeaderName reports whether s is an HTTP header field name (a token).
func validHeaderName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if r > 126 || r <= 32 || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}

// validHeaderValue reports whether s can be sent in a header: no control
// characters.
func validHeaderValue(s string) bool {
	for _, r := range s {
		if r < 32 && r != '\t' || r == 127 {
			return false
		}
	}
	return true
}

// truncateRunes cuts s to at most n runes.
func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
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
)

// WakeRequest asks for an agent to be woken about a conversation. Requests
// for the same agent, conversation and kind that come while a wake is
// pending are merged into it.
type WakeRequest struct {
	AgentID   string
	ContextID string
	TaskID    a2a.TaskID
	Kind      WakeKind
	// From names who wrote (a peer label; for outbound updates, the remote
	// agent). It is shown marked as untrusted.
	From string
	// Preview is text the peer wrote; it is redacted and trimmed to
	// MaxWakePreview characters by WakePreview before it is stored.
	Preview string
	// Message, for a wake about a peer's message, is that message. While
	// Preview is empty, the preview is made from its text by
	// StoredPreview, only once the store finds the agent's wake
	// configuration: most agents have none, and redaction passes over the
	// whole text.
	Message *a2a.Message
}

// StoredPreview returns the preview to store: Preview, or else the preview
// of Message's text.
func (r *WakeRequest) StoredPreview() string {
	if r.Preview == "" && r.Message != nil {
		return WakePreview(MessageText(r.Message))
	}
	return r.Preview
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

// MaxWakeTaskIDs bounds the task ids one wake names: any number of peers
// may write into one conversation while its wake waits. Count still counts
// every message, and the agent's inbox lists every task.
const MaxWakeTaskIDs = 100

// Wake is one queued wake: the messages of one conversation merged while it
// waited.
type Wake struct {
	ID        string
	AgentID   string
	ContextID string
	Kind      WakeKind
	// TaskIDs are the tasks merged into the wake, in the order they came,
	// the first MaxWakeTaskIDs of them; TaskID is the latest.
	TaskIDs []a2a.TaskID
	TaskID  a2a.TaskID
	From    string // the latest sender (untrusted)
	Preview string // the latest preview (untrusted, redacted, trimmed)
	Count   int    // how many requests were merged
	State   WakeState
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
