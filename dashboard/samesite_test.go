package dashboard

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestReloadCrossSite: only a GET navigation from another site without the
// sign-in cookie gets the page that reloads itself, with the console's
// headers; the reload (same-origin), a request with the cookie, a POST and
// a fetch go on. Over TLS the cookie that counts is the __Host- one.
func TestReloadCrossSite(t *testing.T) {
	c := &Console{Deps: Deps{BaseURL: func(*http.Request) string { return "http://127.0.0.1" }}}
	for _, tc := range []struct {
		name, method, site, mode string
		cookie                   string
		tls                      bool
		reload                   bool
	}{
		{"cross-site navigation", http.MethodGet, "cross-site", "navigate", "", false, true},
		{"the reload", http.MethodGet, "same-origin", "navigate", "", false, false},
		{"typed or opened by an app", http.MethodGet, "none", "navigate", "", false, false},
		{"no fetch metadata", http.MethodGet, "", "", "", false, false},
		{"cookie sent", http.MethodGet, "cross-site", "navigate", signInCookie, false, false},
		{"a form's POST", http.MethodPost, "cross-site", "navigate", "", false, false},
		{"a fetch", http.MethodGet, "cross-site", "cors", "", false, false},
		{"over TLS, the __Host- cookie sent", http.MethodGet, "cross-site", "navigate", secureSignInCookie, true, false},
		{"over TLS, only the http cookie sent", http.MethodGet, "cross-site", "navigate", signInCookie, true, true},
	} {
		r := httptest.NewRequest(tc.method, "/a/helper/device?user_code=ABCD-1234&x=%3Cb%3E", nil)
		if tc.tls {
			r = httptest.NewRequest(tc.method, "https://127.0.0.1/a/helper/device?user_code=ABCD-1234&x=%3Cb%3E", nil)
		}
		if tc.site != "" {
			r.Header.Set("Sec-Fetch-Site", tc.site)
			r.Header.Set("Sec-Fetch-Mode", tc.mode)
		}
		if tc.cookie != "" {
			r.AddCookie(&http.Cookie{Name: tc.cookie, Value: "v"})
		}
		w := httptest.NewRecorder()
		if got := c.reloadCrossSite(w, r); got != tc.reload {
			t.Fatalf("%s: reloaded %v, want %v", tc.name, got, tc.reload)
		}
		if !tc.reload {
			continue
		}
		body := w.Body.String()
		if w.Code != http.StatusOK || !strings.Contains(body, `<meta http-equiv="refresh" content="0">`) ||
			!strings.Contains(body, `href="/a/helper/device?user_code=ABCD-1234&amp;x=%3Cb%3E"`) || strings.Contains(body, "<script") {
			t.Fatalf("%s: %d %s", tc.name, w.Code, body)
		}
		if w.Header().Get("Content-Security-Policy") != contentSecurityPolicy || w.Header().Get("Cache-Control") != "no-store" {
			t.Fatalf("%s: headers %v", tc.name, w.Header())
		}
	}
}
