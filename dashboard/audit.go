package dashboard

import (
	"net/http"
	"net/url"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// auditPageSize is how many entries one page of the console's audit log
// shows.
const auditPageSize = 50

// auditBody is the audit log page: entries newest first, and the link to
// the next (older) page.
type auditBody struct {
	Entries []auditRow
	Next    string
	// All says the viewer is the operator, who sees every account's.
	All bool
}

// auditRow is one entry as the page shows it.
type auditRow struct {
	At, Action, Outcome, Actor, Target, From, Detail string
	Refused                                          bool
}

// handleAudit lists the audit log (GET /audit does the same): the
// operator's every entry, an owner's those of its own account, newest
// first, auditPageSize a page, ?page= the cursor of the next.
func (c *Console) handleAudit(w http.ResponseWriter, r *http.Request, v *viewer) {
	if c.AuditEntries == nil {
		c.handleNotFound(w, r)
		return
	}
	f := switchboard.AuditFilter{Limit: auditPageSize, Cursor: r.URL.Query().Get("page")}
	if !v.account.IsOperator() {
		f.AccountID = &v.account.ID
	}
	entries, next, err := c.AuditEntries.FindAuditEntries(r.Context(), f)
	if switchboard.ErrorCode(err) == switchboard.EINVALID {
		c.renderError(w, r, http.StatusBadRequest, "That page of the audit log is not one this server gave.")
		return
	} else if err != nil {
		c.internalError(w, r, "list the audit log", err)
		return
	}
	body := &auditBody{All: v.account.IsOperator()}
	for _, e := range entries {
		body.Entries = append(body.Entries, auditRow{At: e.At.Format(time.RFC3339), Action: string(e.Action), Outcome: string(e.Outcome),
			Actor: named(string(e.ActorKind), e.ActorID), Target: named(e.TargetKind, e.TargetID), From: e.ClientAddr, Detail: e.Detail,
			Refused: e.Outcome != switchboard.AuditOK})
	}
	if next != "" {
		body.Next = "/dashboard/audit?page=" + url.QueryEscape(next)
	}
	c.render(w, http.StatusOK, "audit", page{Title: "Audit log", CSRF: v.signIn.CSRF, Account: v.account.Name,
		Operator: v.account.IsOperator(), Body: body})
}

// named is "kind id", or the kind alone.
func named(kind, id string) string {
	if id == "" {
		return kind
	}
	return kind + " " + id
}
