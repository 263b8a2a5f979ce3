package dashboard

import (
	"context"
	"net/http"
	"time"
)

// aliasRow is one synced alias on an agent's page: never its token (the
// page says only whether the server can still open it).
type aliasRow struct {
	Alias, URL string
	// HasToken reports whether the token kept opens with this server's
	// keys; when not, the owner syncs the alias again.
	HasToken bool
	Synced   string
}

// syncedAliases returns the agent's synced aliases, ordered by alias.
func (c *Console) syncedAliases(ctx context.Context, agentID string) ([]aliasRow, error) {
	all, err := c.OutboundPeers.List(ctx, agentID)
	if err != nil {
		return nil, err
	}
	rows := make([]aliasRow, 0, len(all))
	for _, p := range all {
		rows = append(rows, aliasRow{Alias: p.Alias, URL: p.URL, HasToken: !p.Unreadable && p.Token != "",
			Synced: p.SyncedAt.UTC().Format(time.DateTime + " UTC")})
	}
	return rows, nil
}

// handleRemoveAlias removes the agent's synced alias named by the form
// (outpeer.Service.Delete, as DELETE /agents/{ref}/peers/{alias} does):
// its MCP tool send no longer reaches it. The CLI's peers.json keeps it.
func (c *Console) handleRemoveAlias(w http.ResponseWriter, r *http.Request, v *viewer) {
	if !c.checkPost(w, r, v.signIn.CSRF) {
		return
	}
	if c.OutboundPeers == nil {
		c.renderError(w, r, http.StatusNotFound, "This server keeps no synced aliases.")
		return
	}
	g, err := c.findManaged(r.Context(), v, r.PathValue("handle"))
	if !c.found(w, r, err) {
		return
	}
	err = c.OutboundPeers.Delete(r.Context(), g.ID, r.PostFormValue("alias"))
	if problem, ok := userError(err); ok {
		c.renderAgent(w, r, v, http.StatusUnprocessableEntity, agentNote{Problem: problem})
		return
	} else if err != nil {
		c.internalError(w, r, "remove a synced alias", err)
		return
	}
	c.done(w, r)
}
