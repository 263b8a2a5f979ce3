package dashboard

import (
	"net/http"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
)

// accountsBody is the operator's accounts page.
type accountsBody struct {
	Accounts []accountRow
	// NewToken is an owner token just made (an account created or its
	// token rotated), shown this once; NewTokenFor names the account.
	NewToken, NewTokenFor string
	CSRF                  string
}

// accountRow is one account.
type accountRow struct {
	ID, Name, Role, Created string
	Disabled, Operator      bool
	Self                    bool // the signed-in operator's own account
}

// handleAccounts lists every account (AccountStore.FindAccounts, as GET
// /accounts does).
func (c *Console) handleAccounts(w http.ResponseWriter, r *http.Request, v *viewer) {
	c.renderAccounts(w, r, v, http.StatusOK, "", "", "")
}

// renderAccounts writes the accounts page, with a problem or an owner
// token just made.
func (c *Console) renderAccounts(w http.ResponseWriter, r *http.Request, v *viewer, status int, problem, newFor, newToken string) {
	all, err := c.Accounts.FindAccounts(r.Context())
	if err != nil {
		c.internalError(w, r, "list accounts", err)
		return
	}
	body := &accountsBody{NewToken: newToken, NewTokenFor: newFor, CSRF: v.signIn.CSRF}
	for _, a := range all {
		body.Accounts = append(body.Accounts, accountRow{ID: a.ID, Name: a.Name, Role: string(a.Role), Created: formatTime(a.CreatedAt),
			Disabled: a.Disabled, Operator: a.IsOperator(), Self: a.ID == v.account.ID})
	}
	c.render(w, status, "accounts", page{Title: "Accounts", CSRF: v.signIn.CSRF, Account: v.account.Name, Operator: true,
		Problem: problem, Body: body})
}

// handleCreateAccount creates an owner account (accounts.Service.Create,
// as POST /accounts does) and shows its owner token this once.
func (c *Console) handleCreateAccount(w http.ResponseWriter, r *http.Request, v *viewer) {
	if !c.checkPost(w, r, v.signIn.CSRF) {
		return
	}
	acct, secret, err := c.owners.Create(r.Context(), r.PostFormValue("name"))
	target := audit.Target{Kind: audit.KindAccount, Detail: "name " + r.PostFormValue("name")}
	if err == nil {
		target = audit.Account(acct)
	}
	c.record(r, v.account, switchboard.AuditAccountCreate, target, err)
	if problem, ok := userError(err); ok {
		c.renderAccounts(w, r, v, http.StatusUnprocessableEntity, problem, "", "")
		return
	} else if err != nil {
		c.internalError(w, r, "create an account", err)
		return
	}
	c.renderAccounts(w, r, v, http.StatusCreated, "", acct.Name, secret)
}

// handleDisableAccount disables an account (accounts.Service.Update, as
// PATCH /accounts/{id} {"disabled": true} does: its agents are
// disconnected, its sign-ins end).
func (c *Console) handleDisableAccount(w http.ResponseWriter, r *http.Request, v *viewer) {
	c.setDisabled(w, r, v, true)
}

// handleEnableAccount enables an account again.
func (c *Console) handleEnableAccount(w http.ResponseWriter, r *http.Request, v *viewer) {
	c.setDisabled(w, r, v, false)
}

func (c *Console) setDisabled(w http.ResponseWriter, r *http.Request, v *viewer, disabled bool) {
	if !c.checkPost(w, r, v.signIn.CSRF) {
		return
	}
	_, err := c.owners.Update(r.Context(), v.account, r.PathValue("id"), switchboard.AccountUpdate{Disabled: &disabled})
	action := switchboard.AuditAccountEnable
	if disabled {
		action = switchboard.AuditAccountDisable
	}
	c.record(r, v.account, action, audit.Target{AccountID: r.PathValue("id"), Kind: audit.KindAccount, ID: r.PathValue("id")}, err)
	if problem, ok := userError(err); ok {
		c.renderAccounts(w, r, v, http.StatusUnprocessableEntity, problem, "", "")
		return
	} else if err != nil {
		c.internalError(w, r, "change an account", err)
		return
	}
	http.Redirect(w, r, "/dashboard/accounts", http.StatusSeeOther)
}

// handleRotateAccountToken gives an account a new owner token
// (accounts.Service.RotateOwnerToken, as POST /accounts/{id}/rotate does:
// the old one and the sign-ins opened with it end) and shows it this once.
func (c *Console) handleRotateAccountToken(w http.ResponseWriter, r *http.Request, v *viewer) {
	if !c.checkPost(w, r, v.signIn.CSRF) {
		return
	}
	acct, err := c.Accounts.FindAccountByID(r.Context(), r.PathValue("id"))
	if problem, ok := userError(err); ok {
		c.renderAccounts(w, r, v, http.StatusNotFound, problem, "", "")
		return
	} else if err != nil {
		c.internalError(w, r, "find an account", err)
		return
	}
	secret, err := c.owners.RotateOwnerToken(r.Context(), acct.ID)
	c.record(r, v.account, switchboard.AuditTokenRotate, audit.Token(acct.ID, switchboard.TokenOwner, "", "account "+acct.ID), err)
	if err != nil {
		c.internalError(w, r, "rotate an owner token", err)
		return
	}
	c.renderAccounts(w, r, v, http.StatusOK, "", acct.Name, secret)
}
