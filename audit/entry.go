package audit

import (
	"errors"

	"github.com/switchboard-dev/switchboard"
)

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

// By returns an entry of action by the account acct, from the client
// address addr, its outcome and detail read from err (Outcome).
func By(acct *switchboard.Account, addr string, action switchboard.AuditAction, err error) switchboard.AuditEntry {
	kind, id := Actor(acct)
	outcome, detail := Outcome(err)
	return switchboard.AuditEntry{ActorKind: kind, ActorID: id, Action: action, ClientAddr: addr, Outcome: outcome, Detail: detail}
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
