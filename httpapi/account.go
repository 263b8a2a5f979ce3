package httpapi

import (
	"net/http"
	"strings"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// viewAccount is an account as the owner API shows it, without a token.
func viewAccount(a *switchboard.Account) ownerapi.Account {
	return ownerapi.Account{ID: a.ID, Name: a.Name, Role: string(a.Role), Disabled: a.Disabled, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
}

func (s *Server) handleWhoami(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	writeJSON(w, http.StatusOK, viewAccount(acct))
}

func (s *Server) handleCreateAccount(w http.ResponseWriter, r *http.Request, _ *switchboard.Account) {
	var body ownerapi.AccountCreate
	if err := s.decodeJSON(w, r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	name := strings.TrimSpace(body.Name)
	if name == "" || len(name) > switchboard.MaxNameLen {
		s.writeError(w, r, switchboard.Errorf(switchboard.EINVALID, "name is required (at most %d characters)", switchboard.MaxNameLen))
		return
	}
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: name, Role: switchboard.RoleOwner}
	if err := s.Accounts.CreateAccount(r.Context(), acct); err != nil {
		s.writeError(w, r, err)
		return
	}
	secret, err := s.issueOwnerToken(r, acct.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	v := viewAccount(acct)
	v.Token = secret
	writeJSON(w, http.StatusCreated, v)
}

// issueOwnerToken gives an account a new owner token, revoking its old one.
func (s *Server) issueOwnerToken(r *http.Request, accountID string) (string, error) {
	secret, hash := switchboard.NewToken(switchboard.TokenOwner)
	err := s.Tokens.CreateToken(r.Context(), &switchboard.Token{Hash: hash, Kind: switchboard.TokenOwner, AccountID: accountID}, true)
	return secret, err
}

func (s *Server) handleListAccounts(w http.ResponseWriter, r *http.Request, _ *switchboard.Account) {
	all, err := s.Accounts.FindAccounts(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]ownerapi.Account, 0, len(all))
	for _, a := range all {
		out = append(out, viewAccount(a))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleGetAccount(w http.ResponseWriter, r *http.Request, _ *switchboard.Account) {
	acct, err := s.Accounts.FindAccountByID(r.Context(), r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewAccount(acct))
}

func (s *Server) handleUpdateAccount(w http.ResponseWriter, r *http.Request, op *switchboard.Account) {
	var body ownerapi.AccountUpdate
	if err := s.decodeJSON(w, r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	id := r.PathValue("id")
	if id == op.ID && body.Disabled != nil && *body.Disabled {
		s.writeError(w, r, switchboard.Errorf(switchboard.EINVALID, "the operator account cannot be disabled"))
		return
	}
	if body.Name != nil {
		n := strings.TrimSpace(*body.Name)
		if n == "" || len(n) > switchboard.MaxNameLen {
			s.writeError(w, r, switchboard.Errorf(switchboard.EINVALID, "name must be 1-%d characters", switchboard.MaxNameLen))
			return
		}
		body.Name = &n
	}
	acct, err := s.Accounts.UpdateAccount(r.Context(), id, switchboard.AccountUpdate{Name: body.Name, Disabled: body.Disabled})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if body.Disabled != nil {
		// The account's agents' connections reread it: a disabled account's
		// agents are disconnected at once.
		if agents, err := s.Agents.FindAgents(r.Context(), switchboard.AgentFilter{AccountID: &acct.ID}); err == nil {
			for _, g := range agents {
				s.notify(r, switchboard.AgentChangeSubject(g.ID))
				s.notify(r, switchboard.TokensSubject(g.ID))
			}
		}
	}
	writeJSON(w, http.StatusOK, viewAccount(acct))
}

func (s *Server) handleRotateAccountToken(w http.ResponseWriter, r *http.Request, _ *switchboard.Account) {
	acct, err := s.Accounts.FindAccountByID(r.Context(), r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.rotate(w, r, acct)
}

func (s *Server) handleRotateOwnToken(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	s.rotate(w, r, acct)
}

func (s *Server) rotate(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	secret, err := s.issueOwnerToken(r, acct.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	v := viewAccount(acct)
	v.Token = secret
	writeJSON(w, http.StatusOK, v)
}
