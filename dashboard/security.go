package dashboard

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"
)

// contentSecurityPolicy allows the console's own stylesheet, script and
// fetches, and nothing else: no inline script or style, no framing, forms
// to this origin only.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// setSecurityHeaders sets the headers every answer of the console carries.
func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// randomToken returns 256 random bits, base64url.
func randomToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// sameOrigin reports whether the request comes from the console's own
// pages: its Origin is the console's (the scheme and host of its base
// URL), and a Sec-Fetch-Site header, which browsers send and scripts
// cannot set, if any, says same-origin. Under the no-referrer policy
// browsers send "Origin: null" for a form's POST; then Sec-Fetch-Site:
// same-origin is required instead. A POST with neither is refused.
func (c *Console) sameOrigin(r *http.Request) bool {
	site := r.Header.Get("Sec-Fetch-Site")
	if site != "" && site != "same-origin" {
		return false
	}
	switch origin := r.Header.Get("Origin"); origin {
	case "":
		return false
	case "null":
		return site == "same-origin"
	default:
		return strings.EqualFold(origin, originOf(c.BaseURL(r)))
	}
}

// originOf returns the scheme://host of a URL.
func originOf(base string) string {
	scheme, rest, ok := strings.Cut(base, "://")
	if !ok {
		return ""
	}
	host, _, _ := strings.Cut(rest, "/")
	return scheme + "://" + host
}

// secure reports whether the console is reached over https, which makes
// its cookies Secure: the request came over TLS, or the base URL (the
// public URL, or what a trusted proxy's X-Forwarded-Proto said) is https.
func (c *Console) secure(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(strings.ToLower(c.BaseURL(r)), "https://")
}

// signInCookieName returns the name of the sign-in cookie for the
// request's scheme: __Host- prefixed over https, plain over http (where a
// browser would refuse a __Host- cookie, which must be Secure). Each
// scheme reads only its own name.
func (c *Console) signInCookieName(r *http.Request) string {
	if c.secure(r) {
		return secureSignInCookie
	}
	return signInCookie
}

// validCSRF reports whether the form's csrf field equals want (in
// constant time).
func validCSRF(r *http.Request, want string) bool {
	got := r.PostFormValue("csrf")
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// checkPost refuses a POST whose Origin is not the console's or whose CSRF
// token is not want, with 403; it reports whether the request may go on.
func (c *Console) checkPost(w http.ResponseWriter, r *http.Request, want string) bool {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if !c.sameOrigin(r) {
		c.renderError(w, r, http.StatusForbidden, "This form was sent from another site, or without its origin.")
		return false
	}
	if !validCSRF(r, want) {
		c.renderError(w, r, http.StatusForbidden, "This form has expired. Go back, reload the page and try again.")
		return false
	}
	return true
}

// pageCSRF returns the CSRF token of a page outside the console's session
// (the /device and consent pages): the cookie name's, or a new one set
// for the page's path.
func (c *Console) pageCSRF(w http.ResponseWriter, r *http.Request, name string) string {
	if ck, err := r.Cookie(name); err == nil && len(ck.Value) == 43 {
		return ck.Value
	}
	token := randomToken()
	http.SetCookie(w, &http.Cookie{Name: name, Value: token, Path: r.URL.Path, MaxAge: 3600, HttpOnly: true,
		Secure: c.secure(r), SameSite: http.SameSiteStrictMode})
	return token
}

// writeStandalonePage writes a page outside the console's session (the
// /device and consent pages) with its Content-Security-Policy and the
// headers every such page carries: no framing, no sniffing, no referrer,
// no caching, its own browsing context.
func writeStandalonePage(w http.ResponseWriter, status int, policy string, page []byte) {
	h := w.Header()
	h.Set("Content-Security-Policy", policy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(page)
}
