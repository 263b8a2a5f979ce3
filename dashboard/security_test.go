package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
)

// TestPostsNeedOriginAndCSRF: every POST (sign-in, toggle, sign-out) is
// refused with 403 from another origin, without an Origin, or without
// the right CSRF token, and changes nothing.
func TestPostsNeedOriginAndCSRF(t *testing.T) {
	h := newHarness(t)
	acct, token := h.account("alice", switchboard.RoleOwner)
	h.agent(acct, "helper", "Helper", "")
	c := h.client()
	_, form := c.get("/dashboard")
	signInForm := url.Values{"csrf": {csrf(t, form)}, "token": {token}}
	for name, origin := range map[string]string{"foreign": "https://evil.example", "none": "", "null": "null"} {
		if res, _ := c.postFrom(origin, "/dashboard/login", signInForm); res.StatusCode != http.StatusForbidden {
			t.Fatalf("sign-in, origin %s: %s", name, res.Status)
		}
	}
	for name, headers := range map[string]map[string]string{
		"null origin, no fetch metadata":  {"Origin": "null"},
		"null origin, cross-site":         {"Origin": "null", "Sec-Fetch-Site": "cross-site"},
		"our origin, same-site elsewhere": {"Origin": h.base, "Sec-Fetch-Site": "same-site"},
	} {
		if res, _ := c.postWith(headers, "/dashboard/login", signInForm); res.StatusCode != http.StatusForbidden {
			t.Fatalf("sign-in, %s: %s", name, res.Status)
		}
	}
	if res, _ := c.post("/dashboard/login", url.Values{"csrf": {"forged"}, "token": {token}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("sign-in with a forged CSRF token: %s", res.Status)
	}
	if res, _ := h.client().post("/dashboard/login", signInForm); res.StatusCode != http.StatusForbidden {
		t.Fatalf("sign-in without the form's cookie: %s", res.Status)
	}
	// Neither the form's cookie nor its token: nothing to compare is no match.
	if res, _ := h.client().post("/dashboard/login", url.Values{"csrf": {""}, "token": {token}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("sign-in without the form's cookie or token: %s", res.Status)
	}

	// A browser's form under the no-referrer policy: Origin null, and
	// fetch metadata that says same-origin.
	res, body := c.postWith(map[string]string{"Origin": "null", "Sec-Fetch-Site": "same-origin"}, "/dashboard/login", signInForm)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in from a form with Origin null and Sec-Fetch-Site same-origin: %s\n%s", res.Status, body)
	}
	_, page := c.get("/dashboard")
	good := url.Values{"csrf": {csrf(t, page)}, "set": {"helper false"}}
	for name, origin := range map[string]string{"foreign": "https://evil.example", "none": "", "sibling port": "http://127.0.0.1:1"} {
		if res, _ := c.postFrom(origin, "/dashboard/accepts-tasks", good); res.StatusCode != http.StatusForbidden {
			t.Fatalf("toggle, origin %s: %s", name, res.Status)
		}
	}
	for _, bad := range []string{"", "forged"} {
		res, _ := c.post("/dashboard/accepts-tasks", url.Values{"csrf": {bad}, "set": {"helper false"}})
		if res.StatusCode != http.StatusForbidden {
			t.Fatalf("toggle with CSRF token %q: %s", bad, res.Status)
		}
	}
	// Another sign-in's CSRF token is not this one's.
	other := h.client()
	otherPage := other.signIn(token)
	if res, _ := c.post("/dashboard/accepts-tasks", url.Values{"csrf": {csrf(t, otherPage)}, "set": {"helper false"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("toggle with another sign-in's CSRF token: %s", res.Status)
	}
	g, err := h.db.FindAgentByHandle(context.Background(), "helper")
	if err != nil || !g.AcceptsTasks {
		t.Fatalf("a refused POST changed the agent: %+v %v", g, err)
	}
	// A GET changes nothing and is not a route for POST's work.
	if res, _ := c.get("/dashboard/accepts-tasks?set=helper+false"); res.StatusCode == http.StatusOK || res.StatusCode == http.StatusSeeOther {
		t.Fatalf("GET of a form's action: %s", res.Status)
	}
}

// TestEscaping: what owners (and so anyone who talks them into it) put in
// an agent's name and description is shown as text.
func TestEscaping(t *testing.T) {
	h := newHarness(t)
	acct, token := h.account(`alice"><script>alert(1)</script>`, switchboard.RoleOwner)
	h.agent(acct, "xss", `<script>alert("name")</script>`, `<img src=x onerror=alert('desc')>"'&`)
	page := h.client().signIn(token)
	for _, raw := range []string{`<script>alert`, `<img src=x`} {
		if strings.Contains(page, raw) {
			t.Fatalf("the page holds %q unescaped:\n%s", raw, page)
		}
	}
	for _, escaped := range []string{`&lt;script&gt;alert(&#34;name&#34;)&lt;/script&gt;`, `&lt;img src=x onerror=alert(&#39;desc&#39;)&gt;`} {
		if !strings.Contains(page, escaped) {
			t.Fatalf("the page lacks %q:\n%s", escaped, page)
		}
	}
}

// TestStaticListsNoDirectory: /dashboard/static/ is the console's 404,
// not a listing of its files; the files are still served, and a name that
// is not one is 404 too.
func TestStaticListsNoDirectory(t *testing.T) {
	h := newHarness(t)
	c := h.client()
	for _, path := range []string{"/dashboard/static/", "/dashboard/static/nope.css", "/dashboard/static/console.css/"} {
		res, body := c.get(path)
		if res.StatusCode != http.StatusNotFound || strings.Contains(body, `href="console.js"`) || strings.Contains(body, "<pre>") ||
			!strings.Contains(body, "There is no such page.") {
			t.Fatalf("GET %s: %s\n%s", path, res.Status, body)
		}
		checkSecurityHeaders(t, res)
	}
	for file, kind := range map[string]string{"console.css": "text/css", "console.js": "javascript", "icon.svg": "image/svg+xml"} {
		res, body := c.get("/dashboard/static/" + file)
		if res.StatusCode != http.StatusOK || !strings.Contains(res.Header.Get("Content-Type"), kind) || body == "" {
			t.Fatalf("GET %s: %s %s", file, res.Status, res.Header.Get("Content-Type"))
		}
	}
}
