package accounts

import (
	"context"

	"github.com/switchboard-dev/switchboard"
)

// Create stores a new owner account with the name and gives it an owner
// token, returned once (only its hash is kept). It returns EINVALID for an
// empty or too long name and ECONFLICT when the name is taken.
func (s *Service) Create(ctx context.Context, name string) (*switchboard.Account, string, error) {
	n, err := validName(name, "name is required (at most %d characters)")
	if err != nil {
		return nil, "", err
	}
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: n, Role: switchboard.RoleOwner}
	if err := s.accounts.CreateAccount(ctx, acct); err != nil {
		return nil, "", err
	}
	secret, err := s.RotateOwnerToken(ctx, acct.ID)
	if err != nil {
		return nil, "", err
	}
	s.notify(ctx, switchboard.AccountsSubject) // the operator's open consoles watch its agents
	return acct, secret, nil
}

// Update renames, disables or enables the account with the id, on behalf
// of the operator op. The operator's own account cannot be disabled
// (EINVALID). When Disabled changes, the account's agents' connections
// and streams, on every instance, reread it: a disabled account's agents
// are disconnected at once.
func (s *Service) Update(ctx context.Context, op *switchboard.Account, id string, upd switchboard.AccountUpdate) (*switchboard.Account, error) {
	if id == op.ID && upd.Disabled != nil && *upd.Disabled {
		return nil, switchboard.Errorf(switchboard.EINVALID, "the operator account cannot be disabled")
	}
	if upd.Name != nil {
		n, err := validName(*upd.Name, "name must be 1-%d characters")
		if err != nil {
			return nil, err
		}
		upd.Name = &n
	}
	acct, err := s.accounts.UpdateAccount(ctx, id, upd)
	if err != nil {
		return nil, err
	}
	if upd.Disabled != nil {
		if agents, err := s.agents.FindAgents(ctx, switchboard.AgentFilter{AccountID: &acct.ID}); err == nil {
			for _, g := range agents {
				s.notify(ctx, switchboard.AgentChangeSubject(g.ID))
				s.notify(ctx, switchboard.TokensSubject(g.ID))
			}
		} else {
			s.log.Warn("list the agents of a changed account", "account_id", acct.ID, "err", err)
		}
		s.notify(ctx, switchboard.AccountAgentsSubject(acct.ID))
	}
	return acct, nil
}

// RotateOwnerToken gives the account a new owner token, revoking its old
// one (and the console's sign-ins opened with it), and returns it once.
func (s *Service) RotateOwnerToken(ctx context.Context, accountID string) (string, error) {
	secret, hash := switchboard.NewToken(switchboard.TokenOwner)
	err := s.tokens.CreateToken(ctx, &switchboard.Token{Hash: hash, Kind: switchboard.TokenOwner, AccountID: accountID}, true)
	if err != nil {
		return "", err
	}
	return secret, nil
}
