package dashboard

import (
	"net/http"
	"strings"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
)

// deleteBody is the page that confirms an agent's deletion.
type deleteBody struct {
	Handle, Name string
	CSRF         string
}

// handleRotateAgentToken gives the agent (of any mode) a new agent token
// (accounts.Service.RotateAgentToken, as POST /agents/{ref}/agent-token
// does: the old token stops working and its connection closes) and shows
// it this once, on the agent's page.
func (c *Console) handleRotateAgentToken(w http.ResponseWriter, r *http.Request, v *viewer) {
	if !c.checkPost(w, r, v.signIn.CSRF) {
		return
	}
	g, err := c.findManaged(r.Context(), v, r.PathValue("handle"))
	if !c.found(w, r, err) {
		return
	}
	secret, err := c.owners.RotateAgentToken(r.Context(), g)
	c.record(r, v.account, switchboard.AuditTokenRotate, audit.Token(g.AccountID, switchboard.TokenAgent, "", "agent "+g.Handle), err)
	if problem, ok := userError(err); ok {
		c.renderAgent(w, r, v, http.StatusUnprocessableEntity, agentNote{Problem: problem})
		return
	} else if err != nil {
		c.internalError(w, r, "rotate an agent token", err)
		return
	}
	c.renderAgent(w, r, v, http.StatusOK, agentNote{NewAgentToken: secret})
}

// handleConfirmDelete asks, on a page of its own, to type the agent's
// handle before it is deleted.
func (c *Console) handleConfirmDelete(w http.ResponseWriter, r *http.Request, v *viewer) {
	c.renderConfirmDelete(w, r, v, http.StatusOK, "")
}

func (c *Console) renderConfirmDelete(w http.ResponseWriter, r *http.Request, v *viewer, status int, problem string) {
	g, err := c.findManaged(r.Context(), v, r.PathValue("handle"))
	if !c.found(w, r, err) {
		return
	}
	c.render(w, status, "delete", page{Title: "Delete agent " + g.Handle, CSRF: v.signIn.CSRF, Account: v.account.Name, Operator: v.account.IsOperator(),
		Problem: problem, Body: &deleteBody{Handle: g.Handle, Name: g.Name, CSRF: v.signIn.CSRF}})
}

// handleDelete deletes the agent (accounts.Service.DeleteAgent, as DELETE
// /agents/{ref} does) once the form's confirm field is its handle, then
// goes back to the agents list.
func (c *Console) handleDelete(w http.ResponseWriter, r *http.Request, v *viewer) {
	if !c.checkPost(w, r, v.signIn.CSRF) {
		return
	}
	g, err := c.findManaged(r.Context(), v, r.PathValue("handle"))
	if !c.found(w, r, err) {
		return
	}
	if !strings.EqualFold(strings.TrimSpace(r.PostFormValue("confirm")), g.Handle) {
		c.renderConfirmDelete(w, r, v, http.StatusUnprocessableEntity, "Type the agent's handle, "+g.Handle+", to delete it.")
		return
	}
	err = c.owners.DeleteAgent(r.Context(), g)
	c.record(r, v.account, switchboard.AuditAgentDelete, audit.Agent(g), err)
	if err != nil {
		c.internalError(w, r, "delete an agent", err)
		return
	}
	http.Redirect(w, r, "/dashboard", http.StatusSeeOther)
}
