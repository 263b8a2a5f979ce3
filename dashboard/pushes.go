package dashboard

import (
	"context"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/push"
)

// pushConfigRow is a push configuration of a task, its secrets masked as
// the owner API masks them.
type pushConfigRow struct {
	ID, URL, Protocol, Token, Created string
}

// pushRow is one push notification of a task and its attempts.
type pushRow struct {
	ID, TaskState, State, LastError, Created, Done, Next string
	Attempts, LastStatus                                 int
	Log                                                  []pushAttemptRow
}

// pushAttemptRow is one attempt to send a push.
type pushAttemptRow struct {
	At, Error, Next string
	Status          int
}

// taskPushes reads a task's push configurations, pushes and attempts
// (push.Service.History, as GET /tasks/{id}/pushes does); nil when pushes
// are not kept.
func (c *Console) taskPushes(ctx context.Context, id a2a.TaskID) ([]pushConfigRow, []pushRow, error) {
	if c.Pushes == nil {
		return nil, nil, nil
	}
	h, err := c.Pushes.History(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	var configs []pushConfigRow
	for _, pc := range h.Configs {
		configs = append(configs, pushConfigRow{ID: pc.Config.ID, URL: push.MaskURL(pc.Config.URL), Protocol: string(pc.Protocol),
			Token: push.MaskSecret(pc.Config.Token), Created: formatTime(pc.CreatedAt)})
	}
	logs := map[string][]pushAttemptRow{}
	for _, a := range h.Attempts {
		row := pushAttemptRow{At: formatTime(a.At), Error: a.Error, Status: a.StatusCode}
		if a.NextAttemptAt != nil {
			row.Next = formatTime(*a.NextAttemptAt)
		}
		logs[a.PushID] = append(logs[a.PushID], row)
	}
	var pushes []pushRow
	for _, p := range h.Pushes {
		row := pushRow{ID: p.ID, TaskState: switchboard.ShortState(p.TaskState), State: string(p.State), LastError: p.LastError,
			Created: formatTime(p.CreatedAt), Attempts: p.Attempts, LastStatus: p.LastStatus, Log: logs[p.ID]}
		if p.DoneAt != nil {
			row.Done = formatTime(*p.DoneAt)
		}
		if p.State == switchboard.PushQueued {
			row.Next = formatTime(p.NextAttemptAt)
		}
		pushes = append(pushes, row)
	}
	return configs, pushes, nil
}
