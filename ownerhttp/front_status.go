package ownerhttp

import (
	"encoding/json"
	"net/http"

	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/httpapi"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

func (s *Face) handleFrontStatus(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, fronts, err := s.frontAgent(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	addr := s.ReachedAddress(r, g)
	up, cs, _, err := fronts.Card(r.Context(), g.ID, addr)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	f, err := fronts.Find(r.Context(), g.ID) // as stored now: the last failure
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	set := credentialsSet(f.Credentials)
	out := ownerapi.FrontStatus{
		Mode: string(switchboard.ModeFront), Upstream: f.Upstream, UpstreamCardURL: f.CardURL, UpstreamValid: true,
		Card: "missing", UpstreamVersions: []string{}, UpstreamAuth: ownerapi.UpstreamAuth{Schemes: []string{}, Unsupported: []string{}},
		HasBearer: set.Bearer, CredentialHeaders: set.Headers, PublicCardLeaks: []string{},
		Record: frontRecord(f), GivesUp: []string{},
	}
	if f.PassThrough() {
		out.GivesUp = append(out.GivesUp, front.PassThroughGivesUp...)
	}
	if err := fronts.Check(f.Upstream, f.CardURL); err != nil {
		out.UpstreamValid, out.UpstreamProblem = false, switchboard.ErrorMessage(err)
	}
	out.Card, out.CardProblem = cs.State, cs.Err
	if !cs.FetchedAt.IsZero() {
		at := cs.FetchedAt.UTC()
		out.CardFetchedAt = &at
	}
	scrubber := front.NewScrubber(addr, f.Upstream, f.CardURL).WithSecrets(front.CredentialSecrets(f.Credentials))
	if up != nil && (cs.State == front.CardOK || cs.State == front.CardStale) {
		out.UpstreamVersions, out.UpstreamStreaming = append(out.UpstreamVersions, up.Versions...), up.Streaming
		out.UpstreamBinding = up.Binding
		out.UpstreamAuth.Bearer = up.Auth.Bearer
		out.UpstreamAuth.Schemes = append(out.UpstreamAuth.Schemes, up.Auth.Schemes...)
		out.UpstreamAuth.Unsupported = append(out.UpstreamAuth.Unsupported, up.Auth.Unsupported...)
		scrubber = up.Scrubber()
	} else {
		up = nil
	}
	// The leak check runs over the card as peers get it; and names the
	// credentials the upstream's card held (it reflects what it is sent),
	// which peers never get.
	if raw, err := json.Marshal(s.PublicCard(g, addr, s.ReachedBase(r, g), up)); err == nil {
		out.PublicCardLeaks = append(out.PublicCardLeaks, front.Leaks(raw, scrubber)...)
	}
	if up != nil {
		for _, name := range up.Reflected {
			out.PublicCardLeaks = append(out.PublicCardLeaks, front.CredentialLeak(name)+" (in the upstream's card; removed from the public card)")
		}
	}
	if lf := f.LastFailure; lf != nil {
		out.LastFailure = &ownerapi.FrontFailure{At: lf.At, Reason: lf.Reason, Status: lf.Status, Method: lf.Method, Peer: lf.Peer, Detail: lf.Detail}
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}
