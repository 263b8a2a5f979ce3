package httpapi

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
	"github.com/switchboard-dev/switchboard/mcpauth"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// handleAudit answers GET /audit?since&actor&target&limit&cursor: the
// audit log newest first, one page. The operator reads every entry; an
// owner only those of its own account.
func (s *Server) handleAudit(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	if s.AuditEntries == nil {
		s.NotFound(w, r)
		return
	}
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
	WriteJSON(w, http.StatusOK, page)
}

// auditEntryView returns e as the owner API shows it.
func auditEntryView(e *switchboard.AuditEntry) ownerapi.AuditEntry {
	return ownerapi.AuditEntry{ID: e.ID, At: e.At, AccountID: e.AccountID, ActorKind: string(e.ActorKind), ActorID: e.ActorID,
		Action: string(e.Action), TargetKind: e.TargetKind, TargetID: e.TargetID, Outcome: string(e.Outcome),
		ClientAddr: e.ClientAddr, Detail: e.Detail}
}

// grantTarget is the audit log's target of an MCP client's grant: its
// token's label, the client in the detail; g may be nil (label then names
// it).
func grantTarget(accountID string, g *switchboard.OAuthGrant, label string) audit.Target {
	t := audit.Target{AccountID: accountID, Kind: audit.KindGrant, ID: label}
	if g != nil {
		t.ID, t.Detail = g.Label, "client "+g.ClientID
		if g.ClientName != "" {
			t.Detail += " (" + g.ClientName + ")"
		}
	}
	return t
}

// recordPeerToken records a token given to an outside caller of agent (a
// pairing's peer token), by actor; replaced says it took the place of one.
func (s *Server) recordPeerToken(r *http.Request, kind switchboard.AuditActorKind, actor string, agent *switchboard.Agent,
	label string, replaced bool) {
	if s.Audit == nil {
		return
	}
	action := switchboard.AuditTokenIssue
	if replaced {
		action = switchboard.AuditTokenRotate
	}
	e := audit.Entry(nil, s.Clients.Addr(r), action, audit.Token(agent.AccountID, switchboard.TokenPeer, label, "agent "+agent.Handle+", by pairing"), nil)
	e.ActorKind, e.ActorID = kind, actor
	s.Audit.Record(r.Context(), e)
}

// recordMCPGrantToken records the MCP token an MCP client took with a
// code (issued) or a refresh token (rotated) at the endpoint ep.
func (s *Server) recordMCPGrantToken(r *http.Request, ep mcpauth.Endpoint, form url.Values, pair *mcpauth.TokenPair) {
	if s.Audit == nil {
		return
	}
	action, opens := switchboard.AuditTokenIssue, "account endpoint"
	if form.Get("grant_type") != "authorization_code" {
		action = switchboard.AuditTokenRotate
	}
	var account string
	if ep.AgentID != "" {
		opens = "agent " + ep.AgentID
		if g, err := s.Agents.FindAgentByID(r.Context(), ep.AgentID); err == nil {
			account, opens = g.AccountID, "agent "+g.Handle
		}
	}
	e := audit.Entry(nil, s.Clients.Addr(r), action, audit.Token(account, switchboard.TokenMCP, pair.Label, opens+", by OAuth"), nil)
	e.ActorKind, e.ActorID = switchboard.AuditMCPClient, form.Get("client_id")
	s.Audit.Record(r.Context(), e)
}
