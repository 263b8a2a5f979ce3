package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/switchboard-dev/switchboard/ownerapi"
)

// showPushes prints a task's push notifications (switchboard show TASK
// --pushes): the owner API has already masked every secret.
func showPushes(ctx context.Context, cl *client, task string) error {
	var p ownerapi.TaskPushes
	if printed, err := cl.call(ctx, "GET", "/tasks/"+pathEscape(task)+"/pushes", nil, &p); err != nil || printed {
		return err
	}
	printPushes(cl.out, &p)
	return nil
}

func printPushes(w io.Writer, p *ownerapi.TaskPushes) {
	if len(p.Configs) == 0 && len(p.Pushes) == 0 {
		fmt.Fprintf(w, "task %s has no push notification configs\n", p.TaskID)
		return
	}
	for _, c := range p.Configs {
		fmt.Fprintf(w, "config %s  %s  (A2A %s)\n", c.ID, c.URL, c.Protocol)
		if c.Token != "" {
			fmt.Fprintf(w, "  token %s\n", c.Token)
		}
		if c.AuthScheme != "" {
			fmt.Fprintf(w, "  authentication %s %s\n", c.AuthScheme, c.Credentials)
		}
	}
	for _, x := range p.Pushes {
		fmt.Fprintf(w, "push %s  config %s  %s  %s  attempts %d\n", x.ID, x.ConfigID, x.TaskState, x.State, x.Attempts)
		for _, a := range x.AttemptLog {
			outcome := a.Error // it names the status of a failed answer
			if outcome == "" {
				outcome = fmt.Sprintf("delivered (%d)", a.StatusCode)
			}
			line := fmt.Sprintf("  %s  %s", a.At.Format(time.RFC3339), outcome)
			if a.NextAttemptAt != nil {
				line += "  next " + a.NextAttemptAt.Format(time.RFC3339)
			}
			fmt.Fprintln(w, line)
		}
		if x.State == "queued" && x.NextAttemptAt != nil && len(x.AttemptLog) == 0 {
			fmt.Fprintf(w, "  due %s\n", x.NextAttemptAt.Format(time.RFC3339))
		}
	}
}
