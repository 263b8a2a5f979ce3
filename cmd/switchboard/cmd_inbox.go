package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// InboxCmd lists waiting tasks.
type InboxCmd struct {
	Agent    string `name:"agent" help:"Only this agent (handle or id); default: the one switchboard init configured, else all of yours."`
	All      bool   `name:"all" help:"Include tasks in every state, not only those waiting (submitted, working)."`
	AllPages bool   `name:"all-pages" help:"List every task, following the server's pages; without it, at most the first 200 of each agent, and a line saying when more wait."`
}

// Run lists the tasks.
func (c *InboxCmd) Run(ctx context.Context, cli *CLI) error {
	cl, agents, err := ownerAgents(ctx, cli, c.Agent)
	if err != nil {
		return err
	}
	boxes := []ownerapi.Inbox{}
	for _, a := range agents {
		box, err := c.inbox(ctx, cl, a)
		if err != nil {
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
	all := ""
	if c.All {
		all = " --all"
	}
	for _, box := range boxes {
		if box.NextCursor != "" {
			fmt.Fprintf(cl.out, "more tasks wait for agent %s than these %d (the oldest); list them all with  switchboard inbox --agent %s%s --all-pages\n",
				box.Agent, len(box.Tasks), box.Agent, all)
		}
	}
	return nil
}

// inbox reads the agent's inbox: its first page, or with AllPages every
// page, in one Inbox without a cursor.
func (c *InboxCmd) inbox(ctx context.Context, cl *client, agent string) (ownerapi.Inbox, error) {
	box := ownerapi.Inbox{Tasks: []ownerapi.InboxTask{}} // an empty inbox is "tasks": [], never null
	for cursor := ""; ; {
		q := url.Values{}
		if c.All {
			q.Set("all", "1")
		}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		path := "/agents/" + pathEscape(agent) + "/inbox"
		if len(q) > 0 {
			path += "?" + q.Encode()
		}
		var page ownerapi.Inbox
		if err := cl.do(ctx, "GET", path, nil, &page); err != nil {
			return box, err
		}
		box.Agent, box.NextCursor = page.Agent, page.NextCursor
		box.Tasks = append(box.Tasks, page.Tasks...)
		if !c.AllPages || page.NextCursor == "" || page.NextCursor == cursor {
			return box, nil
		}
		cursor = page.NextCursor
	}
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
	var t ownerapi.Task
	if printed, err := cl.call(ctx, "GET", "/tasks/"+pathEscape(c.Task), nil, &t); err != nil || printed {
		return err
	}
	printTask(cl.out, &t)
	return nil
}

func printTask(w io.Writer, t *ownerapi.Task) {
	fmt.Fprintf(w, "task %s  agent %s  from %s  %s (A2A %s)\n", t.ID, t.Agent, t.From, t.State, t.Protocol)
	fmt.Fprintf(w, "  context %s  created %s  updated %s\n", t.ContextID, t.CreatedAt.Format(time.RFC3339), t.UpdatedAt.Format(time.RFC3339))
	if t.Task == nil {
		return
	}
	for _, m := range t.Task.History {
		if m == nil {
			continue
		}
		var texts []string
		for _, p := range m.Parts {
			if text, ok := p.Content.(a2a.Text); ok {
				texts = append(texts, string(text))
			} else {
				texts = append(texts, "[non-text part]")
			}
		}
		text := strings.Join(texts, "\n")
		if m.Role == a2a.MessageRoleAgent {
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
	body := ownerapi.Reply{Text: text, State: c.State, Force: c.Force, ArtifactName: c.ArtifactName}
	var t ownerapi.Task
	if printed, err := cl.call(ctx, "POST", "/tasks/"+pathEscape(c.Task)+"/reply", body, &t); err != nil || printed {
		return err
	}
	fmt.Fprintf(cl.out, "task %s is now %s\n", t.ID, t.State)
	return nil
}
