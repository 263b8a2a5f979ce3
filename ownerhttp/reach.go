package ownerhttp

import (
	"net/http"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// handleReachability answers GET /agents/{ref}/reachability: how the
// world reaches each public address of the agent (package reach), for its
// owner or the operator. Without a checker, or without an https public
// URL on a domain name, there is no address to check: an empty list.
func (s *Face) handleReachability(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, err := s.OwnedAgent(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	out := ownerapi.AgentReachability{Agent: g.Handle, Addresses: []ownerapi.Reachability{}}
	out.Addresses = append(out.Addresses, s.reach.CheckAll(r.Context(), s.reach.AgentTargets(g))...)
	httpapi.WriteJSON(w, http.StatusOK, out)
}
