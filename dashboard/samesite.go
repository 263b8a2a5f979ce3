package dashboard

import (
	"html/template"
	"net/http"
)

// The sign-in cookie is SameSite=Strict, so a browser leaves it out of a
// navigation that another site started: a link in a chat to a /device
// page, an MCP client's web page sending the owner to the consent page.
// The owner, although signed in, would be asked to sign in again. Such a
// navigation (Sec-Fetch-Site: cross-site, without the cookie) gets instead
// a page that loads the same address again by itself (a meta refresh, no
// script): that load starts from this origin, so the browser sends the
// cookie. Only a GET is reloaded, once: the reload is same-origin.

// reloadPage is the page that loads its own address again.
var reloadPage = template.Must(template.New("reload").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="refresh" content="0">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="/dashboard/static/icon.svg" type="image/svg+xml">
<title>Switchboard</title></head>
<body><p>Opening <a href="{{.}}">this page</a>…</p></body></html>
`))

// reloadCrossSite answers a GET that another site's page navigated to
// without the sign-in cookie with reloadPage, and reports whether it did;
// the caller then stops.
func (c *Console) reloadCrossSite(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet || r.Header.Get("Sec-Fetch-Site") != "cross-site" ||
		r.Header.Get("Sec-Fetch-Mode") != "navigate" {
		return false
	}
	if ck, err := r.Cookie(c.signInCookieName(r)); err == nil && ck.Value != "" {
		return false
	}
	h := w.Header()
	setSecurityHeaders(h)
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	if err := reloadPage.Execute(w, r.URL.RequestURI()); err != nil {
		c.Logger.Warn("write the reload page", "err", err)
	}
	return true
}
