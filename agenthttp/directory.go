package agenthttp

import (
	"net/http"
	"strconv"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/network"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// handleDirectory lists the agents the caller can see: with an agent
// token, the other members of its communities; with an owner token, the
// members of its agents' communities (the operator: of every community).
// ?community=C narrows to one of them, ?skill=S to the agents offering S,
// ?live=true to those live now; ?after=HANDLE and ?limit=N page.
func (s *Face) handleDirectory(w http.ResponseWriter, r *http.Request) {
	acct, agent, err := s.AuthenticateOwnerOrAgent(r)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	q, err := directoryQuery(r)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	ms, err := s.Network.Directory(r.Context(), network.Viewer{Agent: agent, Account: acct}, q)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	out := ownerapi.Directory{Agents: make([]ownerapi.DirectoryEntry, 0, len(ms))}
	for _, m := range ms {
		addr := s.AddressURL(r, m.Agent)
		comms := m.Communities
		if comms == nil {
			comms = []string{}
		}
		out.Agents = append(out.Agents, ownerapi.DirectoryEntry{
			Handle: m.Agent.Handle, Name: m.Agent.Name, Description: m.Agent.Description, Skills: httpapi.NonNilSkills(m.Agent.Skills),
			Communities: comms, Address: addr + "/", CardURL: addr + "/.well-known/agent-card.json",
			Live: m.Reach == switchboard.ReachLive, Wakeable: m.Wakeable, AcceptsTasks: m.Agent.AcceptsTasks, Approved: m.Agent.Approved,
		})
	}
	if len(ms) == q.Limit {
		out.NextAfter = ms[len(ms)-1].Agent.Handle
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

// directoryQuery reads the query string of GET /directory.
func directoryQuery(r *http.Request) (network.DirectoryQuery, error) {
	v := r.URL.Query()
	q := network.DirectoryQuery{Community: v.Get("community"), Skill: v.Get("skill"), After: v.Get("after"),
		Limit: network.DefaultDirectoryLimit}
	if len(q.Skill) > switchboard.MaxRefLen || len(q.After) > switchboard.MaxHandleLen {
		return q, switchboard.Errorf(switchboard.EINVALID, "skill or after is too long")
	}
	if s := v.Get("live"); s != "" {
		live, err := strconv.ParseBool(s)
		if err != nil {
			return q, switchboard.Errorf(switchboard.EINVALID, "live must be true or false")
		}
		q.OnlyLive = live
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > network.MaxDirectoryLimit {
			return q, switchboard.Errorf(switchboard.EINVALID, "limit must be between 1 and %d", network.MaxDirectoryLimit)
		}
		q.Limit = n
	}
	return q, nil
}
