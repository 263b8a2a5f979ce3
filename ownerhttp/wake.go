package ownerhttp

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"net/http"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/ownerapi"
	"github.com/switchboard-dev/switchboard/redact"
	"github.com/switchboard-dev/switchboard/wake"
)

// wakeUpdate turns the body of PUT /agents/{ref}/wake into the service's
// update, checking the debounce.
func wakeUpdate(b *ownerapi.WakeUpdate) (wake.Update, error) {
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

// fingerprint names a secret without showing it: "(set, sha256:1a2b3c4d)",
// or "(not set)".
func fingerprint(secret string) string {
	if secret == "" {
		return "(not set)"
	}
	sum := sha256.Sum256([]byte(secret))
	return "(set, sha256:" + hex.EncodeToString(sum[:4]) + ")"
}

// viewWakeConfig is an agent's wake configuration as the owner API shows
// it: secrets as fingerprints, with the wakes given.
func viewWakeConfig(g *switchboard.Agent, c *switchboard.WakeConfig, wakes []*switchboard.Wake) ownerapi.WakeConfig {
	v := ownerapi.WakeConfig{
		Agent: g.Handle, Inbound: g.Mode == switchboard.ModeInbox, URL: redact.Secrets(c.URL), URLFingerprint: fingerprint(c.URL), Preset: string(c.Preset),
		Key: fingerprint(c.Key), HMACSecret: fingerprint(c.HMACSecret), DebounceSeconds: c.Debounce.Seconds(),
		MaxPerHour: c.MaxPerHour, KeyHeader: c.KeyHeader, KeyPrefix: c.KeyPrefix, BodyTemplate: c.BodyTemplate,
		OpenClawAgentID: c.OpenClawAgentID, CLICommand: c.CLICommand, UpdatedAt: c.UpdatedAt, Wakes: []ownerapi.Wake{},
	}
	for _, w := range wakes {
		ids := make([]string, 0, len(w.TaskIDs))
		for _, id := range w.TaskIDs {
			ids = append(ids, string(id))
		}
		v.Wakes = append(v.Wakes, ownerapi.Wake{ID: w.ID, ContextID: w.ContextID, Kind: string(w.Kind), State: string(w.State),
			TaskIDs: ids, Count: w.Count, Retries: w.Retries, DueAt: w.DueAt, LastStatus: w.LastStatus,
			LastError: w.LastError, CreatedAt: w.CreatedAt})
	}
	return v
}

// wakeAgent returns the caller's agent named in the path, or writes the
// error.
func (s *Face) wakeAgent(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) *switchboard.Agent {
	g, err := s.OwnedAgent(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return nil
	}
	return g
}

func (s *Face) handleShowWake(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g := s.wakeAgent(w, r, acct)
	if g == nil {
		return
	}
	c, err := s.Wakes.Config(r.Context(), g)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	wakes, err := s.Wakes.Recent(r.Context(), g, 10)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, viewWakeConfig(g, c, wakes))
}

func (s *Face) handleSetWake(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g := s.wakeAgent(w, r, acct)
	if g == nil {
		return
	}
	var b ownerapi.WakeUpdate
	if err := s.DecodeJSON(w, r, &b); err != nil {
		s.WriteError(w, r, err)
		return
	}
	upd, err := wakeUpdate(&b)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	c, err := s.Wakes.SetConfig(r.Context(), g, upd)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, viewWakeConfig(g, c, nil))
}

func (s *Face) handleDeleteWake(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g := s.wakeAgent(w, r, acct)
	if g == nil {
		return
	}
	if err := s.Wakes.DeleteConfig(r.Context(), g); err != nil {
		s.WriteError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleTestWake sends one test wake now and shows the receiver's answer.
func (s *Face) handleTestWake(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g := s.wakeAgent(w, r, acct)
	if g == nil {
		return
	}
	res, err := s.Wakes.Test(r.Context(), g)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, ownerapi.WakeTest{Agent: g.Handle, Status: res.Status, OK: res.Status/100 == 2,
		RetryAfter: res.RetryAfter, Body: res.Body})
}
