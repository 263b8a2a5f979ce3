package httpapi

import (
	"net/http"
	"strings"

	"github.com/switchboard-dev/switchboard"
)

// BearerToken returns the token of an "Authorization: Bearer <token>"
// header (the scheme is case-insensitive), or "".
func BearerToken(r *http.Request) string {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// OwnerHandler is an owner-API handler, called with the authenticated account.
type OwnerHandler func(w http.ResponseWriter, r *http.Request, acct *switchboard.Account)

// operatorAct names what an operator route does, for its refusal.
func operatorAct(r *http.Request) string {
	switch {
	case strings.HasPrefix(r.URL.Path, "/agents/"):
		return "approve agents"
	case strings.HasPrefix(r.URL.Path, "/communities/"):
		return "configure communities"
	}
	return "manage accounts"
}
