package dashboard

import (
	"net/http"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
)

// record adds an entry of action by acct (nil: someone not signed in) on
// t to the audit log, from the request's client address, its outcome read
// from err; nothing without Deps.Audit.
func (c *Console) record(r *http.Request, acct *switchboard.Account, action switchboard.AuditAction, t audit.Target, err error) {
	if c.Audit == nil {
		return
	}
	c.Audit.Record(r.Context(), audit.Entry(acct, c.clients.Addr(r), action, t, err))
}

// viewerAccount is the signed-in account of r, or nil.
func (c *Console) viewerAccount(r *http.Request) *switchboard.Account {
	if v, err := c.viewerOf(r); err == nil && v != nil {
		return v.account
	}
	return nil
}
