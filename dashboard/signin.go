package dashboard

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
	"github.com/switchboard-dev/switchboard/clientaddr"
)

const (
	// signInCookie holds the secret of the owner's sign-in over plain
	// http. Path=/ so that every page of the server (pairing, consent)
	// sees it.
	signInCookie = "switchboard_signin"
	// secureSignInCookie holds it over https: a browser keeps a __Host-
	// cookie only when it is Secure, for Path=/ and without Domain, so
	// neither a page over plain http nor a sibling host can set or shadow
	// it (Console.signInCookieName).
	secureSignInCookie = "__Host-" + signInCookie
	// formCookie holds the CSRF token of the sign-in form (double submit:
	// there is no sign-in yet to keep it in).
	formCookie = "switchboard_form"
	// touchEvery is how stale a sign-in's last use may be before a request
	// writes it again: one write a minute, not one a request.
	touchEvery = time.Minute
)

// viewer is the signed-in owner of a request.
type viewer struct {
	account *switchboard.Account
	signIn  *switchboard.SignIn
}

// signedInHandler is a handler for signed-in owners.
type signedInHandler func(w http.ResponseWriter, r *http.Request, v *viewer)

// signedIn wraps h so that it runs only for a signed-in owner; others get
// the sign-in form (401).
func (c *Console) signedIn(h signedInHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := c.viewerOf(r)
		if err != nil {
			c.Logger.Error("read the sign-in", "err", err)
			c.renderError(w, r, http.StatusInternalServerError, "Something went wrong; try again.")
			return
		}
		if v == nil {
			c.renderSignIn(w, r, http.StatusUnauthorized, "")
			return
		}
		h(w, r, v)
	}
}

// viewerOf returns the request's signed-in owner, or nil: no cookie (of
// the name for the request's scheme), a sign-in unknown, idle too long or
// older than its lifetime, its owner token no longer active, or its
// account disabled.
func (c *Console) viewerOf(r *http.Request) (*viewer, error) {
	ck, err := r.Cookie(c.signInCookieName(r))
	if err != nil || ck.Value == "" {
		return nil, nil
	}
	ctx := r.Context()
	now := c.cfg.Now()
	in, err := c.SignIns.FindSignIn(ctx, switchboard.HashToken(ck.Value), now.Add(-c.cfg.IdleTimeout), now.Add(-c.cfg.Lifetime))
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	acct, err := c.ownerAccount(ctx, in.TokenHash)
	if err != nil || acct == nil || acct.ID != in.AccountID {
		return nil, err
	}
	if now.Sub(in.SeenAt) > touchEvery {
		if err := c.SignIns.TouchSignIn(ctx, in.Hash, now); err != nil {
			c.Logger.Warn("record the use of a sign-in", "err", err)
		}
	}
	if c.OnAuthenticated != nil {
		c.OnAuthenticated(r)
	}
	return &viewer{account: acct, signIn: in}, nil
}

// ownerAccount returns the enabled account of the active owner token with
// the hash, or nil when there is none.
func (c *Console) ownerAccount(ctx context.Context, tokenHash string) (*switchboard.Account, error) {
	tok, err := c.Tokens.FindTokenByHash(ctx, tokenHash)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND || (err == nil && tok.Kind != switchboard.TokenOwner) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	acct, err := c.Accounts.FindAccountByID(ctx, tok.AccountID)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if acct.Disabled {
		return nil, nil
	}
	return acct, nil
}

// handleLogin signs an owner in: 303 to /dashboard with the sign-in's
// cookie, or 401 with the form again. Attempts are counted per client
// address; the token is never logged.
func (c *Console) handleLogin(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	ok, retry, _ := c.Limiter.Allow(ctx, "dashboard-signin/"+c.clientKey(r))
	if !ok {
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int(retry.Seconds()+0.5))))
		c.renderSignIn(w, r, http.StatusTooManyRequests, "Too many attempts from your address; wait a minute and try again.")
		return
	}
	form, _ := r.Cookie(formCookie)
	want := ""
	if form != nil {
		want = form.Value
	}
	if !c.checkPost(w, r, want) {
		return
	}
	acct, err := c.ownerAccount(ctx, switchboard.HashToken(r.PostFormValue("token")))
	if err != nil {
		c.Logger.Error("sign in", "err", err)
		c.renderError(w, r, http.StatusInternalServerError, "Something went wrong; try again.")
		return
	}
	if acct == nil || r.PostFormValue("token") == "" {
		// Refused: by whom is unknown, and the token offered is never kept.
		c.record(r, nil, switchboard.AuditSignIn, audit.Target{Kind: audit.KindAccount},
			switchboard.Errorf(switchboard.EUNAUTHORIZED, "not an active owner token of an enabled account"))
		c.renderSignIn(w, r, http.StatusUnauthorized, "That is not an active owner token of an enabled account.")
		return
	}
	secret, now := randomToken(), c.cfg.Now().UTC()
	in := &switchboard.SignIn{Hash: switchboard.HashToken(secret), AccountID: acct.ID,
		TokenHash: switchboard.HashToken(r.PostFormValue("token")), CSRF: randomToken(), CreatedAt: now, SeenAt: now}
	if _, err := c.SignIns.DeleteSignIns(ctx, now.Add(-c.cfg.IdleTimeout), now.Add(-c.cfg.Lifetime)); err != nil {
		c.Logger.Warn("forget idle and old sign-ins", "err", err)
	}
	if err := c.SignIns.CreateSignIn(ctx, in); err != nil {
		c.Logger.Error("store a sign-in", "err", err)
		c.renderError(w, r, http.StatusInternalServerError, "Something went wrong; try again.")
		return
	}
	c.Logger.Info("signed in to the console", "account_id", acct.ID)
	c.record(r, acct, switchboard.AuditSignIn, audit.Account(acct), nil)
	http.SetCookie(w, &http.Cookie{Name: c.signInCookieName(r), Value: secret, Path: "/", MaxAge: int(c.cfg.Lifetime / time.Second),
		HttpOnly: true, Secure: c.secure(r), SameSite: http.SameSiteStrictMode})
	http.SetCookie(w, &http.Cookie{Name: formCookie, Path: "/dashboard", MaxAge: -1, HttpOnly: true,
		Secure: c.secure(r), SameSite: http.SameSiteStrictMode})
	to := "/dashboard"
	if next := nextOf(r); next != "" {
		to = next
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// nextOf returns where a sign-in returns to: the next parameter (query or
// form) when it is a path of this server's authorization endpoint, else
// "".
func nextOf(r *http.Request) string {
	next := r.URL.Query().Get("next")
	if r.Method == http.MethodPost {
		next = r.PostFormValue("next")
	}
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") {
		return ""
	}
	path, _, _ := strings.Cut(next, "?")
	if !IsAuthorizePath(path) {
		return ""
	}
	return next
}

// handleLogout ends the sign-in and clears its cookie.
func (c *Console) handleLogout(w http.ResponseWriter, r *http.Request, v *viewer) {
	if !c.checkPost(w, r, v.signIn.CSRF) {
		return
	}
	if err := c.SignIns.DeleteSignIn(r.Context(), v.signIn.Hash); err != nil {
		c.Logger.Error("end a sign-in", "err", err)
		c.renderError(w, r, http.StatusInternalServerError, "Something went wrong; try again.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: c.signInCookieName(r), Path: "/", MaxAge: -1, HttpOnly: true,
		Secure: c.secure(r), SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/dashboard", http.StatusSeeOther)
}

// renderSignIn writes the sign-in form with its CSRF cookie.
func (c *Console) renderSignIn(w http.ResponseWriter, r *http.Request, status int, problem string) {
	if c.reloadCrossSite(w, r) {
		return // the owner may be signed in: the reload tells
	}
	token := ""
	if ck, err := r.Cookie(formCookie); err == nil && len(ck.Value) >= 32 {
		token = ck.Value
	} else {
		token = randomToken()
		http.SetCookie(w, &http.Cookie{Name: formCookie, Value: token, Path: "/dashboard", HttpOnly: true,
			Secure: c.secure(r), SameSite: http.SameSiteStrictMode})
	}
	c.render(w, status, "signin", page{Title: "Sign in", CSRF: token, Problem: problem, Next: nextOf(r)})
}

// clientKey returns what per-address limits count a request under: the
// address of the connection's peer, or of the client a trusted proxy
// forwarded for (Config.TrustedProxies), an IPv6 one's /64
// (clientaddr.Key).
func (c *Console) clientKey(r *http.Request) string { return clientaddr.Key(c.clients.Addr(r)) }
