package ownerhttp

import (
	"net/http"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

func (s *Face) handleIssueToken(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, err := s.OwnedAgent(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	v := s.viewAgent(r, g)
	s.issuePeerToken(w, r, acct, switchboard.Token{AgentID: g.ID}, switchboard.TokensSubject(g.ID),
		ownerapi.Token{Address: v.Address, AgentCard: v.AgentCard}, audit.Token(g.AccountID, switchboard.TokenPeer, "", "agent "+g.Handle))
}

func (s *Face) handleListTokens(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, err := s.OwnedAgent(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	kind := switchboard.TokenPeer
	s.listPeerTokens(w, r, switchboard.TokenFilter{Kind: &kind, AgentID: &g.ID})
}

func (s *Face) handleRevokeToken(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, err := s.OwnedAgent(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	kind := switchboard.TokenPeer
	s.revokePeerTokens(w, r, acct, switchboard.TokenFilter{Kind: &kind, AgentID: &g.ID}, switchboard.TokensSubject(g.ID),
		audit.Token(g.AccountID, switchboard.TokenPeer, "", "agent "+g.Handle))
}

// issuePeerToken issues a peer token of an address, an agent's or a
// community's: scope holds the AgentID or the Community (and the issuing
// AccountID), subject is the bus subject that ends the streams of the
// token a rotation replaces, and answer the address and card to show. The
// issue (or rotation) by acct is recorded in the audit log on target (its
// label filled in).
func (s *Face) issuePeerToken(w http.ResponseWriter, r *http.Request, acct *switchboard.Account, scope switchboard.Token, subject string,
	answer ownerapi.Token, target audit.Target) {
	var body ownerapi.TokenIssue
	if err := s.DecodeJSON(w, r, &body); err != nil {
		s.WriteError(w, r, err)
		return
	}
	secret, tok, err := s.peers.Issue(r.Context(), scope, body.Label, body.Rotate, subject)
	action := switchboard.AuditTokenIssue
	if body.Rotate {
		action = switchboard.AuditTokenRotate
	}
	target.ID += ":" + body.Label
	s.Record(r, acct, action, target, err)
	if err != nil {
		if switchboard.ErrorCode(err) == switchboard.ECONFLICT {
			err = switchboard.Errorf(switchboard.ECONFLICT, "an active token labelled %q exists; revoke it or pass \"rotate\": true", body.Label)
		}
		s.WriteError(w, r, err)
		return
	}
	answer.Label, answer.Community, answer.Token, answer.Active, answer.CreatedAt = tok.Label, tok.Community, secret, true, tok.CreatedAt
	httpapi.WriteJSON(w, http.StatusCreated, answer)
}

// listPeerTokens answers with the peer tokens of f: the active ones, or
// all with ?all=1.
func (s *Face) listPeerTokens(w http.ResponseWriter, r *http.Request, f switchboard.TokenFilter) {
	f.Active = r.URL.Query().Get("all") == ""
	toks, err := s.Tokens.FindTokens(r.Context(), f)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	out := make([]ownerapi.Token, 0, len(toks))
	for _, t := range toks {
		out = append(out, ownerapi.Token{Label: t.Label, Community: t.Community, Active: t.RevokedAt == nil, CreatedAt: t.CreatedAt,
			RevokedAt: t.RevokedAt, LastUsedAt: t.LastUsedAt})
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

// revokePeerTokens revokes the active peer token of f labelled as the
// path says, and ends its streams on every instance (subject); the
// revocation by acct is recorded in the audit log on target (its label
// filled in).
func (s *Face) revokePeerTokens(w http.ResponseWriter, r *http.Request, acct *switchboard.Account, f switchboard.TokenFilter, subject string,
	target audit.Target) {
	label := r.PathValue("label")
	err := s.peers.Revoke(r.Context(), f, label, subject) // its streams end, on every instance
	target.ID += ":" + label
	s.Record(r, acct, switchboard.AuditTokenRevoke, target, err)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, ownerapi.TokenRevoked{Revoked: true, Label: label})
}
