package pairing

import (
	"context"
	"strconv"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// Who decided a request.
const (
	ByOwner = "owner" // the owner API or the CLI
	ByAgent = "agent" // the agent's own token, in agent mode
	ByPage  = "page"  // the /device page
)

// Pending returns the agent's requests waiting for a decision, oldest
// first; none when pairing is off.
func (s *Service) Pending(ctx context.Context, agent *switchboard.Agent) ([]*switchboard.Pairing, error) {
	if !Enabled(agent) {
		return nil, nil
	}
	pending, now := switchboard.PairingPending, s.cfg.Now().UTC()
	return s.Store.FindPairings(ctx, switchboard.PairingFilter{AgentID: agent.ID, Status: &pending, LiveAt: &now})
}

// Find returns the agent's request with the user code (as typed), or
// ENOTFOUND, also when pairing is off or the code is malformed.
func (s *Service) Find(ctx context.Context, agent *switchboard.Agent, userCode string) (*switchboard.Pairing, error) {
	code, ok := NormalizeUserCode(userCode)
	if !ok || !Enabled(agent) {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "no pairing request with that code")
	}
	return s.Store.FindPairingByUserCode(ctx, agent.ID, code)
}

// Now returns the Service's clock reading, for pages that show time left.
func (s *Service) Now() time.Time { return s.cfg.Now().UTC() }

// Approve approves the agent's pending request with the user code. The
// token gets label if it is not empty (EINVALID if it is not a valid
// label); otherwise the label the request replaces, for a re-pairing, or
// one derived from the client's name that no token of the agent ever had
// and no approved request holds. ENOTFOUND when there is no such request
// (or pairing is off); ECONFLICT when it was decided or expired.
func (s *Service) Approve(ctx context.Context, agent *switchboard.Agent, userCode, label, decidedBy string) (*switchboard.Pairing, error) {
	p, err := s.Find(ctx, agent, userCode)
	if err != nil {
		return nil, err
	}
	if label != "" && !switchboard.ValidLabel(label) {
		return nil, switchboard.Errorf(switchboard.EINVALID, "label must be 1-%d characters of A-Z a-z 0-9 _ -", switchboard.MaxLabelLen)
	}
	if label == "" && p.ReplacesLabel != "" {
		label = p.ReplacesLabel
	}
	if label == "" {
		if label, err = s.freeLabel(ctx, agent, LabelBase(p.ClientName, p.ClientID)); err != nil {
			return nil, err
		}
	}
	d, err := s.Store.DecidePairing(ctx, agent.ID, p.UserCode, switchboard.PairingApproved, label, decidedBy, s.cfg.Now().UTC())
	if err == nil {
		s.Logger.Info("pairing approved", "agent_id", agent.ID, "user_code", p.UserCode, "label", label, "by", decidedBy)
	}
	return d, err
}

// Deny denies the agent's pending request with the user code; errors as
// Approve.
func (s *Service) Deny(ctx context.Context, agent *switchboard.Agent, userCode, decidedBy string) (*switchboard.Pairing, error) {
	p, err := s.Find(ctx, agent, userCode)
	if err != nil {
		return nil, err
	}
	d, err := s.Store.DecidePairing(ctx, agent.ID, p.UserCode, switchboard.PairingDenied, "", decidedBy, s.cfg.Now().UTC())
	if err == nil {
		s.Logger.Info("pairing denied", "agent_id", agent.ID, "user_code", p.UserCode, "by", decidedBy)
	}
	return d, err
}

// freeLabel returns base, or base-2, base-3, …: the first that no token of
// the agent has had (a revoked label is not reused) and no approved
// request holds.
func (s *Service) freeLabel(ctx context.Context, agent *switchboard.Agent, base string) (string, error) {
	kind := switchboard.TokenPeer
	toks, err := s.Tokens.FindTokens(ctx, switchboard.TokenFilter{Kind: &kind, AgentID: &agent.ID})
	if err != nil {
		return "", err
	}
	approved := switchboard.PairingApproved
	held, err := s.Store.FindPairings(ctx, switchboard.PairingFilter{AgentID: agent.ID, Status: &approved})
	if err != nil {
		return "", err
	}
	taken := make(map[string]bool, len(toks)+len(held))
	for _, t := range toks {
		taken[t.Label] = true
	}
	for _, p := range held {
		taken[p.Label] = true
	}
	label := base
	for n := 2; taken[label]; n++ {
		suffix := "-" + strconv.Itoa(n)
		label = base[:min(len(base), switchboard.MaxLabelLen-len(suffix))] + suffix
	}
	return label, nil
}
