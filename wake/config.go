package wake

import (
	"net/url"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// Wake presets (docs/agents.md has a recipe for each).
const (
	// PresetGeneric posts the standard JSON payload, or a body template, with
	// the key in a header of the owner's choice (default Authorization:
	// Bearer).
	PresetGeneric switchboard.WakePreset = "generic"
	// PresetClaudeCode fires a Claude Code routine: {"text": …}, Bearer key,
	// anthropic-version header.
	PresetClaudeCode switchboard.WakePreset = "claude-code"
	// PresetOpenClawWake posts an OpenClaw /hooks/wake system event: a text
	// that carries no peer-written text at all.
	PresetOpenClawWake switchboard.WakePreset = "openclaw-wake"
	// PresetOpenClawAgent posts an OpenClaw /hooks/agent run with an
	// idempotency key.
	PresetOpenClawAgent switchboard.WakePreset = "openclaw-agent"
	// PresetHermes posts the standard payload signed with Hermes' HMAC
	// headers.
	PresetHermes switchboard.WakePreset = "hermes"
	// PresetGrokBot posts the standard payload with a Bearer key.
	PresetGrokBot switchboard.WakePreset = "grok-bot"
)

// Presets lists every preset, in the order help texts show them.
var Presets = []switchboard.WakePreset{PresetGeneric, PresetClaudeCode, PresetOpenClawWake, PresetOpenClawAgent, PresetHermes, PresetGrokBot}

// ValidPreset reports whether p is a known preset.
func ValidPreset(p switchboard.WakePreset) bool {
	for _, q := range Presets {
		if p == q {
			return true
		}
	}
	return false
}

// Defaults and limits of wake configurations.
const (
	DefaultDebounce             = 10 * time.Second
	DefaultClaudeCodeDebounce   = 20 * time.Second
	DefaultClaudeCodeMaxPerHour = 25
	DefaultKeyHeader            = "Authorization"
	DefaultKeyPrefix            = "Bearer "
	DefaultOpenClawAgentID      = "main"
	DefaultCLICommand           = "switchboard"
	MaxDebounce                 = time.Hour
	MaxPerHourCap               = 3600
	MaxTemplateLen              = 16 << 10
	MaxSecretLen                = 4096
	MaxURLLen                   = 2048
)

// Update changes a wake configuration; nil fields keep their value (or
// take their default when there was no configuration). An empty Key or
// HMACSecret removes it.
type Update struct {
	URL             *string
	Key             *string
	HMACSecret      *string
	Preset          *switchboard.WakePreset
	Debounce        *time.Duration
	MaxPerHour      *int
	KeyHeader       *string
	KeyPrefix       *string
	BodyTemplate    *string
	OpenClawAgentID *string
	CLICommand      *string
}

// ApplyUpdate returns the configuration that results from applying upd
// to old (nil: none yet), with defaults filled in and checked. A preset
// change without a debounce or cap takes the new preset's defaults.
// checkTemplate, if not nil, checks a body template (the renderer lives
// with the sender).
func ApplyUpdate(agentID string, old *switchboard.WakeConfig, upd Update, now time.Time, checkTemplate func(string) error) (*switchboard.WakeConfig, error) {
	c := switchboard.WakeConfig{AgentID: agentID, Preset: PresetGeneric, CreatedAt: now, KeyHeader: DefaultKeyHeader,
		KeyPrefix: DefaultKeyPrefix, OpenClawAgentID: DefaultOpenClawAgentID, CLICommand: DefaultCLICommand}
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
		c.Preset, presetChanged = switchboard.WakePreset(strings.TrimSpace(string(*upd.Preset))), true
	}
	if presetChanged {
		c.Debounce, c.MaxPerHour = DefaultDebounce, 0
		if c.Preset == PresetClaudeCode {
			c.Debounce, c.MaxPerHour = DefaultClaudeCodeDebounce, DefaultClaudeCodeMaxPerHour
		}
	}
	if upd.Debounce != nil {
		c.Debounce = *upd.Debounce
	}
	if upd.MaxPerHour != nil {
		c.MaxPerHour = *upd.MaxPerHour
	}
	if c.KeyHeader == "" {
		c.KeyHeader = DefaultKeyHeader
	}
	if c.OpenClawAgentID == "" {
		c.OpenClawAgentID = DefaultOpenClawAgentID
	}
	if c.CLICommand == "" {
		c.CLICommand = DefaultCLICommand
	}
	if err := Validate(&c); err != nil {
		return nil, err
	}
	if c.BodyTemplate != "" && checkTemplate != nil {
		if err := checkTemplate(c.BodyTemplate); err != nil {
			return nil, switchboard.Errorf(switchboard.EINVALID, "body template: %s", switchboard.ErrorMessage(err))
		}
	}
	return &c, nil
}

// Validate checks a wake configuration.
func Validate(c *switchboard.WakeConfig) error {
	if c.URL == "" {
		return switchboard.Errorf(switchboard.EINVALID, "a wake needs a url")
	}
	if len(c.URL) > MaxURLLen {
		return switchboard.Errorf(switchboard.EINVALID, "the wake url is longer than %d characters", MaxURLLen)
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return switchboard.Errorf(switchboard.EINVALID, "the wake url must be an absolute http(s) URL")
	}
	if u.User != nil {
		return switchboard.Errorf(switchboard.EINVALID, "the wake url must not carry credentials; use the key")
	}
	if strings.Contains(u.Hostname(), "%") {
		return switchboard.Errorf(switchboard.EINVALID, "the wake url must not name an IPv6 zone")
	}
	if !ValidPreset(c.Preset) {
		names := make([]string, len(Presets))
		for i, p := range Presets {
			names[i] = string(p)
		}
		return switchboard.Errorf(switchboard.EINVALID, "preset %q is not known (known: %s)", truncateRunes(string(c.Preset), 32), strings.Join(names, ", "))
	}
	if c.Debounce < 0 || c.Debounce > MaxDebounce {
		return switchboard.Errorf(switchboard.EINVALID, "debounce must be between 0 and %s", MaxDebounce)
	}
	if c.MaxPerHour < 0 || c.MaxPerHour > MaxPerHourCap {
		return switchboard.Errorf(switchboard.EINVALID, "max per hour must be between 0 (no cap) and %d", MaxPerHourCap)
	}
	if len(c.Key) > MaxSecretLen || len(c.HMACSecret) > MaxSecretLen {
		return switchboard.Errorf(switchboard.EINVALID, "the key and the hmac secret are at most %d bytes", MaxSecretLen)
	}
	if !validHeaderValue(c.Key) || !validHeaderValue(c.KeyPrefix) {
		return switchboard.Errorf(switchboard.EINVALID, "the key and its prefix must be printable text without line breaks")
	}
	if !validHeaderName(c.KeyHeader) {
		return switchboard.Errorf(switchboard.EINVALID, "key header %q is not a valid header name", truncateRunes(c.KeyHeader, 64))
	}
	if len(c.BodyTemplate) > MaxTemplateLen {
		return switchboard.Errorf(switchboard.EINVALID, "the body template is longer than %d bytes", MaxTemplateLen)
	}
	if c.Preset == PresetHermes && c.HMACSecret == "" {
		return switchboard.Errorf(switchboard.EINVALID, "the hermes preset signs every wake: it needs an hmac secret")
	}
	if c.BodyTemplate != "" && c.Preset != PresetGeneric {
		return switchboard.Errorf(switchboard.EINVALID, "a body template is for the generic preset only")
	}
	if !switchboard.ValidRef(c.OpenClawAgentID) {
		return switchboard.Errorf(switchboard.EINVALID, "the OpenClaw agent id must be 1-%d characters of A-Z a-z 0-9 . _ : -", switchboard.MaxRefLen)
	}
	if len(c.CLICommand) > 200 || !validHeaderValue(c.CLICommand) {
		return switchboard.Errorf(switchboard.EINVALID, "the cli command must be at most 200 printable characters on one line")
	}
	return nil
}

// CheckScheme refuses a wake URL over plain http unless allowHTTP: the key,
// the signature and the payload would cross the network in clear. Plain
// http is for deployments whose operator opened the network guard
// (--allow-private-networks, or an outbound allow-list): receivers on a
// private network. It is checked when a configuration is saved and again
// when a wake is sent.
func CheckScheme(c *switchboard.WakeConfig, allowHTTP bool) error {
	u, err := url.Parse(c.URL)
	if err != nil || u.Scheme == "https" || allowHTTP {
		return nil // Validate reports a URL that does not parse
	}
	return switchboard.Errorf(switchboard.EINVALID, "the wake url must be https: over plain http the key would cross the network in clear "+
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
