// Package accounts holds the owner's and the operator's changes to
// accounts and to the credentials and lifetime of their agents: creating,
// renaming, disabling and enabling an account, rotating an owner token,
// rotating an agent token and deleting an agent. The owner API (httpapi)
// and the web console (dashboard) both call this Service, so the two
// faces keep one set of rules and tell the same subscribers on the bus.
//
// Who may do what (the operator alone manages accounts; an owner only its
// own agents) is checked by the callers, which find the account or the
// agent the request names first.
package accounts
