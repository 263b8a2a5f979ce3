package dashboard

import (
	"context"
	"net/http"
	"strings"

	"github.com/switchboard-dev/switchboard"
)

// fetchHeader marks a form the console's script sent: it is answered 204,
// not with a redirect to a page it would not show.
const fetchHeader = "X-Console-Fetch"

// handleAcceptsTasks sets an agent's accepts_tasks, as PATCH /agents/{ref}
// does (relay.Service.UpdateAgent: its connection rereads it at once). The
// list is one form: the switch pressed sends set="{handle} {true|false}".
func (c *Console) handleAcceptsTasks(w http.ResponseWriter, r *http.Request, v *viewer) {
	if !c.checkPost(w, r, v.signIn.CSRF) {
		return
	}
	handle, value, _ := strings.Cut(r.PostFormValue("set"), " ")
	var accepts bool
	switch value {
	case "true":
		accepts = true
	case "false":
	default:
		c.renderError(w, r, http.StatusBadRequest, "Choose whether the agent accepts tasks: true or false.")
		return
	}
	g, err := c.findManaged(r.Context(), v, handle)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		c.renderError(w, r, http.StatusNotFound, "There is no such agent.")
		return
	} else if err != nil {
		c.Logger.Error("find an agent", "err", err)
		c.renderError(w, r, http.StatusInternalServerError, "Something went wrong; try again.")
		return
	}
	if _, err := c.Tasks.UpdateAgent(r.Context(), g.ID, switchboard.AgentUpdate{AcceptsTasks: &accepts}); err != nil {
		c.Logger.Error("set accepts_tasks", "agent_id", g.ID, "err", err)
		c.renderError(w, r, http.StatusInternalServerError, "Something went wrong; try again.")
		return
	}
	c.done(w, r)
}

// done ends a form's POST: 204 for the script, else 303 back to the page
// the form named (a console page), or to the agents list.
func (c *Console) done(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(fetchHeader) != "" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	back := r.PostFormValue("back")
	if !strings.HasPrefix(back, "/dashboard") || strings.ContainsAny(back, "\\\r\n") {
		back = "/dashboard"
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// findManaged finds the agent with the handle if the viewer manages it;
// ENOTFOUND otherwise.
func (c *Console) findManaged(ctx context.Context, v *viewer, handle string) (*switchboard.Agent, error) {
	g, err := c.Agents.FindAgentByHandle(ctx, strings.ToLower(handle))
	if err != nil {
		return nil, err
	}
	if !v.account.IsOperator() && g.AccountID != v.account.ID {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "agent not found")
	}
	return g, nil
}
