package ownerhttp

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// checkFront checks the front fields of an agent request for an agent
// that is (or becomes) in mode; was is the agent before a PATCH, nil for
// a POST. An agent in front mode needs an upstream; the fields mean
// nothing in another mode.
func (s *Face) checkFront(mode switchboard.DeliveryMode, b *ownerapi.AgentRequest, was *switchboard.Agent) error {
	if mode != switchboard.ModeFront {
		if b.Upstream != nil || b.UpstreamCardURL != nil || b.Record != nil {
			return switchboard.Errorf(switchboard.EINVALID, "upstream and record are set only for agents in front mode")
		}
		return nil
	}
	return s.fronts.check(b, was)
}

// putFront keeps the upstream and the record of a request checked by
// checkFront.
func (s *Face) putFront(r *http.Request, g *switchboard.Agent, b *ownerapi.AgentRequest) error {
	return s.fronts.put(r.Context(), g.ID, b)
}

// frontAgent is the owned agent of the path, which must be in front mode,
// with the service that runs it.
func (s *Face) frontAgent(r *http.Request, acct *switchboard.Account) (*switchboard.Agent, *front.Service, error) {
	g, err := s.OwnedAgent(r, acct)
	if err != nil {
		return nil, nil, err
	}
	fronts, err := s.fronts.of(g)
	if err != nil {
		return nil, nil, err
	}
	return g, fronts, nil
}

func (s *Face) handleSetUpstreamCredentials(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, fronts, err := s.frontAgent(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	var b ownerapi.FrontCredentials
	if err := s.DecodeJSON(w, r, &b); err != nil {
		s.WriteError(w, r, err)
		return
	}
	c := switchboard.FrontCredentials{Bearer: b.Bearer, Headers: b.Headers}
	err = fronts.SetCredentials(r.Context(), g.ID, c)
	t := audit.Agent(g)
	set := credentialsSet(c)
	t.Detail = fmt.Sprintf("bearer %t, headers [%s]", set.Bearer, strings.Join(set.Headers, ", ")) // names, never values
	s.Record(r, acct, switchboard.AuditFrontCredentials, t, err)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, credentialsSet(c))
}

// credentialsSet says which credentials are kept, without their values.
func credentialsSet(c switchboard.FrontCredentials) ownerapi.FrontCredentialsSet {
	out := ownerapi.FrontCredentialsSet{Bearer: c.Bearer != "", Headers: []string{}}
	for k := range c.Headers {
		out.Headers = append(out.Headers, k)
	}
	slices.Sort(out.Headers)
	return out
}

func (s *Face) handleFrontVerify(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, fronts, err := s.frontAgent(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	v, err := fronts.Verify(r.Context(), g.ID)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	out := ownerapi.FrontVerification{OK: v.OK, Reason: v.Reason, Status: v.Status, RPCErrorCode: v.RPCErrorCode, Detail: v.Detail, Method: v.Method, Binding: v.Binding}
	out.Sent.Bearer, out.Sent.Headers = v.Sent.Bearer, append([]string{}, v.Sent.Headers...)
	slices.Sort(out.Sent.Headers)
	httpapi.WriteJSON(w, http.StatusOK, out)
}

// frontRecord is what f records of its tasks, "task" for a front set up
// before it could say.
func frontRecord(f *switchboard.Front) string {
	if f.Record == "" {
		return switchboard.FrontRecordTask
	}
	return f.Record
}
