package dashboard

import (
	"net/http"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
)

// handleJoin puts the agent in a community (network.Service.Join, as
// PUT /agents/{ref}/communities/{name} does).
func (c *Console) handleJoin(w http.ResponseWriter, r *http.Request, v *viewer) {
	c.membership(w, r, v, true)
}

// handleLeave takes the agent out of a community (network.Service.Leave).
func (c *Console) handleLeave(w http.ResponseWriter, r *http.Request, v *viewer) {
	c.membership(w, r, v, false)
}

func (c *Console) membership(w http.ResponseWriter, r *http.Request, v *viewer, join bool) {
	if !c.checkPost(w, r, v.signIn.CSRF) {
		return
	}
	if c.Network == nil {
		c.renderError(w, r, http.StatusNotFound, "Communities are off on this server.")
		return
	}
	g, err := c.findManaged(r.Context(), v, r.PathValue("handle"))
	if !c.found(w, r, err) {
		return
	}
	name := r.PostFormValue("community")
	if join {
		_, err = c.Network.Join(r.Context(), v.account, g, name)
	} else {
		err = c.Network.Leave(r.Context(), g, name)
	}
	action := switchboard.AuditCommunityJoin
	if !join {
		action = switchboard.AuditCommunityLeave
	}
	c.record(r, v.account, action, audit.Target{AccountID: g.AccountID, Kind: audit.KindCommunity, ID: name, Detail: "agent " + g.Handle}, err)
	if problem, ok := userError(err); ok {
		c.renderAgent(w, r, v, http.StatusUnprocessableEntity, agentNote{Problem: problem})
		return
	} else if err != nil {
		c.internalError(w, r, "change the agent's communities", err)
		return
	}
	c.done(w, r)
}
