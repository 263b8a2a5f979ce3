package httpapi

import (
	"net/http"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

func (s *Server) handleFrontStatus(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, err := s.frontAgent(r, acct)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	f, err := s.Fronts.Find(r.Context(), g.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	set := credentialsSet(f.Credentials)
	out := ownerapi.FrontStatus{
		Mode: string(switchboard.ModeFront), Upstream: f.Upstream, UpstreamCardURL: f.CardURL, UpstreamValid: true,
		Card: "missing", UpstreamVersions: []string{}, UpstreamAuth: ownerapi.UpstreamAuth{Schemes: []string{}, Unsupported: []string{}},
		HasBearer: set.Bearer, CredentialHeaders: set.Headers, PublicCardLeaks: []string{},
	}
	if err := s.Fronts.Check(f.Upstream, f.CardURL); err != nil {
		out.UpstreamValid, out.UpstreamProblem = false, switchboard.ErrorMessage(err)
	}
	if lf := f.LastFailure; lf != nil {
		out.LastFailure = &ownerapi.FrontFailure{At: lf.At, Reason: lf.Reason, Status: lf.Status, Method: lf.Method, Peer: lf.Peer, Detail: lf.Detail}
	}
	writeJSON(w, http.StatusOK, out)
}
