package httpapi

import (
	"net/http"
	"net/url"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// pushConfigView is a push configuration in owner-API answers. Its secrets
// are never shown in full: the token shows at most its first 4 characters,
// credentials not at all, and the URL's query (which may carry a key) is
// replaced by "…".
type pushConfigView struct {
	ID          string    `json:"id"`
	URL         string    `json:"url"`
	Protocol    string    `json:"protocol"`
	Token       string    `json:"token,omitempty"`
	AuthScheme  string    `json:"auth_scheme,omitempty"`
	Credentials string    `json:"credentials,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
}

// pushView is one push notification with its attempts.
type pushView struct {
	ID            string            `json:"id"`
	ConfigID      string            `json:"config_id"`
	Seq           int64             `json:"seq"`
	TaskState     string            `json:"task_state"`
	State         string            `json:"state"`
	Attempts      int               `json:"attempts"`
	NextAttemptAt *time.Time        `json:"next_attempt_at,omitempty"`
	LastError     string            `json:"last_error,omitempty"`
	LastStatus    int               `json:"last_status,omitempty"`
	CreatedAt     time.Time         `json:"created_at"`
	DoneAt        *time.Time        `json:"done_at,omitempty"`
	AttemptLog    []pushAttemptView `json:"attempt_log"`
}

type pushAttemptView struct {
	At            time.Time  `json:"at"`
	StatusCode    int        `json:"status_code,omitempty"`
	Error         string     `json:"error,omitempty"`
	NextAttemptAt *time.Time `json:"next_attempt_at,omitempty"`
}

// handleTaskPushes answers GET /tasks/{id}/pushes: the task's push
// configurations (secrets masked), and every push with its attempts.
func (s *Server) handleTaskPushes(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	t, _, err := s.ownedTask(r, acct)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if s.Pushes == nil {
		s.writeError(w, r, switchboard.Errorf(switchboard.ENOTFOUND, "push notifications are not kept on this server"))
		return
	}
	h, err := s.Pushes.History(r.Context(), t.ID())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	configs := make([]pushConfigView, 0, len(h.Configs))
	for _, c := range h.Configs {
		v := pushConfigView{ID: c.Config.ID, URL: maskURL(c.Config.URL), Protocol: string(c.Protocol),
			Token: maskSecret(c.Config.Token), CreatedAt: c.CreatedAt}
		if a := c.Config.Auth; a != nil {
			v.AuthScheme = a.Scheme
			if a.Credentials != "" {
				v.Credentials = "…"
			}
		}
		configs = append(configs, v)
	}
	attempts := map[string][]pushAttemptView{}
	for _, a := range h.Attempts {
		attempts[a.PushID] = append(attempts[a.PushID], pushAttemptView{At: a.At, StatusCode: a.StatusCode, Error: a.Error, NextAttemptAt: a.NextAttemptAt})
	}
	pushes := make([]pushView, 0, len(h.Pushes))
	for _, p := range h.Pushes {
		v := pushView{ID: p.ID, ConfigID: p.ConfigID, Seq: p.Seq, TaskState: switchboard.ShortState(p.TaskState), State: string(p.State),
			Attempts: p.Attempts, LastError: p.LastError, LastStatus: p.LastStatus, CreatedAt: p.CreatedAt, DoneAt: p.DoneAt,
			AttemptLog: attempts[p.ID]}
		if p.State == switchboard.PushQueued {
			next := p.NextAttemptAt
			v.NextAttemptAt = &next
		}
		if v.AttemptLog == nil {
			v.AttemptLog = []pushAttemptView{}
		}
		pushes = append(pushes, v)
	}
	writeJSON(w, http.StatusOK, map[string]any{"task_id": t.ID(), "configs": configs, "pushes": pushes})
}

// maskSecret shows a secret's first 4 characters when it is long enough
// for that to give nothing away (16 or more), and "…" otherwise.
func maskSecret(s string) string {
	switch {
	case s == "":
		return ""
	case len(s) >= 16:
		return s[:4] + "…"
	}
	return "…"
}

// maskURL replaces the query and fragment of a URL, which may carry a key,
// with "…".
func maskURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "…"
	}
	masked := u.RawQuery != "" || u.Fragment != ""
	u.RawQuery, u.Fragment, u.RawFragment = "", "", ""
	if masked {
		return u.String() + "?…"
	}
	return u.String()
}
