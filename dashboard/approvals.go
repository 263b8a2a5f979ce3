package dashboard

import (
	"net/http"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
)

// approvalsBody is the operator's page of agents waiting for approval.
type approvalsBody struct {
	// On says whether the network (communities, approval) is served;
	// Required whether new agents of owners start unapproved.
	On, Required bool
	Waiting      []approvalRow
	CSRF         string
}

// approvalRow is an agent that is not approved.
type approvalRow struct {
	Handle, Name, Description, Account string
}

// handleApprovals lists the agents that are not approved, by account,
// with a button that approves each.
func (c *Console) handleApprovals(w http.ResponseWriter, r *http.Request, v *viewer) {
	ctx := r.Context()
	body := &approvalsBody{On: c.Network != nil, CSRF: v.signIn.CSRF}
	if c.Network != nil {
		body.Required = c.Network.RequireApproval
		glances, err := c.Glances.FindAgentGlances(ctx, "")
		if err != nil {
			c.internalError(w, r, "list agents", err)
			return
		}
		names, err := c.accountNames(r)
		if err != nil {
			c.internalError(w, r, "list accounts", err)
			return
		}
		for _, g := range glances {
			if !g.Approved {
				body.Waiting = append(body.Waiting, approvalRow{Handle: g.Handle, Name: g.Name, Description: g.Description, Account: names[g.AccountID]})
			}
		}
	}
	c.render(w, http.StatusOK, "approvals", page{Title: "Approvals", CSRF: v.signIn.CSRF, Account: v.account.Name, Operator: true, Body: body})
}

// accountNames maps every account's id to its name.
func (c *Console) accountNames(r *http.Request) (map[string]string, error) {
	all, err := c.Accounts.FindAccounts(r.Context())
	if err != nil {
		return nil, err
	}
	names := make(map[string]string, len(all))
	for _, a := range all {
		names[a.ID] = a.Name
	}
	return names, nil
}

// handleApprove approves an agent (network.Service.Approve, as POST
// /agents/{ref}/approve does: the operator only; its connection and the
// consoles watching its account reread it).
func (c *Console) handleApprove(w http.ResponseWriter, r *http.Request, v *viewer) {
	if !c.checkPost(w, r, v.signIn.CSRF) {
		return
	}
	if c.Network == nil {
		c.renderError(w, r, http.StatusNotFound, "Communities and approval are off on this server.")
		return
	}
	g, err := c.findManaged(r.Context(), v, r.PathValue("handle"))
	if !c.found(w, r, err) {
		return
	}
	_, err = c.Network.Approve(r.Context(), v.account, g, true)
	c.record(r, v.account, switchboard.AuditAgentApprove, audit.Agent(g), err)
	if problem, ok := userError(err); ok {
		c.renderError(w, r, http.StatusForbidden, problem)
		return
	} else if err != nil {
		c.internalError(w, r, "approve an agent", err)
		return
	}
	c.done(w, r)
}
