package dashboard

import (
	"net/http"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
)

// handleIssueToken issues a peer token for the agent (peers.Service, as
// POST /agents/{ref}/tokens does) and shows it this once, on the agent's
// page; a refusal (bad label, label taken) is shown there too.
func (c *Console) handleIssueToken(w http.ResponseWriter, r *http.Request, v *viewer) {
	if !c.checkPost(w, r, v.signIn.CSRF) {
		return
	}
	g, err := c.findManaged(r.Context(), v, r.PathValue("handle"))
	if !c.found(w, r, err) {
		return
	}
	label := r.PostFormValue("label")
	rotate := r.PostFormValue("rotate") == "on"
	secret, _, err := c.Peers.Issue(r.Context(), switchboard.Token{AgentID: g.ID}, label, rotate, switchboard.TokensSubject(g.ID))
	action := switchboard.AuditTokenIssue
	if rotate {
		action = switchboard.AuditTokenRotate
	}
	c.record(r, v.account, action, audit.Token(g.AccountID, switchboard.TokenPeer, label, "agent "+g.Handle), err)
	if problem, ok := userError(err); ok {
		c.renderAgent(w, r, v, http.StatusUnprocessableEntity, agentNote{Problem: problem})
		return
	} else if err != nil {
		c.internalError(w, r, "issue a peer token", err)
		return
	}
	c.renderAgent(w, r, v, http.StatusCreated, agentNote{NewToken: secret, NewTokenFor: label})
}

// handleRevokeToken revokes the agent's peer token with the form's label
// (its streams end on every instance).
func (c *Console) handleRevokeToken(w http.ResponseWriter, r *http.Request, v *viewer) {
	if !c.checkPost(w, r, v.signIn.CSRF) {
		return
	}
	g, err := c.findManaged(r.Context(), v, r.PathValue("handle"))
	if !c.found(w, r, err) {
		return
	}
	kind := switchboard.TokenPeer
	err = c.Peers.Revoke(r.Context(), switchboard.TokenFilter{Kind: &kind, AgentID: &g.ID}, r.PostFormValue("label"),
		switchboard.TokensSubject(g.ID))
	c.record(r, v.account, switchboard.AuditTokenRevoke, audit.Token(g.AccountID, switchboard.TokenPeer, r.PostFormValue("label"), "agent "+g.Handle), err)
	if problem, ok := userError(err); ok {
		c.renderAgent(w, r, v, http.StatusUnprocessableEntity, agentNote{Problem: problem})
		return
	} else if err != nil {
		c.internalError(w, r, "revoke a peer token", err)
		return
	}
	c.done(w, r)
}

// found answers a failed lookup of a managed agent (404, or 500) and
// reports whether the handler goes on.
func (c *Console) found(w http.ResponseWriter, r *http.Request, err error) bool {
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		c.renderError(w, r, http.StatusNotFound, "There is no such agent.")
		return false
	} else if err != nil {
		c.internalError(w, r, "find an agent", err)
		return false
	}
	return true
}

// userError returns the message of an error the owner can act on (a
// refusal of the input: invalid, conflict, not found, forbidden).
func userError(err error) (string, bool) {
	switch switchboard.ErrorCode(err) {
	case switchboard.EINVALID, switchboard.EUNPROCESSABLE, switchboard.ECONFLICT, switchboard.ENOTFOUND, switchboard.EFORBIDDEN:
		return switchboard.ErrorMessage(err), true
	}
	return "", false
}
