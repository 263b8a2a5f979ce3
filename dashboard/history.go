package dashboard

import (
	"context"
	"net/http"
	"net/url"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/relay"
)

// historyBody is one page of an agent's finished tasks, newest first.
type historyBody struct {
	Handle string
	Tasks  []historyRow
	// Next is the link to the next (older) page; "" on the last.
	Next string
}

// historyRow is one finished task.
type historyRow struct {
	ID, From, State, Text, Finished string
}

// outboxBody is what an agent sent: its tasks on other agents of this
// deployment (the network), and its messages to other addresses (the
// outbox), each newest first.
type outboxBody struct {
	Handle string
	Sent   []sentRow
	// NextSent is the link to the next page of network tasks; "" on the
	// last.
	NextSent string
	// OutboxOn says whether outbox records are kept here.
	OutboxOn bool
	Outbox   []outboundRow
}

// sentRow is a task the agent sent on the network.
type sentRow struct {
	ID, To, State, Text, Updated string
}

// outboundRow is a message the agent sent to another address, and what
// came back.
type outboundRow struct {
	ID, Target, State, Text, Error, Updated string
	// Answer is the latest text the target sent back (untrusted).
	Answer string
}

// handleHistory lists the agent's finished tasks, newest first, one page
// at a time (relay.Service.FinishedTasks).
func (c *Console) handleHistory(w http.ResponseWriter, r *http.Request, v *viewer) {
	g, err := c.findManaged(r.Context(), v, r.PathValue("handle"))
	if !c.found(w, r, err) {
		return
	}
	p, err := c.Tasks.FinishedTasks(r.Context(), g.ID, r.URL.Query().Get("page"))
	if switchboard.ErrorCode(err) == switchboard.EINVALID {
		c.renderError(w, r, http.StatusBadRequest, "That page of the history does not exist; start from its first page.")
		return
	} else if err != nil {
		c.internalError(w, r, "read an agent's history", err)
		return
	}
	body := &historyBody{Handle: g.Handle}
	for _, t := range p.Tasks {
		body.Tasks = append(body.Tasks, historyRow{ID: string(t.ID()), From: t.PeerLabel, State: switchboard.ShortState(t.State()),
			Text: relay.LastUserText(&t.A2A), Finished: formatTime(switchboard.StatusAt(t))})
	}
	if p.NextPageToken != "" {
		body.Next = "/dashboard/agents/" + g.Handle + "/history?page=" + url.QueryEscape(p.NextPageToken)
	}
	c.render(w, http.StatusOK, "history", page{Title: "History of " + g.Handle, CSRF: v.signIn.CSRF, Account: v.account.Name, Operator: v.account.IsOperator(), Body: body})
}

// handleOutbox lists what the agent sent: its tasks on other agents of the
// network (relay.Service.ListTasks with the agent as the peer, as the
// agent's own listing does), one page at a time, and its outbox records
// (outbox.Service.List, as GET /agents/{ref}/outbox does).
func (c *Console) handleOutbox(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	g, err := c.findManaged(ctx, v, r.PathValue("handle"))
	if !c.found(w, r, err) {
		return
	}
	body := &outboxBody{Handle: g.Handle, OutboxOn: c.Outbox != nil}
	p, err := c.Tasks.ListTasks(ctx, switchboard.Peer{ID: g.ID, Label: g.Handle, Kind: switchboard.PeerAgent},
		relay.TaskQuery{PageToken: r.URL.Query().Get("page")})
	if switchboard.ErrorCode(err) == switchboard.EINVALID {
		c.renderError(w, r, http.StatusBadRequest, "That page of the outbox does not exist; start from its first page.")
		return
	} else if err != nil {
		c.internalError(w, r, "list an agent's sent tasks", err)
		return
	}
	if body.Sent, err = c.sentRows(ctx, p.Tasks); err != nil {
		c.internalError(w, r, "name the agents of sent tasks", err)
		return
	}
	if p.NextPageToken != "" {
		body.NextSent = "/dashboard/agents/" + g.Handle + "/outbox?page=" + url.QueryEscape(p.NextPageToken)
	}
	if c.Outbox != nil {
		all, err := c.Outbox.List(ctx, g.ID, 100)
		if err != nil {
			c.internalError(w, r, "list an agent's outbox", err)
			return
		}
		for _, o := range all {
			row := outboundRow{ID: o.ID, Target: o.Target, State: outboundState(o), Text: o.Text, Error: o.Error, Updated: formatTime(o.UpdatedAt)}
			if n := len(o.Updates); n > 0 {
				row.Answer = o.Updates[n-1].Text
			}
			body.Outbox = append(body.Outbox, row)
		}
	}
	c.render(w, http.StatusOK, "outbox", page{Title: "Sent by " + g.Handle, CSRF: v.signIn.CSRF, Account: v.account.Name, Operator: v.account.IsOperator(), Body: body})
}

// sentRows describes tasks sent on the network, naming the agent each
// went to.
func (c *Console) sentRows(ctx context.Context, tasks []*switchboard.Task) ([]sentRow, error) {
	handles := map[string]string{}
	var rows []sentRow
	for _, t := range tasks {
		to, ok := handles[t.AgentID]
		if !ok {
			a, err := c.Agents.FindAgentByID(ctx, t.AgentID)
			switch {
			case err == nil:
				to = a.Handle
			case switchboard.ErrorCode(err) == switchboard.ENOTFOUND:
				to = "(deleted)"
			default:
				return nil, err
			}
			handles[t.AgentID] = to
		}
		rows = append(rows, sentRow{ID: string(t.ID()), To: to, State: switchboard.ShortState(t.State()),
			Text: relay.LastUserText(&t.A2A), Updated: formatTime(switchboard.StatusAt(t))})
	}
	return rows, nil
}

// outboundState names a remote task's state; "sent" before the target
// answered (as the owner API says).
func outboundState(o *switchboard.Outbound) string {
	if o.State == "" {
		return "sent"
	}
	return switchboard.ShortState(o.State)
}
