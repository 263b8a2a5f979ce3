package ownerhttp

import (
	"net/http"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/ownerapi"
	"github.com/switchboard-dev/switchboard/pairing"
)

// viewPairing is a pairing request as the owner API shows it.
func viewPairing(p *switchboard.Pairing) ownerapi.Pairing {
	return ownerapi.Pairing{
		UserCode: pairing.FormatUserCode(p.UserCode), ClientName: p.ClientName, ClientID: p.ClientID,
		AgentCardURL: p.CardURL, Requester: p.Requester, ReplacesLabel: p.ReplacesLabel, Status: string(p.Status),
		Label: p.Label, DecidedBy: p.DecidedBy, CreatedAt: p.CreatedAt, ExpiresAt: p.ExpiresAt,
	}
}

// handleListPairings serves GET /agents/{ref}/pairings: the requests
// waiting for a decision (none while pairing is off), to those who may
// decide them (decider).
func (s *Face) handleListPairings(w http.ResponseWriter, r *http.Request) {
	g, _, err := s.decider(r)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	list, err := s.pairings.Pending(r.Context(), g)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	out := []ownerapi.Pairing{}
	for _, p := range list {
		out = append(out, viewPairing(p))
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

// decider authenticates a decision (or the list of requests) on the agent named by {ref}: its
// owner's token, or, when the agent's pairing mode is agent, the agent's
// own token. It returns the agent and who decides.
func (s *Face) decider(r *http.Request) (*switchboard.Agent, string, error) {
	acct, self, err := s.AuthenticateOwnerOrAgent(r)
	if err != nil {
		return nil, "", err
	}
	if acct != nil {
		g, err := s.OwnedAgent(r, acct)
		return g, pairing.ByOwner, err
	}
	g, err := s.OwnedAgent(r, &switchboard.Account{ID: self.AccountID})
	if err != nil || g.ID != self.ID {
		return nil, "", switchboard.Errorf(switchboard.ENOTFOUND, "agent not found")
	}
	if httpapi.PairingMode(g) != switchboard.PairingAgent {
		return nil, "", switchboard.Errorf(switchboard.EFORBIDDEN, "the agent's pairing mode is %s: only its owner decides", httpapi.PairingMode(g))
	}
	return g, pairing.ByAgent, nil
}

// handleApprovePairing serves POST /agents/{ref}/pairings/{code}/approve.
func (s *Face) handleApprovePairing(w http.ResponseWriter, r *http.Request) {
	s.decidePairing(w, r, true)
}

// handleDenyPairing serves POST /agents/{ref}/pairings/{code}/deny.
func (s *Face) handleDenyPairing(w http.ResponseWriter, r *http.Request) {
	s.decidePairing(w, r, false)
}

func (s *Face) decidePairing(w http.ResponseWriter, r *http.Request, approve bool) {
	acct, _, _ := s.AuthenticateOwnerOrAgent(r) // the decider, for the audit log: an owner, or the agent itself
	g, by, err := s.decider(r)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	var body ownerapi.PairingDecision
	if approve && r.ContentLength != 0 {
		if err := s.DecodeJSON(w, r, &body); err != nil {
			s.WriteError(w, r, err)
			return
		}
	}
	var p *switchboard.Pairing
	if approve {
		p, err = s.Pairing.Approve(r.Context(), g, r.PathValue("code"), body.Label, by)
	} else {
		p, err = s.Pairing.Deny(r.Context(), g, r.PathValue("code"), by)
	}
	s.recordPairing(r, acct, g, approve, p, err)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, viewPairing(p))
}

// recordPairing records a decision on a pairing request of g: by its
// owner's account acct, or (acct nil) by the agent itself; p is the
// request decided, nil on failure.
func (s *Face) recordPairing(r *http.Request, acct *switchboard.Account, g *switchboard.Agent, approve bool,
	p *switchboard.Pairing, err error) {
	action := switchboard.AuditPairingApprove
	if !approve {
		action = switchboard.AuditPairingDeny
	}
	t := audit.Target{AccountID: g.AccountID, Kind: audit.KindPairing, ID: auditUserCode(r.PathValue("code")), Detail: "agent " + g.Handle}
	if p != nil && p.Label != "" {
		t.Detail += ", peer token " + p.Label
	}
	e := audit.Entry(acct, s.Clients.Addr(r), action, t, err)
	if acct == nil {
		e.ActorKind, e.ActorID = switchboard.AuditAgent, g.Handle
	}
	s.Audit.Record(r.Context(), e)
}

// auditUserCode is a user code as the audit log names it: as the page
// shows it (ABCD-EFGH), or as typed if it is no code.
func auditUserCode(s string) string {
	if c, ok := pairing.NormalizeUserCode(s); ok {
		return pairing.FormatUserCode(c)
	}
	return s
}
