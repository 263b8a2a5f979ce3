package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// inboxJSON is GET /agents/{ref}/inbox.
type inboxJSON struct {
	Agent string `json:"agent"`
	Tasks []struct {
		ID        string    `json:"id"`
		ContextID string    `json:"context_id"`
		From      string    `json:"from"`
		State     string    `json:"state"`
		Text      string    `json:"text"`
		CreatedAt time.Time `json:"created_at"`
	} `json:"tasks"`
}

// taskJSON is GET /tasks/{id}.
type taskJSON struct {
	ID        string          `json:"id"`
	Agent     string          `json:"agent"`
	From      string          `json:"from"`
	ContextID string          `json:"context_id"`
	State     string          `json:"state"`
	Protocol  string          `json:"protocol"`
	Text      string          `json:"text"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
	Task      json.RawMessage `json:"task"`
}

// InboxCmd lists waiting tasks.
type InboxCmd struct {
	Agent string `name:"agent" help:"Only this agent (handle or id); default: all of yours."`
	All   bool   `name:"all" help:"Include tasks in every state, not only those waiting (submitted, working)."`
}

// Run lists the tasks.
func (c *InboxCmd) Run(ctx context.Context, cli *CLI) error {
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	agents, err := cl.agentsNamed(ctx, c.Agent)
	if err != nil {
		return err
	}
	var boxes []inboxJSON
	for _, a := range agents {
		path := "/agents/" + pathEscape(a) + "/inbox"
		if c.All {
			path += "?all=1"
		}
		var box inboxJSON
		if err := cl.do(ctx, "GET", path, nil, &box); err != nil {
			return err
		}
		boxes = append(boxes, box)
	}
	if cl.json {
		return cl.printJSON(boxes)
	}
	n := 0
	for _, box := range boxes {
		for _, t := range box.Tasks {
			n++
			fmt.Fprintf(cl.out, "task %s  agent %s  from %s  %s  %s\n", t.ID, box.Agent, t.From, t.State, t.CreatedAt.Format(time.RFC3339))
			fmt.Fprintf(cl.out, "  context %s\n", t.ContextID)
			writeUntrusted(cl.out, t.Text)
			fmt.Fprintln(cl.out)
		}
	}
	if n == 0 {
		fmt.Fprintln(cl.out, "no tasks waiting")
	} else {
		fmt.Fprintln(cl.out, "answer with  switchboard reply TASK --text '...' [--state completed|input-required|failed|rejected|working]")
	}
	return nil
}

// writeUntrusted prints text a peer sent, fenced and indented, so that a
// human or an agent reading the output sees where peer text starts and ends
// and treats it as data, never as instructions.
func writeUntrusted(w io.Writer, text string) {
	fmt.Fprintln(w, "  UNTRUSTED PEER MESSAGE >>>")
	for _, line := range strings.Split(text, "\n") {
		fmt.Fprintln(w, "  | "+line)
	}
	fmt.Fprintln(w, "  <<< END PEER MESSAGE")
}

// ShowCmd shows a task.
type ShowCmd struct {
	Task   string `arg:"" help:"Task id."`
	Pushes bool   `name:"pushes" help:"Show the task's push notifications to its peer instead: each config (secrets masked), each push and its attempts."`
}

// Run shows the task.
func (c *ShowCmd) Run(ctx context.Context, cli *CLI) error {
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	if c.Pushes {
		return showPushes(ctx, cl, c.Task)
	}
	var t taskJSON
	if printed, err := cl.call(ctx, "GET", "/tasks/"+pathEscape(c.Task), nil, &t); err != nil || printed {
		return err
	}
	printTask(cl.out, &t)
	return nil
}

func printTask(w io.Writer, t *taskJSON) {
	fmt.Fprintf(w, "task %s  agent %s  from %s  %s (A2A %s)\n", t.ID, t.Agent, t.From, t.State, t.Protocol)
	fmt.Fprintf(w, "  context %s  created %s  updated %s\n", t.ContextID, t.CreatedAt.Format(time.RFC3339), t.UpdatedAt.Format(time.RFC3339))
	var task struct {
		History []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text *string `json:"text"`
			} `json:"parts"`
		} `json:"history"`
	}
	if json.Unmarshal(t.Task, &task) != nil {
		return
	}
	for _, m := range task.History {
		var texts []string
		for _, p := range m.Parts {
			if p.Text != nil {
				texts = append(texts, *p.Text)
			} else {
				texts = append(texts, "[non-text part]")
			}
		}
		text := strings.Join(texts, "\n")
		if m.Role == "ROLE_AGENT" {
			fmt.Fprintln(w, "  agent:")
			for _, line := range strings.Split(text, "\n") {
				fmt.Fprintln(w, "  | "+line)
			}
			continue
		}
		fmt.Fprintln(w, "  peer:")
		writeUntrusted(w, text)
	}
}

// ReplyCmd answers a task.
type ReplyCmd struct {
	Task         string `arg:"" help:"Task id."`
	Text         string `name:"text" required:"" help:"The answer ('-' reads it from stdin)."`
	State        string `name:"state" default:"completed" enum:"completed,input-required,failed,rejected,working" help:"State the task moves to."`
	Force        bool   `name:"force" help:"Answer even a task that is already finished."`
	ArtifactName string `name:"artifact-name" help:"Name of the artifact a completing answer adds (default: response)."`
}

// Run answers the task.
func (c *ReplyCmd) Run(ctx context.Context, cli *CLI) error {
	cl, err := newClient(cli)
	if err != nil {
		return err
	}
	text := c.Text
	if text == "-" {
		b, err := io.ReadAll(io.LimitReader(os.Stdin, 1<<20+1))
		if err != nil {
			return fmt.Errorf("read stdin: %w", err)
		}
		text = strings.TrimRight(string(b), "\n")
	}
	body := map[string]any{"text": text, "state": c.State, "force": c.Force}
	if c.ArtifactName != "" {
		body["artifact_name"] = c.ArtifactName
	}
	var t taskJSON
	if printed, err := cl.call(ctx, "POST", "/tasks/"+pathEscape(c.Task)+"/reply", body, &t); err != nil || printed {
		return err
	}
	fmt.Fprintf(cl.out, "task %s is now %s\n", t.ID, t.State)
	return nil
}
