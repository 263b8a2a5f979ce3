package dashboard

import (
	"context"
	"net/http"
	"strings"

	"github.com/switchboard-dev/switchboard"
)

// agentsBody is the agents list: the owner's agents, or, for the
// operator, every account's.
type agentsBody struct {
	Groups []accountGroup
	// Operator shows each account's name above its agents.
	Operator bool
	// ShowApproval shows the approved column (agents need approval).
	ShowApproval bool
	// CSRF is the token of the toggles' forms.
	CSRF string
}

// accountGroup is one account's agents.
type accountGroup struct {
	Name     string
	Disabled bool
	Agents   []agentRow
}

// agentRow is one agent at a glance, its text formatted in advance (a
// list of 1,000 agents is rendered in a few milliseconds).
type agentRow struct {
	Handle, Name, Description, Mode string
	// Connector says whether the agent connects (and so is live or not).
	Connector, Live     bool
	Accepting, Approved bool
	// Communities are the agent's communities, joined with commas.
	Communities string
	Waiting     int
	// LastTask is when its newest task came ("" for never).
	LastTask string
}

// handleHome is /dashboard: the agents list, or the sign-in form.
func (c *Console) handleHome(w http.ResponseWriter, r *http.Request) {
	v, err := c.viewerOf(r)
	if err != nil {
		c.Logger.Error("read the sign-in", "err", err)
		c.renderError(w, r, http.StatusInternalServerError, "Something went wrong; try again.")
		return
	}
	if v == nil {
		c.renderSignIn(w, r, http.StatusOK, "")
		return
	}
	body, err := c.agentsList(r.Context(), v)
	if err != nil {
		c.Logger.Error("list the agents", "err", err)
		c.renderError(w, r, http.StatusInternalServerError, "Something went wrong; try again.")
		return
	}
	c.render(w, http.StatusOK, "agents", page{Title: "Agents", CSRF: v.signIn.CSRF, Account: v.account.Name, Operator: v.account.IsOperator(),
		Events: "/dashboard/events", Body: body})
}

// agentsList reads what the agents list shows: the agents the viewer
// manages with their glances (one query), and their communities (one
// query).
func (c *Console) agentsList(ctx context.Context, v *viewer) (*agentsBody, error) {
	accounts := []*switchboard.Account{v.account}
	glanceOf := v.account.ID
	if v.account.IsOperator() {
		all, err := c.Accounts.FindAccounts(ctx)
		if err != nil {
			return nil, err
		}
		accounts, glanceOf = all, ""
	}
	glances, err := c.Glances.FindAgentGlances(ctx, glanceOf)
	if err != nil {
		return nil, err
	}
	communities, err := c.communities(ctx, glances)
	if err != nil {
		return nil, err
	}
	now := c.cfg.Now()
	byAccount := make(map[string][]agentRow, len(accounts))
	for _, g := range glances {
		row := agentRow{
			Handle: g.Handle, Name: g.Name, Description: g.Description, Mode: string(g.Mode),
			Connector: g.Mode == switchboard.ModeConnector, Live: now.Before(g.SessionExpiresAt),
			Accepting: g.AcceptsTasks, Approved: g.Approved, Communities: strings.Join(communities[g.ID], ", "),
			Waiting: g.Waiting,
		}
		if !g.LastTaskAt.IsZero() {
			row.LastTask = g.LastTaskAt.UTC().Format("2006-01-02 15:04 UTC")
		}
		byAccount[g.AccountID] = append(byAccount[g.AccountID], row)
	}
	body := &agentsBody{Operator: v.account.IsOperator(), CSRF: v.signIn.CSRF,
		ShowApproval: c.Network != nil && c.Network.RequireApproval}
	for _, a := range accounts {
		rows := byAccount[a.ID]
		if len(rows) == 0 && body.Operator && a.ID != v.account.ID {
			continue // accounts without agents would only lengthen the page
		}
		body.Groups = append(body.Groups, accountGroup{Name: a.Name, Disabled: a.Disabled, Agents: rows})
	}
	return body, nil
}

// communities returns the agents' communities (none without the network).
func (c *Console) communities(ctx context.Context, agents []*switchboard.AgentGlance) (map[string][]string, error) {
	if c.Network == nil || len(agents) == 0 {
		return nil, nil
	}
	ids := make([]string, len(agents))
	for i, g := range agents {
		ids[i] = g.ID
	}
	return c.Network.AgentCommunities(ctx, ids...)
}
