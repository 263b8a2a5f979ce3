package httpapi

import (
	"net/http"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

func (s *Server) handleIssueToken(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, err := s.ownedAgent(r, acct)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var body ownerapi.TokenIssue
	if err := s.decodeJSON(w, r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	if !switchboard.ValidLabel(body.Label) {
		s.writeError(w, r, switchboard.Errorf(switchboard.EINVALID, "label must be 1-%d characters of A-Z a-z 0-9 _ -", switchboard.MaxLabelLen))
		return
	}
	secret, hash := switchboard.NewToken(switchboard.TokenPeer)
	tok := &switchboard.Token{Hash: hash, Kind: switchboard.TokenPeer, AgentID: g.ID, Label: body.Label}
	if err := s.Tokens.CreateToken(r.Context(), tok, body.Rotate); err != nil {
		if switchboard.ErrorCode(err) == switchboard.ECONFLICT {
			err = switchboard.Errorf(switchboard.ECONFLICT, "an active token labelled %q exists; revoke it or pass \"rotate\": true", body.Label)
		}
		s.writeError(w, r, err)
		return
	}
	if body.Rotate {
		s.notify(r, switchboard.TokensSubject(g.ID)) // the old token's streams end
	}
	v := s.viewAgent(r, g)
	writeJSON(w, http.StatusCreated, ownerapi.Token{
		Label: tok.Label, Token: secret, Active: true, CreatedAt: tok.CreatedAt,
		Address: v.Address, AgentCard: v.AgentCard,
	})
}

func (s *Server) handleListTokens(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, err := s.ownedAgent(r, acct)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	kind := switchboard.TokenPeer
	f := switchboard.TokenFilter{Kind: &kind, AgentID: &g.ID, Active: r.URL.Query().Get("all") == ""}
	toks, err := s.Tokens.FindTokens(r.Context(), f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]ownerapi.Token, 0, len(toks))
	for _, t := range toks {
		out = append(out, ownerapi.Token{Label: t.Label, Active: t.RevokedAt == nil, CreatedAt: t.CreatedAt, RevokedAt: t.RevokedAt})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleRevokeToken(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, err := s.ownedAgent(r, acct)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	kind, label := switchboard.TokenPeer, r.PathValue("label")
	n, err := s.Tokens.RevokeTokens(r.Context(), switchboard.TokenFilter{Kind: &kind, AgentID: &g.ID, Label: &label})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if n == 0 {
		s.writeError(w, r, switchboard.Errorf(switchboard.ENOTFOUND, "no active token labelled %q", truncate(label, 64)))
		return
	}
	s.notify(r, switchboard.TokensSubject(g.ID)) // its streams end, on every instance
	writeJSON(w, http.StatusOK, ownerapi.TokenRevoked{Revoked: true, Label: label})
}
