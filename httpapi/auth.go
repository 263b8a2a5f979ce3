package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/switchboard-dev/switchboard"
)

// bearerToken returns the token of an "Authorization: Bearer <token>"
// header (the scheme is case-insensitive), or "".
func bearerToken(r *http.Request) string {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// findToken returns the active token of the given kind that the request
// presents. A token of another kind is treated exactly like no token.
func (s *Server) findToken(ctx context.Context, r *http.Request, kind switchboard.TokenKind) (*switchboard.Token, error) {
	secret := bearerToken(r)
	if secret == "" {
		return nil, switchboard.Errorf(switchboard.EUNAUTHORIZED, "send Authorization: Bearer <token>")
	}
	tok, err := s.Tokens.FindTokenByHash(ctx, switchboard.HashToken(secret))
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND || (err == nil && tok.Kind != kind) {
		return nil, switchboard.Errorf(switchboard.EUNAUTHORIZED, "the bearer token is not valid (revoked, rotated or mistyped)")
	}
	return tok, err
}

// ownerHandler is an owner-API handler, called with the authenticated account.
type ownerHandler func(w http.ResponseWriter, r *http.Request, acct *switchboard.Account)

// owner wraps h so that it runs only for a request with a valid owner token
// of an enabled account.
func (s *Server) owner(h ownerHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		acct, err := s.authenticateOwner(r)
		if err != nil {
			if switchboard.ErrorCode(err) == switchboard.EUNAUTHORIZED {
				w.Header().Set("WWW-Authenticate", `Bearer realm="switchboard"`)
			}
			s.writeError(w, r, err)
			return
		}
		h(w, r, acct)
	}
}

// operator wraps h so that it runs only for the operator account.
func (s *Server) operator(h ownerHandler) http.HandlerFunc {
	return s.owner(func(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
		if !acct.IsOperator() {
			s.writeError(w, r, switchboard.Errorf(switchboard.EFORBIDDEN, "only the operator may %s", operatorAct(r)))
			return
		}
		h(w, r, acct)
	})
}

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

func (s *Server) authenticateOwner(r *http.Request) (*switchboard.Account, error) {
	tok, err := s.findToken(r.Context(), r, switchboard.TokenOwner)
	if err != nil {
		return nil, err
	}
	acct, err := s.Accounts.FindAccountByID(r.Context(), tok.AccountID)
	if err != nil {
		return nil, err
	}
	if acct.Disabled {
		return nil, switchboard.Errorf(switchboard.EFORBIDDEN, "account %q is disabled", acct.Name)
	}
	MarkAuthenticated(r)
	return acct, nil
}
