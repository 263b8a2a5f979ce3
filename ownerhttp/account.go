package ownerhttp

import (
	"net/http"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// viewAccount is an account as the owner API shows it, without a token.
func viewAccount(a *switchboard.Account) ownerapi.Account {
	return ownerapi.Account{ID: a.ID, Name: a.Name, Role: string(a.Role), Disabled: a.Disabled, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
}

func (s *Face) handleWhoami(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	httpapi.WriteJSON(w, http.StatusOK, viewAccount(acct))
}

func (s *Face) handleCreateAccount(w http.ResponseWriter, r *http.Request, op *switchboard.Account) {
	var body ownerapi.AccountCreate
	if err := s.DecodeJSON(w, r, &body); err != nil {
		s.WriteError(w, r, err)
		return
	}
	acct, secret, err := s.owners.Create(r.Context(), body.Name)
	target := audit.Target{Kind: audit.KindAccount, Detail: "name " + body.Name}
	if err == nil {
		target = audit.Account(acct)
	}
	s.Record(r, op, switchboard.AuditAccountCreate, target, err)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	v := viewAccount(acct)
	v.Token = secret
	httpapi.WriteJSON(w, http.StatusCreated, v)
}

func (s *Face) handleListAccounts(w http.ResponseWriter, r *http.Request, _ *switchboard.Account) {
	all, err := s.Accounts.FindAccounts(r.Context())
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	out := make([]ownerapi.Account, 0, len(all))
	for _, a := range all {
		out = append(out, viewAccount(a))
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

func (s *Face) handleGetAccount(w http.ResponseWriter, r *http.Request, _ *switchboard.Account) {
	acct, err := s.Accounts.FindAccountByID(r.Context(), r.PathValue("id"))
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, viewAccount(acct))
}

func (s *Face) handleUpdateAccount(w http.ResponseWriter, r *http.Request, op *switchboard.Account) {
	var body ownerapi.AccountUpdate
	if err := s.DecodeJSON(w, r, &body); err != nil {
		s.WriteError(w, r, err)
		return
	}
	acct, err := s.owners.Update(r.Context(), op, r.PathValue("id"), switchboard.AccountUpdate{Name: body.Name, Disabled: body.Disabled})
	s.recordAccountUpdate(r, op, r.PathValue("id"), body, err)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, viewAccount(acct))
}

func (s *Face) handleRotateAccountToken(w http.ResponseWriter, r *http.Request, op *switchboard.Account) {
	acct, err := s.Accounts.FindAccountByID(r.Context(), r.PathValue("id"))
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	s.rotate(w, r, op, acct)
}

func (s *Face) handleRotateOwnToken(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	s.rotate(w, r, acct, acct)
}

// rotate gives acct a new owner token, by actor, and records it.
func (s *Face) rotate(w http.ResponseWriter, r *http.Request, actor, acct *switchboard.Account) {
	secret, err := s.owners.RotateOwnerToken(r.Context(), acct.ID)
	s.Record(r, actor, switchboard.AuditTokenRotate, audit.Token(acct.ID, switchboard.TokenOwner, "", "account "+acct.ID), err)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	v := viewAccount(acct)
	v.Token = secret
	httpapi.WriteJSON(w, http.StatusOK, v)
}

// recordAccountUpdate records a change of the account id by op: its
// disabling or enabling, its renaming, each an entry.
func (s *Face) recordAccountUpdate(r *http.Request, op *switchboard.Account, id string, body ownerapi.AccountUpdate, err error) {
	target := audit.Target{AccountID: id, Kind: audit.KindAccount, ID: id}
	if body.Disabled != nil {
		action := switchboard.AuditAccountEnable
		if *body.Disabled {
			action = switchboard.AuditAccountDisable
		}
		s.Record(r, op, action, target, err)
	}
	if body.Name != nil {
		t := target
		t.Detail = "name " + *body.Name
		s.Record(r, op, switchboard.AuditAccountRename, t, err)
	}
}
