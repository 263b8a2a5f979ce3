package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"net/http"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/redact"
	"github.com/switchboard-dev/switchboard/wake"
)

// wakeBody is the body of PUT /agents/{ref}/wake. Absent fields keep their
// value (or take their default for a new configuration); an empty key or
// hmac_secret removes it.
type wakeBody struct {
	URL             *string  `json:"url"`
	Key             *string  `json:"key"`
	HMACSecret      *string  `json:"hmac_secret"`
	Preset          *string  `json:"preset"`
	DebounceSeconds *float64 `json:"debounce_seconds"`
	MaxPerHour      *int     `json:"max_per_hour"`
	KeyHeader       *string  `json:"key_header"`
	KeyPrefix       *string  `json:"key_prefix"`
	BodyTemplate    *string  `json:"body_template"`
	OpenClawAgentID *string  `json:"openclaw_agent_id"`
	CLICommand      *string  `json:"cli_command"`
}

func (b *wakeBody) update() (wake.Update, error) {
	upd := wake.Update{URL: b.URL, Key: b.Key, HMACSecret: b.HMACSecret, MaxPerHour: b.MaxPerHour,
		KeyHeader: b.KeyHeader, KeyPrefix: b.KeyPrefix, BodyTemplate: b.BodyTemplate, OpenClawAgentID: b.OpenClawAgentID,
		CLICommand: b.CLICommand}
	if b.Preset != nil {
		p := switchboard.WakePreset(*b.Preset)
		upd.Preset = &p
	}
	if b.DebounceSeconds != nil {
		s := *b.DebounceSeconds
		if math.IsNaN(s) || s < 0 || s > wake.MaxDebounce.Seconds() {
			return upd, switchboard.Errorf(switchboard.EINVALID, "debounce_seconds must be between 0 and %.0f", wake.MaxDebounce.Seconds())
		}
		d := time.Duration(s * float64(time.Second))
		upd.Debounce = &d
	}
	return upd, nil
}

// wakeConfigView is a wake configuration in owner-API answers: the key and
// the secret are never shown, only whether they are set and a fingerprint;
// the URL is shown with its long path segments and query values cut.
type wakeConfigView struct {
	Agent string `json:"agent"`
	// Inbound says whether peers' messages wake the agent: only inbox
	// agents are woken by them; any agent is woken by outbound updates.
	Inbound         bool       `json:"inbound"`
	URL             string     `json:"url"`
	URLFingerprint  string     `json:"url_fingerprint"`
	Preset          string     `json:"preset"`
	Key             string     `json:"key"`
	HMACSecret      string     `json:"hmac_secret"`
	DebounceSeconds float64    `json:"debounce_seconds"`
	MaxPerHour      int        `json:"max_per_hour"`
	KeyHeader       string     `json:"key_header"`
	KeyPrefix       string     `json:"key_prefix"`
	BodyTemplate    string     `json:"body_template,omitempty"`
	OpenClawAgentID string     `json:"openclaw_agent_id"`
	CLICommand      string     `json:"cli_command"`
	UpdatedAt       time.Time  `json:"updated_at"`
	Wakes           []wakeView `json:"wakes"`
}

// wakeView is a queued or finished wake.
type wakeView struct {
	ID         string       `json:"id"`
	ContextID  string       `json:"context_id"`
	Kind       string       `json:"kind"`
	State      string       `json:"state"`
	TaskIDs    []a2a.TaskID `json:"task_ids"`
	Count      int          `json:"count"`
	Retries    int          `json:"retries"`
	DueAt      time.Time    `json:"due_at"`
	LastStatus int          `json:"last_status,omitempty"`
	LastError  string       `json:"last_error,omitempty"`
	CreatedAt  time.Time    `json:"created_at"`
}

// fingerprint names a secret without showing it: "(set, sha256:1a2b3c4d)",
// or "(not set)".
func fingerprint(secret string) string {
	if secret == "" {
		return "(not set)"
	}
	sum := sha256.Sum256([]byte(secret))
	return "(set, sha256:" + hex.EncodeToString(sum[:4]) + ")"
}

func viewWakeConfig(g *switchboard.Agent, c *switchboard.WakeConfig, wakes []*switchboard.Wake) wakeConfigView {
	v := wakeConfigView{
		Agent: g.Handle, Inbound: g.Mode == switchboard.ModeInbox, URL: redact.Secrets(c.URL), URLFingerprint: fingerprint(c.URL), Preset: string(c.Preset),
		Key: fingerprint(c.Key), HMACSecret: fingerprint(c.HMACSecret), DebounceSeconds: c.Debounce.Seconds(),
		MaxPerHour: c.MaxPerHour, KeyHeader: c.KeyHeader, KeyPrefix: c.KeyPrefix, BodyTemplate: c.BodyTemplate,
		OpenClawAgentID: c.OpenClawAgentID, CLICommand: c.CLICommand, UpdatedAt: c.UpdatedAt, Wakes: []wakeView{},
	}
	for _, w := range wakes {
		ids := w.TaskIDs
		if ids == nil {
			ids = []a2a.TaskID{}
		}
		v.Wakes = append(v.Wakes, wakeView{ID: w.ID, ContextID: w.ContextID, Kind: string(w.Kind), State: string(w.State),
			TaskIDs: ids, Count: w.Count, Retries: w.Retries, DueAt: w.DueAt, LastStatus: w.LastStatus,
			LastError: w.LastError, CreatedAt: w.CreatedAt})
	}
	return v
}

// wakeAgent returns the caller's agent named in the path, or writes the
// error; it also answers 404 when wakes are not served.
func (s *Server) wakeAgent(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) *switchboard.Agent {
	if s.Wakes == nil {
		s.handleNotFound(w, r)
		return nil
	}
	g, err := s.ownedAgent(r, acct)
	if err != nil {
		s.writeError(w, r, err)
		return nil
	}
	return g
}

func (s *Server) handleShowWake(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g := s.wakeAgent(w, r, acct)
	if g == nil {
		return
	}
	c, err := s.Wakes.Config(r.Context(), g)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	wakes, err := s.Wakes.Recent(r.Context(), g, 10)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewWakeConfig(g, c, wakes))
}

func (s *Server) handleSetWake(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g := s.wakeAgent(w, r, acct)
	if g == nil {
		return
	}
	var b wakeBody
	if err := s.decodeJSON(w, r, &b); err != nil {
		s.writeError(w, r, err)
		return
	}
	upd, err := b.update()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	c, err := s.Wakes.SetConfig(r.Context(), g, upd)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewWakeConfig(g, c, nil))
}

func (s *Server) handleDeleteWake(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g := s.wakeAgent(w, r, acct)
	if g == nil {
		return
	}
	if err := s.Wakes.DeleteConfig(r.Context(), g); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleTestWake sends one test wake now and shows the receiver's answer.
func (s *Server) handleTestWake(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g := s.wakeAgent(w, r, acct)
	if g == nil {
		return
	}
	res, err := s.Wakes.Test(r.Context(), g)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"agent": g.Handle, "status": res.Status, "ok": res.Status/100 == 2,
		"retry_after": res.RetryAfter, "body": res.Body})
}
