package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/dashboard"
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
// that is HttpOnly, SameSite=Strict, Path=/, lasts the sign-in's lifetime
// (7 days) and, over http, is named switchboard_signin and not Secure;
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
	if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/" || ck.Secure ||
		ck.MaxAge != int(dashboard.DefaultLifetime/time.Second) {
		t.Fatalf("cookie %+v: want HttpOnly, SameSite=Strict, Path=/, Max-Age 7 days, not Secure over http", ck)
	}
	if ck.Value == token || strings.Contains(ck.Value, token) {
		t.Fatal("the cookie holds the owner token")
	}
	in, err := h.db.FindSignIn(context.Background(), switchboard.HashToken(ck.Value), time.Time{}, time.Time{})
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

// The sign-in cookie's names: over http, and over https.
const (
	httpCookie  = "switchboard_signin"
	httpsCookie = "__Host-switchboard_signin"
)

// signInCookie returns the http sign-in cookie the answer sets.
func signInCookie(t *testing.T, res *http.Response) *http.Cookie {
	t.Helper()
	return cookieNamed(t, res, httpCookie)
}

// cookieNamed returns the cookie the answer sets with the name, and fails
// the test when it sets none, or sets another sign-in cookie beside it.
func cookieNamed(t *testing.T, res *http.Response, name string) *http.Cookie {
	t.Helper()
	var found *http.Cookie
	for _, ck := range res.Cookies() {
		switch ck.Name {
		case name:
			found = ck
		case httpCookie, httpsCookie:
			t.Fatalf("the answer sets %s beside %s: %v", ck.Name, name, res.Header["Set-Cookie"])
		}
	}
	if found == nil {
		t.Fatalf("no %s cookie in %v", name, res.Header["Set-Cookie"])
	}
	return found
}

// getWithCookie fetches a console path with only the named cookie.
func (h *harness) getWithCookie(path, name, value string) (*http.Response, string) {
	h.t.Helper()
	req, _ := http.NewRequest("GET", h.srv.URL+path, nil)
	req.AddCookie(&http.Cookie{Name: name, Value: value})
	res, err := h.srv.Client().Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	return res, readBody(h.t, res)
}

// TestSignInCookieOverHTTPS: when the console is reached over https (an
// https public URL, or a request that came over TLS although the public
// URL says http), the sign-in cookie is __Host-switchboard_signin: Secure,
// Path=/, no Domain, HttpOnly, SameSite=Strict, 7 days; it signs in, the
// http name with the same secret does not, and sign-out clears it. Over
// http the __Host- name does not sign in.
func TestSignInCookieOverHTTPS(t *testing.T) {
	for name, opts := range map[string][]harnessOption{
		"https public URL":                 {withBase("https://console.example")},
		"TLS, public URL http":             {withTLS(), withBase("http://console.example")},
		"TLS, public URL from the request": {withTLS()},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, opts...)
			_, token := h.account("alice", switchboard.RoleOwner)
			c := h.client()
			_, form := c.get("/dashboard")
			// A browser's form under no-referrer: Origin null, same-origin.
			sameOrigin := map[string]string{"Origin": "null", "Sec-Fetch-Site": "same-origin"}
			res, body := c.postWith(sameOrigin, "/dashboard/login", url.Values{"csrf": {csrf(t, form)}, "token": {token}})
			if res.StatusCode != http.StatusSeeOther {
				t.Fatalf("sign in: %s\n%s", res.Status, body)
			}
			ck := cookieNamed(t, res, httpsCookie)
			if !ck.Secure || ck.Path != "/" || ck.Domain != "" || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode ||
				ck.MaxAge != int(dashboard.DefaultLifetime/time.Second) {
				t.Fatalf("cookie %+v: want Secure, Path=/, no Domain, HttpOnly, SameSite=Strict, Max-Age 7 days", ck)
			}
			if _, page := h.getWithCookie("/dashboard", httpsCookie, ck.Value); !strings.Contains(page, "Sign out") {
				t.Fatalf("the %s cookie does not sign in:\n%s", httpsCookie, page)
			}
			if _, page := h.getWithCookie("/dashboard", httpCookie, ck.Value); strings.Contains(page, "Sign out") {
				t.Fatalf("over https, the %s cookie signs in", httpCookie)
			}
			if !h.tls {
				return // the jar keeps Secure cookies for https
			}
			_, page := c.get("/dashboard") // the jar sends the Secure cookie over https
			if !strings.Contains(page, "Sign out") {
				t.Fatalf("the browser's cookie does not sign in:\n%s", page)
			}
			res, _ = c.postWith(sameOrigin, "/dashboard/logout", url.Values{"csrf": {csrf(t, page)}})
			if res.StatusCode != http.StatusSeeOther {
				t.Fatalf("sign out: %s", res.Status)
			}
			if ck := cookieNamed(t, res, httpsCookie); ck.MaxAge >= 0 || !ck.Secure {
				t.Fatalf("sign-out's cookie %+v", ck)
			}
		})
	}
	h := newHarness(t)
	_, token := h.account("alice", switchboard.RoleOwner)
	c := h.client()
	c.signIn(token)
	u, _ := url.Parse(h.srv.URL)
	var secret string
	for _, ck := range c.hc.Jar.Cookies(u) {
		if ck.Name == httpCookie {
			secret = ck.Value
		}
	}
	if _, page := h.getWithCookie("/dashboard", httpsCookie, secret); secret == "" || strings.Contains(page, "Sign out") {
		t.Fatalf("over http, the %s cookie signs in (or there was no sign-in)", httpsCookie)
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
	if n, err := h.db.DeleteSignIns(context.Background(), time.Now().Add(time.Hour), time.Time{}); err != nil || n != 0 {
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
	// A page, not the event stream: a stream still signed in would not end.
	if res, page := c.get("/dashboard/agents/none"); res.StatusCode != http.StatusUnauthorized || !strings.Contains(page, `name="token"`) {
		t.Fatalf("after 12 hours idle: %s", res.Status)
	}
}

// TestSignInLifetime: a sign-in used every few hours still ends 7 days
// after it began; the store refuses it although the browser still sends
// the cookie, and the next sign-in forgets it. A shorter configured
// lifetime ends it sooner.
func TestSignInLifetime(t *testing.T) {
	h := newHarness(t)
	_, token := h.account("alice", switchboard.RoleOwner)
	c := h.client()
	c.signIn(token)
	u, _ := url.Parse(h.srv.URL)
	secret := ""
	for _, ck := range c.hc.Jar.Cookies(u) {
		if ck.Name == httpCookie {
			secret = ck.Value
		}
	}
	for used := time.Duration(0); used < dashboard.DefaultLifetime-11*time.Hour; used += 11 * time.Hour {
		h.advance(11 * time.Hour)
		if _, page := c.get("/dashboard"); !strings.Contains(page, "Sign out") {
			t.Fatalf("signed out %s after the sign-in, in use", used+11*time.Hour)
		}
	}
	h.advance(11 * time.Hour) // 7 days and 1 hour
	if res, page := c.get("/dashboard/agents/none"); res.StatusCode != http.StatusUnauthorized || !strings.Contains(page, `name="token"`) {
		t.Fatalf("7 days after the sign-in, in use: %s", res.Status)
	}
	if _, page := h.getWithCookie("/dashboard", httpCookie, secret); strings.Contains(page, "Sign out") {
		t.Fatal("the cookie still signs in after 7 days")
	}
	h.client().signIn(token)
	if _, err := h.db.FindSignIn(context.Background(), switchboard.HashToken(secret), time.Time{}, time.Time{}); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("the old sign-in is still stored after the next sign-in: %v", err)
	}

	short := newHarness(t, withLifetime(time.Hour))
	_, token = short.account("bob", switchboard.RoleOwner)
	c = short.client()
	c.signIn(token)
	short.advance(59 * time.Minute)
	if _, page := c.get("/dashboard"); !strings.Contains(page, "Sign out") {
		t.Fatal("signed out within the configured lifetime")
	}
	short.advance(2 * time.Minute)
	if _, page := c.get("/dashboard"); strings.Contains(page, "Sign out") {
		t.Fatal("still signed in past the configured lifetime")
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

// TestSignInNeedsItsOwnToken: a stored sign-in whose owner token is
// another account's signs no one in (a row the console never writes, but
// the check does not trust the store's rows to agree).
func TestSignInNeedsItsOwnToken(t *testing.T) {
	h := newHarness(t)
	alice, _ := h.account("alice", switchboard.RoleOwner)
	_, bobToken := h.account("bob", switchboard.RoleOwner)
	now := h.clock().UTC()
	secret := strings.Repeat("s", 43)
	if err := h.db.CreateSignIn(context.Background(), &switchboard.SignIn{Hash: switchboard.HashToken(secret), AccountID: alice.ID,
		TokenHash: switchboard.HashToken(bobToken), CSRF: "csrf", CreatedAt: now, SeenAt: now}); err != nil {
		t.Fatal(err)
	}
	if _, page := h.getWithCookie("/dashboard", httpCookie, secret); strings.Contains(page, "Sign out") {
		t.Fatal("a sign-in of alice's holding bob's owner token signs in")
	}
}

// TestSignInNextStaysHere: the sign-in returns to next only when it is a
// path of this server's authorization endpoint, whole; anything else
// (another host, a scheme, a backslash, a line break, a console page)
// returns to /dashboard.
func TestSignInNextStaysHere(t *testing.T) {
	h := newHarness(t, withLimit(1000))
	_, token := h.account("alice", switchboard.RoleOwner)
	for next, want := range map[string]string{
		"/a/helper/oauth/authorize?client_id=x":  "/a/helper/oauth/authorize?client_id=x",
		"/oauth/authorize?state=s":               "/oauth/authorize?state=s",
		"//evil.example/oauth/authorize":         "/dashboard",
		"https://evil.example/oauth/authorize":   "/dashboard",
		"/\\evil.example/oauth/authorize":        "/dashboard",
		"/a/x\\y/oauth/authorize":                "/dashboard",
		"/oauth/authorize?a=\r\nSet-Cookie: x=y": "/dashboard",
		"/dashboard/agents/helper":               "/dashboard",
		"/a/helper/oauth/authorize/more":         "/dashboard",
	} {
		c := h.client()
		_, form := c.get("/dashboard?next=" + url.QueryEscape(next))
		res, body := c.post("/dashboard/login", url.Values{"csrf": {csrf(t, form)}, "token": {token}, "next": {next}})
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != want {
			t.Errorf("next %q: %s to %q, want %q\n%s", next, res.Status, res.Header.Get("Location"), want, body)
		}
	}
}

func ptr[T any](v T) *T { return &v }
