package main

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/server"
)

// TestSignInCookieBehindTrustedProxy: behind a proxy trusted with
// --trust-forwarded, a sign-in whose X-Forwarded-Proto says https gets the
// __Host- cookie, Secure; the same without the header, or from a server
// that does not trust it, gets the http one.
func TestSignInCookieBehindTrustedProxy(t *testing.T) {
	for _, tc := range []struct {
		name         string
		trust, https bool
		cookie       string
		secure       bool
	}{
		{"trusted, https", true, true, "__Host-switchboard_signin", true},
		{"trusted, http", true, false, "switchboard_signin", false},
		{"not trusted", false, true, "switchboard_signin", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := MustRunMain(t, t.TempDir(), "", func(c *server.Config) { c.TrustForwarded = tc.trust })
			u, _ := url.Parse(m.URL())
			origin := "http://" + u.Host
			send := func(req *http.Request) *http.Response {
				if tc.https {
					req.Header.Set("X-Forwarded-Proto", "https")
					if tc.trust {
						origin = "https://" + u.Host
					}
				}
				req.Header.Set("Origin", origin)
				res, err := http.DefaultTransport.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			req, _ := http.NewRequest("GET", m.URL()+"/dashboard", nil)
			res := send(req)
			page := readAll(t, res)
			var form *http.Cookie
			for _, ck := range res.Cookies() {
				if ck.Name == "switchboard_form" {
					form = ck
				}
			}
			csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
			if form == nil || csrf == nil {
				t.Fatalf("the sign-in form: %v\n%s", res.Header["Set-Cookie"], page)
			}
			body := url.Values{"csrf": {csrf[1]}, "token": {m.GeneratedOwnerToken}}.Encode()
			req, _ = http.NewRequest("POST", m.URL()+"/dashboard/login", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.AddCookie(form)
			res = send(req)
			_ = readAll(t, res)
			if res.StatusCode != http.StatusSeeOther {
				t.Fatalf("sign in: %s", res.Status)
			}
			var got *http.Cookie
			for _, ck := range res.Cookies() {
				if strings.HasSuffix(ck.Name, "switchboard_signin") {
					if got != nil {
						t.Fatalf("two sign-in cookies: %v", res.Header["Set-Cookie"])
					}
					got = ck
				}
			}
			if got == nil || got.Name != tc.cookie || got.Secure != tc.secure {
				t.Fatalf("the sign-in cookie %+v, want %s, Secure %v", got, tc.cookie, tc.secure)
			}
		})
	}
}

// readAll reads and closes an answer's body.
func readAll(t *testing.T, res *http.Response) string {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
