package dashboard

import (
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/relay"
)

// inboxBody is an agent's inbox: its tasks that wait for it, oldest first.
type inboxBody struct {
	Handle string
	Tasks  []inboxRow
	More   bool // more than one page waits
}

// inboxRow is one waiting task.
type inboxRow struct {
	ID, From, State, Text, Created string
}

// taskBody is a task's page: the conversation, the artifacts and the
// reply form.
type taskBody struct {
	ID, Handle, From, State, Created string
	Messages                         []messageRow
	Artifacts                        []messageRow
	Open                             bool // not finished: the reply form shows
	// PushesKept says whether push notifications are kept here; then
	// PushConfigs and Pushes are the task's.
	PushesKept  bool
	PushConfigs []pushConfigRow
	Pushes      []pushRow
	CSRF        string
}

// messageRow is a message or an artifact as text.
type messageRow struct {
	// Who is "peer" for the peer's messages (untrusted text), "agent" for
	// the agent's, or an artifact's name.
	Who   string
	Peer  bool
	Text  string
	Other int // parts that are not text (files, data), not shown
}

// handleInbox lists the agent's waiting tasks (relay.Service.Inbox, as
// GET /agents/{ref}/inbox does).
func (c *Console) handleInbox(w http.ResponseWriter, r *http.Request, v *viewer) {
	g, err := c.findManaged(r.Context(), v, r.PathValue("handle"))
	if !c.found(w, r, err) {
		return
	}
	inbox, err := c.Tasks.Inbox(r.Context(), g.ID, relay.InboxQuery{})
	if err != nil {
		c.internalError(w, r, "read an inbox", err)
		return
	}
	body := &inboxBody{Handle: g.Handle, More: inbox.NextCursor != ""}
	for _, t := range inbox.Tasks {
		body.Tasks = append(body.Tasks, inboxRow{ID: string(t.ID()), From: t.PeerLabel, State: switchboard.ShortState(t.State()),
			Text: relay.LastUserText(&t.A2A), Created: formatTime(t.CreatedAt)})
	}
	c.render(w, http.StatusOK, "inbox", page{Title: "Inbox of " + g.Handle, CSRF: v.signIn.CSRF, Account: v.account.Name, Operator: v.account.IsOperator(), Body: body})
}

// handleTask shows a task of an agent the viewer manages.
func (c *Console) handleTask(w http.ResponseWriter, r *http.Request, v *viewer) {
	c.renderTask(w, r, v, http.StatusOK, "")
}

// renderTask writes the task's page, with a problem to show.
func (c *Console) renderTask(w http.ResponseWriter, r *http.Request, v *viewer, status int, problem string) {
	t, g, ok := c.managedTask(w, r, v)
	if !ok {
		return
	}
	body := &taskBody{ID: string(t.ID()), Handle: g.Handle, From: t.PeerLabel, State: switchboard.ShortState(t.State()),
		Created: formatTime(t.CreatedAt), Open: !t.State().Terminal(), CSRF: v.signIn.CSRF}
	for _, m := range t.A2A.History {
		row := partsText(m.Parts)
		row.Peer = m.Role == a2a.MessageRoleUser
		row.Who = "agent"
		if row.Peer {
			row.Who = "peer " + t.PeerLabel
		}
		body.Messages = append(body.Messages, row)
	}
	for _, a := range t.A2A.Artifacts {
		row := partsText(a.Parts)
		row.Who = a.Name
		body.Artifacts = append(body.Artifacts, row)
	}
	body.PushesKept = c.Pushes != nil
	var err error
	if body.PushConfigs, body.Pushes, err = c.taskPushes(r.Context(), t.ID()); err != nil {
		c.internalError(w, r, "read a task's pushes", err)
		return
	}
	c.render(w, status, "task", page{Title: "Task from " + t.PeerLabel, CSRF: v.signIn.CSRF, Account: v.account.Name, Operator: v.account.IsOperator(),
		Problem: problem, Body: body})
}

// handleReply answers a task (relay.Service.ReplyToTask, as POST
// /tasks/{id}/reply does), then shows it.
func (c *Console) handleReply(w http.ResponseWriter, r *http.Request, v *viewer) {
	if !c.checkPost(w, r, v.signIn.CSRF) {
		return
	}
	t, _, ok := c.managedTask(w, r, v)
	if !ok {
		return
	}
	state, ok := switchboard.ParseState(r.PostFormValue("state"))
	if !ok {
		c.renderTask(w, r, v, http.StatusUnprocessableEntity, "Choose the state the reply leaves the task in.")
		return
	}
	_, err := c.Tasks.ReplyToTask(r.Context(), t.ID(), relay.Reply{Text: r.PostFormValue("text"), State: state})
	if problem, ok := userError(err); ok || switchboard.ErrorCode(err) == switchboard.ETOOLARGE {
		if problem == "" {
			problem = switchboard.ErrorMessage(err)
		}
		c.renderTask(w, r, v, http.StatusUnprocessableEntity, problem)
		return
	} else if err != nil {
		c.internalError(w, r, "reply to a task", err)
		return
	}
	http.Redirect(w, r, "/dashboard/tasks/"+string(t.ID()), http.StatusSeeOther)
}

// managedTask finds the task of the path's {id} if the viewer manages its
// agent; otherwise it answers 404, the same as for a missing task.
func (c *Console) managedTask(w http.ResponseWriter, r *http.Request, v *viewer) (*switchboard.Task, *switchboard.Agent, bool) {
	t, err := c.Tasks.FindTaskUnscoped(r.Context(), a2a.TaskID(r.PathValue("id")))
	var g *switchboard.Agent
	if err == nil {
		g, err = c.Agents.FindAgentByID(r.Context(), t.AgentID)
	}
	if err == nil && !v.account.IsOperator() && g.AccountID != v.account.ID {
		err = switchboard.Errorf(switchboard.ENOTFOUND, "task not found")
	}
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		c.renderError(w, r, http.StatusNotFound, "There is no such task.")
		return nil, nil, false
	} else if err != nil {
		c.internalError(w, r, "find a task", err)
		return nil, nil, false
	}
	return t, g, true
}

// partsText joins the text parts of a message or an artifact and counts
// the others.
func partsText(parts a2a.ContentParts) messageRow {
	var row messageRow
	var texts []string
	for _, p := range parts {
		if p == nil {
			continue
		}
		if s := p.Text(); s != "" {
			texts = append(texts, s)
		} else {
			row.Other++
		}
	}
	row.Text = strings.Join(texts, "\n")
	return row
}

// formatTime is how the console writes a time.
func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }
