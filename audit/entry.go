package audit

import (
	"errors"

	"github.com/switchboard-dev/switchboard"
)

// Target is what an action was done to, and the account it belongs to.
type Target struct {
	// AccountID is the account whose owner may read the entry (empty: the
	// operator's only).
	AccountID string
	// Kind and ID name the target ("agent", its handle).
	Kind, ID string
	// Detail says more, without secrets.
	Detail string
}

// Target kinds.
const (
	KindAccount   = "account"
	KindAgent     = "agent"
	KindToken     = "token"
	KindCommunity = "community"
	KindPairing   = "pairing"
	KindGrant     = "mcp_grant"
	KindClient    = "mcp_client"
	KindKey       = "secret_key"
)

// Agent returns the target of an agent, by its handle, of its account.
func Agent(g *switchboard.Agent) Target {
	return Target{AccountID: g.AccountID, Kind: KindAgent, ID: g.Handle}
}

// Account returns the target of an account, by its id, the account's own.
func Account(a *switchboard.Account) Target {
	return Target{AccountID: a.ID, Kind: KindAccount, ID: a.ID, Detail: "name " + a.Name}
}

// Token returns the target of a token of kind with label ("peer:ci"),
// belonging to accountID, with what it opens in the detail ("agent bob").
// It names the token; it never holds its value.
func Token(accountID string, kind switchboard.TokenKind, label, opens string) Target {
	id := string(kind)
	if label != "" {
		id += ":" + label
	}
	return Target{AccountID: accountID, Kind: KindToken, ID: id, Detail: opens}
}

// Actor returns the actor kind and id of an account: the operator or an
// owner, by its id.
func Actor(a *switchboard.Account) (switchboard.AuditActorKind, string) {
	if a == nil {
		return switchboard.AuditAnonymous, ""
	}
	if a.IsOperator() {
		return switchboard.AuditOperator, a.ID
	}
	return switchboard.AuditOwner, a.ID
}

// Entry returns the entry of action by the account acct (nil: anonymous)
// on t, from the client address addr, its outcome read from err
// (Outcome); the outcome's detail comes after t's.
func Entry(acct *switchboard.Account, addr string, action switchboard.AuditAction, t Target, err error) switchboard.AuditEntry {
	kind, id := Actor(acct)
	e := switchboard.AuditEntry{ActorKind: kind, ActorID: id, Action: action, ClientAddr: addr,
		AccountID: t.AccountID, TargetKind: t.Kind, TargetID: t.ID, Detail: t.Detail}
	var why string
	e.Outcome, why = Outcome(err)
	if why != "" {
		if e.Detail != "" {
			e.Detail += "; "
		}
		e.Detail += why
	}
	return e
}

// Outcome reads an action's error: nil is AuditOK; an error of no right or
// no valid credential (EUNAUTHORIZED, EFORBIDDEN) is AuditDenied; any
// other is AuditFailed. The detail is the error's code, and the message of
// a switchboard.Error (written for the caller, so free of secrets); an
// internal error's text is not kept.
func Outcome(err error) (switchboard.AuditOutcome, string) {
	if err == nil {
		return switchboard.AuditOK, ""
	}
	code := switchboard.ErrorCode(err)
	outcome := switchboard.AuditFailed
	if code == switchboard.EUNAUTHORIZED || code == switchboard.EFORBIDDEN {
		outcome = switchboard.AuditDenied
	}
	var e *switchboard.Error
	if errors.As(err, &e) {
		return outcome, string(code) + ": " + e.Message
	}
	return outcome, string(code)
}
