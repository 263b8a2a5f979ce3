package dashboard

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/redact"
	"github.com/switchboard-dev/switchboard/wake"
)

// wakeBody is an agent's wake page: its wake webhook, the form that sets
// it, and its latest wakes.
type wakeBody struct {
	Handle string
	// Set says whether the agent has a wake webhook; the fields below
	// describe it (secrets only as set or not).
	Set                                  bool
	URL, Preset                          string
	KeySet, HMACSet                      bool
	DebounceSeconds                      string
	MaxPerHour                           int
	KeyHeader, KeyPrefix, BodyTemplate   string
	OpenClawAgentID, CLICommand, Updated string
	Presets                              []string
	Wakes                                []wakeRow
	Test                                 *wakeTestRow // a test wake just sent
	CSRF                                 string
}

// wakeRow is one recent wake.
type wakeRow struct {
	Created, Kind, State, LastError string
	Count, Retries, LastStatus      int
}

// wakeTestRow is the receiver's answer to a test wake.
type wakeTestRow struct {
	Status           int
	OK               bool
	RetryAfter, Body string
}

// handleWake shows the agent's wake webhook and its latest wakes
// (wake.Service.Config and Recent, as GET /agents/{ref}/wake does).
func (c *Console) handleWake(w http.ResponseWriter, r *http.Request, v *viewer) {
	c.renderWake(w, r, v, http.StatusOK, "", nil)
}

// renderWake writes the wake page, with a problem or a test's answer.
func (c *Console) renderWake(w http.ResponseWriter, r *http.Request, v *viewer, status int, problem string, test *wakeTestRow) {
	g, ok := c.wakeAgent(w, r, v)
	if !ok {
		return
	}
	ctx := r.Context()
	body := &wakeBody{Handle: g.Handle, Test: test, CSRF: v.signIn.CSRF}
	for _, p := range wake.Presets {
		body.Presets = append(body.Presets, string(p))
	}
	cfg, err := c.Wakes.Config(ctx, g)
	switch {
	case err == nil:
		body.Set, body.URL, body.Preset = true, redact.Secrets(cfg.URL), string(cfg.Preset)
		body.KeySet, body.HMACSet = cfg.Key != "", cfg.HMACSecret != ""
		body.DebounceSeconds = strconv.FormatFloat(cfg.Debounce.Seconds(), 'f', -1, 64)
		body.MaxPerHour, body.KeyHeader, body.KeyPrefix = cfg.MaxPerHour, cfg.KeyHeader, cfg.KeyPrefix
		body.BodyTemplate, body.OpenClawAgentID, body.CLICommand = cfg.BodyTemplate, cfg.OpenClawAgentID, cfg.CLICommand
		body.Updated = formatTime(cfg.UpdatedAt)
	case switchboard.ErrorCode(err) == switchboard.ENOTFOUND:
		body.Preset = string(wake.PresetGeneric)
	default:
		c.internalError(w, r, "read a wake configuration", err)
		return
	}
	wakes, err := c.Wakes.Recent(ctx, g, 10)
	if err != nil {
		c.internalError(w, r, "read recent wakes", err)
		return
	}
	for _, x := range wakes {
		body.Wakes = append(body.Wakes, wakeRow{Created: formatTime(x.CreatedAt), Kind: string(x.Kind), State: string(x.State),
			LastError: x.LastError, Count: x.Count, Retries: x.Retries, LastStatus: x.LastStatus})
	}
	c.render(w, status, "wake", page{Title: "Wake webhook of " + g.Handle, CSRF: v.signIn.CSRF, Account: v.account.Name, Operator: v.account.IsOperator(),
		Problem: problem, Body: body})
}

// wakeAgent finds the managed agent of the path, or answers 404 (also
// when wakes are not served).
func (c *Console) wakeAgent(w http.ResponseWriter, r *http.Request, v *viewer) (*switchboard.Agent, bool) {
	if c.Wakes == nil {
		c.renderError(w, r, http.StatusNotFound, "Wakes are not served here.")
		return nil, false
	}
	g, err := c.findManaged(r.Context(), v, r.PathValue("handle"))
	return g, c.found(w, r, err)
}

// handleSetWake sets the wake webhook from the form (wake.Service.SetConfig,
// as PUT /agents/{ref}/wake does, with the same checks).
func (c *Console) handleSetWake(w http.ResponseWriter, r *http.Request, v *viewer) {
	if !c.checkPost(w, r, v.signIn.CSRF) {
		return
	}
	g, ok := c.wakeAgent(w, r, v)
	if !ok {
		return
	}
	old, err := c.Wakes.Config(r.Context(), g)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		old = &switchboard.WakeConfig{}
	} else if err != nil {
		c.internalError(w, r, "read a wake configuration", err)
		return
	}
	upd, problem := wakeFormUpdate(r, old)
	if problem == "" {
		_, err = c.Wakes.SetConfig(r.Context(), g, upd)
		problem, ok = userError(err)
		if err != nil && !ok {
			c.internalError(w, r, "set a wake configuration", err)
			return
		}
	}
	if problem != "" {
		c.renderWake(w, r, v, http.StatusUnprocessableEntity, problem, nil)
		return
	}
	http.Redirect(w, r, "/dashboard/agents/"+g.Handle+"/wake", http.StatusSeeOther)
}

// wakeFormUpdate turns the form into an update of old: a secret left empty
// is kept (its remove box removes it); another field is changed only when
// it differs from old (so a preset's defaults apply when only the preset
// changes).
func wakeFormUpdate(r *http.Request, old *switchboard.WakeConfig) (wake.Update, string) {
	var upd wake.Update
	text := func(name string) string { return strings.TrimSpace(r.PostFormValue(name)) }
	if u := text("url"); u != "" {
		upd.URL = &u
	}
	secret := func(name, remove string) *string {
		if r.PostFormValue(remove) == "on" {
			empty := ""
			return &empty
		}
		if s := r.PostFormValue(name); s != "" {
			return &s
		}
		return nil
	}
	upd.Key, upd.HMACSecret = secret("key", "remove_key"), secret("hmac_secret", "remove_hmac_secret")
	if p := switchboard.WakePreset(text("preset")); p != "" && p != old.Preset {
		upd.Preset = &p
	}
	changed := func(name, was string, raw bool) *string {
		s := text(name)
		if raw {
			s = r.PostFormValue(name)
		}
		if s == was {
			return nil
		}
		return &s
	}
	upd.KeyHeader = changed("key_header", old.KeyHeader, false)
	upd.KeyPrefix = changed("key_prefix", old.KeyPrefix, true)
	upd.BodyTemplate = changed("body_template", old.BodyTemplate, true)
	upd.OpenClawAgentID = changed("openclaw_agent_id", old.OpenClawAgentID, false)
	upd.CLICommand = changed("cli_command", old.CLICommand, false)
	if s := text("debounce_seconds"); s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || f < 0 || f > wake.MaxDebounce.Seconds() {
			return upd, "The debounce must be a number of seconds between 0 and " + strconv.Itoa(int(wake.MaxDebounce.Seconds())) + "."
		}
		if d := time.Duration(f * float64(time.Second)); d != old.Debounce {
			upd.Debounce = &d
		}
	}
	if s := text("max_per_hour"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return upd, "The wakes per hour must be a whole number (0: no cap)."
		}
		if n != old.MaxPerHour {
			upd.MaxPerHour = &n
		}
	}
	return upd, ""
}

// handleClearWake removes the wake webhook (wake.Service.DeleteConfig, as
// DELETE /agents/{ref}/wake does); its pending wakes are dropped.
func (c *Console) handleClearWake(w http.ResponseWriter, r *http.Request, v *viewer) {
	if !c.checkPost(w, r, v.signIn.CSRF) {
		return
	}
	g, ok := c.wakeAgent(w, r, v)
	if !ok {
		return
	}
	err := c.Wakes.DeleteConfig(r.Context(), g)
	if problem, ok := userError(err); ok {
		c.renderWake(w, r, v, http.StatusUnprocessableEntity, problem, nil)
		return
	} else if err != nil {
		c.internalError(w, r, "clear a wake configuration", err)
		return
	}
	http.Redirect(w, r, "/dashboard/agents/"+g.Handle+"/wake", http.StatusSeeOther)
}

// handleTestWake sends one test wake now (wake.Service.Test, as POST
// /agents/{ref}/wake/test does) and shows the receiver's answer.
func (c *Console) handleTestWake(w http.ResponseWriter, r *http.Request, v *viewer) {
	if !c.checkPost(w, r, v.signIn.CSRF) {
		return
	}
	g, ok := c.wakeAgent(w, r, v)
	if !ok {
		return
	}
	res, err := c.Wakes.Test(r.Context(), g)
	if problem, ok := userError(err); ok {
		c.renderWake(w, r, v, http.StatusUnprocessableEntity, problem, nil)
		return
	} else if err != nil {
		c.internalError(w, r, "send a test wake", err)
		return
	}
	c.renderWake(w, r, v, http.StatusOK, "", &wakeTestRow{Status: res.Status, OK: res.Status/100 == 2,
		RetryAfter: res.RetryAfter, Body: res.Body})
}
