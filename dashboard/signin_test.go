package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// TestSignInForm: without a sign-in, /dashboard is the form with one
// field named token, and every answer carries the security headers.
func TestSignInForm(t *testing.T) {
	h := newHarness(t)
	res, page := h.client().get("/dashboard")
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `name="token"`) {
		t.Fatalf("GET /dashboard: %s\n%s", res.Status, page)
	}
	checkSecurityHeaders(t, res)
	res, _ = h.client().get("/dashboard/no-such-page")
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown page: %s", res.Status)
	}
	checkSecurityHeaders(t, res)
}

func checkSecurityHeaders(t *testing.T, res *http.Response) {
	t.Helper()
	csp := res.Header.Get("Content-Security-Policy")
	for _, want := range []string{"script-src 'self'", "frame-ancestors 'none'", "form-action 'self'", "default-src 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("Content-Security-Policy %q allows inline script", csp)
	}
	if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options %q", got)
	}
	if got := res.Header.Get("Referrer-Policy"); got != "no-referrer" {
		t.Errorf("Referrer-Policy %q", got)
	}
}

// TestSignIn: a valid owner token answers 303 to /dashboard with a cookie
// that is HttpOnly, SameSite=Strict, Path=/ and (over http) not Secure;
// the store keeps the cookie's hash, never the cookie or the token.
func TestSignIn(t *testing.T) {
	h := newHarness(t)
	acct, token := h.account("alice", switchboard.RoleOwner)
	c := h.client()
	_, form := c.get("/dashboard")
	res, body := c.post("/dashboard/login", url.Values{"csrf": {csrf(t, form)}, "token": {token}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard" {
		t.Fatalf("sign in: %s\n%s", res.Status, body)
	}
	checkSecurityHeaders(t, res)
	ck := signInCookie(t, res)
	if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/" || ck.Secure {
		t.Fatalf("cookie %+v: want HttpOnly, SameSite=Strict, Path=/, not Secure over http", ck)
	}
	if ck.Value == token || strings.Contains(ck.Value, token) {
		t.Fatal("the cookie holds the owner token")
	}
	in, err := h.db.FindSignIn(context.Background(), switchboard.HashToken(ck.Value), time.Time{})
	if err != nil || in.AccountID != acct.ID {
		t.Fatalf("stored sign-in: %+v %v", in, err)
	}
	_, page := c.get("/dashboard")
	if !strings.Contains(page, "Sign out") || !strings.Contains(page, "alice") || strings.Contains(page, token) {
		t.Fatalf("agents page after sign-in:\n%s", page)
	}
	if strings.Contains(h.log.String(), token) {
		t.Fatal("the owner token was logged")
	}
}

func signInCookie(t *testing.T, res *http.Response) *http.Cookie {
	t.Helper()
	for _, ck := range res.Cookies() {
		if ck.Name == "switchboard_signin" {
			return ck
		}
	}
	t.Fatalf("no sign-in cookie in %v", res.Header["Set-Cookie"])
	return nil
}

// TestSignInSecureCookie: behind an https public URL the cookie is Secure.
func TestSignInSecureCookie(t *testing.T) {
	h := newHarness(t, withBase("https://console.example"))
	_, token := h.account("alice", switchboard.RoleOwner)
	c := h.client()
	_, form := c.get("/dashboard")
	res, body := c.post("/dashboard/login", url.Values{"csrf": {csrf(t, form)}, "token": {token}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in: %s\n%s", res.Status, body)
	}
	if ck := signInCookie(t, res); !ck.Secure {
		t.Fatalf("cookie %+v is not Secure behind https", ck)
	}
}

// TestSignInWrongToken: 401 with the form again, the token not echoed;
// an agent's or a peer's token is no owner token.
func TestSignInWrongToken(t *testing.T) {
	h := newHarness(t)
	acct, _ := h.account("alice", switchboard.RoleOwner)
	peer, hash := switchboard.NewToken(switchboard.TokenPeer)
	g := h.agent(acct, "helper", "Helper", "")
	if err := h.db.CreateToken(context.Background(), &switchboard.Token{Hash: hash, Kind: switchboard.TokenPeer,
		AccountID: acct.ID, AgentID: g.ID, Label: "bob"}, false); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"sbo_not-a-token", peer, ""} {
		c := h.client()
		_, form := c.get("/dashboard")
		res, page := c.post("/dashboard/login", url.Values{"csrf": {csrf(t, form)}, "token": {bad}})
		if res.StatusCode != http.StatusUnauthorized || !strings.Contains(page, `name="token"`) {
			t.Fatalf("token %q: %s\n%s", bad, res.Status, page)
		}
		if bad != "" && strings.Contains(page, bad) {
			t.Fatalf("the page shows the token %q", bad)
		}
	}
}

// TestSignInRateLimited: past the limit per address, 429 with Retry-After.
func TestSignInRateLimited(t *testing.T) {
	h := newHarness(t, withLimit(3))
	c := h.client()
	_, form := c.get("/dashboard")
	for i := range 4 {
		res, _ := c.post("/dashboard/login", url.Values{"csrf": {csrf(t, form)}, "token": {"sbo_wrong"}})
		want := http.StatusUnauthorized
		if i == 3 {
			want = http.StatusTooManyRequests
		}
		if res.StatusCode != want {
			t.Fatalf("attempt %d: %s, want %d", i+1, res.Status, want)
		}
		if want == http.StatusTooManyRequests && res.Header.Get("Retry-After") == "" {
			t.Fatal("429 without Retry-After")
		}
	}
}

// TestSignOut: the sign-in ends in the store and its cookie no longer
// signs in; sign-out itself needs the CSRF token.
func TestSignOut(t *testing.T) {
	h := newHarness(t)
	_, token := h.account("alice", switchboard.RoleOwner)
	c := h.client()
	page := c.signIn(token)
	if res, _ := c.post("/dashboard/logout", url.Values{"csrf": {"forged"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("sign-out with a forged CSRF token: %s", res.Status)
	}
	res, _ := c.post("/dashboard/logout", url.Values{"csrf": {csrf(t, page)}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out: %s", res.Status)
	}
	if ck := signInCookie(t, res); ck.MaxAge >= 0 {
		t.Fatalf("sign-out left the cookie: %+v", ck)
	}
	if n, err := h.db.DeleteSignIns(context.Background(), time.Now().Add(time.Hour)); err != nil || n != 0 {
		t.Fatalf("sign-ins left after sign-out: %d %v", n, err)
	}
	if _, page := c.get("/dashboard"); !strings.Contains(page, `name="token"`) {
		t.Fatalf("after sign-out:\n%s", page)
	}
}

// TestSignInIdleExpiry: 12 hours unused end a sign-in; use keeps it.
func TestSignInIdleExpiry(t *testing.T) {
	h := newHarness(t)
	_, token := h.account("alice", switchboard.RoleOwner)
	c := h.client()
	c.signIn(token)
	h.advance(11 * time.Hour)
	if _, page := c.get("/dashboard"); !strings.Contains(page, "Sign out") {
		t.Fatal("signed out after 11 hours")
	}
	h.advance(11 * time.Hour) // 11 hours after the last use
	if _, page := c.get("/dashboard"); !strings.Contains(page, "Sign out") {
		t.Fatal("signed out 11 hours after the last use")
	}
	h.advance(12*time.Hour + time.Minute)
	if res, page := c.get("/dashboard/events"); res.StatusCode != http.StatusUnauthorized || !strings.Contains(page, `name="token"`) {
		t.Fatalf("after 12 hours idle: %s", res.Status)
	}
}

// TestSignInEndsWithItsToken: a rotated owner token, or a disabled
// account, ends the sign-ins made with it.
func TestSignInEndsWithItsToken(t *testing.T) {
	h := newHarness(t)
	acct, token := h.account("alice", switchboard.RoleOwner)
	c := h.client()
	c.signIn(token)
	kind := switchboard.TokenOwner
	if _, err := h.db.RevokeTokens(context.Background(), switchboard.TokenFilter{Kind: &kind, AccountID: &acct.ID}); err != nil {
		t.Fatal(err)
	}
	if _, page := c.get("/dashboard"); !strings.Contains(page, `name="token"`) {
		t.Fatal("still signed in after the owner token was revoked")
	}

	acct2, token2 := h.account("bob", switchboard.RoleOwner)
	c2 := h.client()
	c2.signIn(token2)
	if _, err := h.db.UpdateAccount(context.Background(), acct2.ID, switchboard.AccountUpdate{Disabled: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	if _, page := c2.get("/dashboard"); !strings.Contains(page, `name="token"`) {
		t.Fatal("still signed in after the account was disabled")
	}
}

func ptr[T any](v T) *T { return &v }
