package ownerhttp

import (
	"net/http"
	"strconv"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// handleAudit answers GET /audit?since&actor&target&limit&cursor: the
// audit log newest first, one page. The operator reads every entry; an
// owner only those of its own account.
func (s *Face) handleAudit(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	q := r.URL.Query()
	f := switchboard.AuditFilter{Actor: q.Get("actor"), Target: q.Get("target"), Cursor: q.Get("cursor")}
	if !acct.IsOperator() {
		f.AccountID = &acct.ID
	}
	if v := q.Get("since"); v != "" {
		since, err := audit.ParseSince(v, time.Now())
		if err != nil {
			s.WriteError(w, r, err)
			return
		}
		f.Since = since
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > switchboard.MaxAuditPage {
			s.WriteError(w, r, switchboard.Errorf(switchboard.EINVALID, "limit: want 1 to %d", switchboard.MaxAuditPage))
			return
		}
		f.Limit = n
	}
	entries, next, err := s.AuditEntries.FindAuditEntries(r.Context(), f)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	page := ownerapi.AuditPage{Entries: make([]ownerapi.AuditEntry, 0, len(entries)), Next: next}
	for _, e := range entries {
		page.Entries = append(page.Entries, auditEntryView(e))
	}
	httpapi.WriteJSON(w, http.StatusOK, page)
}

// auditEntryView returns e as the owner API shows it.
func auditEntryView(e *switchboard.AuditEntry) ownerapi.AuditEntry {
	return ownerapi.AuditEntry{ID: e.ID, At: e.At, AccountID: e.AccountID, ActorKind: string(e.ActorKind), ActorID: e.ActorID,
		Action: string(e.Action), TargetKind: e.TargetKind, TargetID: e.TargetID, Outcome: string(e.Outcome),
		ClientAddr: e.ClientAddr, Detail: e.Detail}
}
