package ownerhttp

import (
	"net/http"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/ownerapi"
	"github.com/switchboard-dev/switchboard/push"
)

// handleTaskPushes answers GET /tasks/{id}/pushes: the task's push
// configurations (secrets masked), and every push with its attempts.
func (s *Face) handleTaskPushes(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	t, _, err := s.ownedTask(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	h, err := s.Pushes.History(r.Context(), t.ID())
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	configs := make([]ownerapi.PushConfig, 0, len(h.Configs))
	for _, c := range h.Configs {
		v := ownerapi.PushConfig{ID: c.Config.ID, URL: push.MaskURL(c.Config.URL), Protocol: string(c.Protocol),
			Token: push.MaskSecret(c.Config.Token), CreatedAt: c.CreatedAt}
		if a := c.Config.Auth; a != nil {
			v.AuthScheme = a.Scheme
			if a.Credentials != "" {
				v.Credentials = "…"
			}
		}
		configs = append(configs, v)
	}
	attempts := map[string][]ownerapi.PushAttempt{}
	for _, a := range h.Attempts {
		attempts[a.PushID] = append(attempts[a.PushID], ownerapi.PushAttempt{At: a.At, StatusCode: a.StatusCode, Error: a.Error, NextAttemptAt: a.NextAttemptAt})
	}
	pushes := make([]ownerapi.Push, 0, len(h.Pushes))
	for _, p := range h.Pushes {
		v := ownerapi.Push{ID: p.ID, ConfigID: p.ConfigID, Seq: p.Seq, TaskState: switchboard.ShortState(p.TaskState), State: string(p.State),
			Attempts: p.Attempts, LastError: p.LastError, LastStatus: p.LastStatus, CreatedAt: p.CreatedAt, DoneAt: p.DoneAt,
			AttemptLog: attempts[p.ID]}
		if p.State == switchboard.PushQueued {
			next := p.NextAttemptAt
			v.NextAttemptAt = &next
		}
		if v.AttemptLog == nil {
			v.AttemptLog = []ownerapi.PushAttempt{}
		}
		pushes = append(pushes, v)
	}
	httpapi.WriteJSON(w, http.StatusOK, ownerapi.TaskPushes{Configs: configs, Pushes: pushes, TaskID: string(t.ID())})
}
