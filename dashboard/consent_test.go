package dashboard_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// oauthClient registers an MCP client with a loopback redirect URI.
func (h *harness) oauthClient() *switchboard.OAuthClient {
	h.t.Helper()
	c, err := h.oauth.Register(context.Background(),
		[]byte(`{"client_name":"Claude Code","redirect_uris":["http://127.0.0.1/callback"]}`), "192.0.2.1")
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

// authorizeQuery is an authorization request of the client for the MCP
// endpoint resource.
func authorizeQuery(c *switchboard.OAuthClient, resource string) url.Values {
	sum := sha256.Sum256([]byte(strings.Repeat("v", 43)))
	return url.Values{"response_type": {"code"}, "client_id": {c.ID}, "redirect_uri": {"http://127.0.0.1:6000/callback"},
		"state": {"st"}, "code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"resource": {resource}}
}

// consentForm is the consent page's form as its buttons send it: the
// request's parameters, the CSRF token and the decision.
func consentForm(q url.Values, csrf, decision string, agents ...string) url.Values {
	f := url.Values{}
	for k, v := range q {
		f[k] = v
	}
	f.Set("csrf", csrf)
	f.Set("decision", decision)
	f["agent"] = agents
	return f
}

// sameOriginForm are the headers of a browser's form on a page of this
// origin under no-referrer.
var sameOriginForm = map[string]string{"Origin": "null", "Sec-Fetch-Site": "same-origin"}

// consentCookie forges the consent page's CSRF cookie for path, as anyone
// can (double submit: it is no secret of the owner's).
func (c *client) consentCookie(path, value string) {
	u, _ := url.Parse(c.h.srv.URL + path)
	c.hc.Jar.SetCookies(u, []*http.Cookie{{Name: "switchboard_consent", Value: value, Path: path}})
}

// codeIssued reports whether the answer sends the browser back to the
// client with a code.
func codeIssued(res *http.Response) bool {
	loc, err := url.Parse(res.Header.Get("Location"))
	return err == nil && loc.Query().Get("code") != ""
}

// TestConsentOtherAccountsAgent: an owner signed in to another account
// neither sees the consent form for an agent that is not theirs nor gets
// a code by posting it (with a CSRF token and cookie of their own: the
// double submit is no authorization); the agent's owner and the operator
// do.
func TestConsentOtherAccountsAgent(t *testing.T) {
	h := newHarness(t)
	alice, aliceToken := h.account("alice", switchboard.RoleOwner)
	h.agent(alice, "helper", "Helper", "")
	_, bobToken := h.account("bob", switchboard.RoleOwner)
	_, opToken := h.account("op", switchboard.RoleOperator)
	q := authorizeQuery(h.oauthClient(), h.base+"/a/helper/mcp")
	path := "/a/helper/oauth/authorize"

	bob := h.client()
	bob.signIn(bobToken)
	res, page := bob.get(path + "?" + q.Encode())
	if res.StatusCode != http.StatusForbidden || strings.Contains(page, `value="approve"`) ||
		!strings.Contains(page, "Only the agent&#39;s owner") {
		t.Fatalf("another account's owner on the consent page: %s\n%s", res.Status, page)
	}
	bob.consentCookie(path, strings.Repeat("c", 43))
	res, page = bob.postWith(sameOriginForm, path, consentForm(q, strings.Repeat("c", 43), "approve"))
	if res.StatusCode != http.StatusForbidden || codeIssued(res) {
		t.Fatalf("another account's owner approves: %s %s\n%s", res.Status, res.Header.Get("Location"), page)
	}

	for name, token := range map[string]string{"owner": aliceToken, "operator": opToken} {
		c := h.client()
		c.signIn(token)
		res, page := c.get(path + "?" + q.Encode())
		if res.StatusCode != http.StatusOK || !strings.Contains(page, `value="approve"`) {
			t.Fatalf("%s on the consent page: %s\n%s", name, res.Status, page)
		}
		res, page = c.postWith(sameOriginForm, path, consentForm(q, csrf(t, page), "approve"))
		if res.StatusCode != http.StatusSeeOther || !codeIssued(res) {
			t.Fatalf("%s approves: %s %s\n%s", name, res.Status, res.Header.Get("Location"), page)
		}
	}
}

var checkbox = regexp.MustCompile(`<input type="checkbox"[^>]*>`)

// TestConsentTicksNoAgent: the account endpoint's consent page lists the
// owner's agents (only theirs) with no box ticked; allowing with none
// chosen, or with another account's agent, is refused; with one chosen, a
// code is issued.
func TestConsentTicksNoAgent(t *testing.T) {
	h := newHarness(t)
	alice, token := h.account("alice", switchboard.RoleOwner)
	h.agent(alice, "helper", "Helper", "")
	h.agent(alice, "second", "Second", "")
	bob, _ := h.account("bob", switchboard.RoleOwner)
	h.agent(bob, "desk", "Desk", "")
	q := authorizeQuery(h.oauthClient(), h.base+"/mcp")

	c := h.client()
	c.signIn(token)
	res, page := c.get("/oauth/authorize?" + q.Encode())
	if res.StatusCode != http.StatusOK {
		t.Fatalf("the account's consent page: %s\n%s", res.Status, page)
	}
	boxes := checkbox.FindAllString(page, -1)
	if len(boxes) != 2 || !strings.Contains(boxes[0], `value="helper"`) || !strings.Contains(boxes[1], `value="second"`) {
		t.Fatalf("the page's boxes: %q, want helper and second", boxes)
	}
	for _, b := range boxes {
		if strings.Contains(b, "checked") {
			t.Fatalf("a box is ticked by default: %s", b)
		}
	}
	token2 := csrf(t, page)
	for name, agents := range map[string][]string{"none": nil, "another account's": {"desk"}} {
		res, page := c.postWith(sameOriginForm, "/oauth/authorize", consentForm(q, token2, "approve", agents...))
		if res.StatusCode != http.StatusBadRequest || codeIssued(res) || !strings.Contains(page, "Choose at least one agent") {
			t.Fatalf("allow with %s agents: %s\n%s", name, res.Status, page)
		}
	}
	res, page = c.postWith(sameOriginForm, "/oauth/authorize", consentForm(q, token2, "approve", "second"))
	if res.StatusCode != http.StatusSeeOther || !codeIssued(res) {
		t.Fatalf("allow with second: %s\n%s", res.Status, page)
	}
}

// TestConsentNeedsSignInOriginAndCSRF: a visitor not signed in is sent to
// sign in (GET) or refused (POST); a signed-in owner's decision is
// refused from another origin, without the page's cookie or with another
// CSRF token; a decision that is neither allow nor deny is 400; a sign-in
// past its lifetime counts as none.
func TestConsentNeedsSignInOriginAndCSRF(t *testing.T) {
	h := newHarness(t)
	alice, token := h.account("alice", switchboard.RoleOwner)
	h.agent(alice, "helper", "Helper", "")
	q := authorizeQuery(h.oauthClient(), h.base+"/a/helper/mcp")
	path := "/a/helper/oauth/authorize"

	anon := h.client()
	res, _ := anon.get(path + "?" + q.Encode())
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/dashboard?next=") {
		t.Fatalf("not signed in, GET: %s %s", res.Status, loc)
	}
	anon.consentCookie(path, strings.Repeat("c", 43))
	if res, _ := anon.postWith(sameOriginForm, path, consentForm(q, strings.Repeat("c", 43), "approve")); res.StatusCode != http.StatusForbidden || codeIssued(res) {
		t.Fatalf("not signed in, POST: %s", res.Status)
	}

	c := h.client()
	c.signIn(token)
	_, page := c.get(path + "?" + q.Encode())
	good := csrf(t, page)
	for name, headers := range map[string]map[string]string{
		"another origin":        {"Origin": "https://evil.example"},
		"no origin":             {},
		"null, cross-site":      {"Origin": "null", "Sec-Fetch-Site": "cross-site"},
		"our origin, same-site": {"Origin": h.base, "Sec-Fetch-Site": "same-site"},
	} {
		if res, _ := c.postWith(headers, path, consentForm(q, good, "approve")); res.StatusCode != http.StatusForbidden || codeIssued(res) {
			t.Fatalf("%s: %s", name, res.Status)
		}
	}
	if res, _ := c.postWith(sameOriginForm, path, consentForm(q, "forged", "approve")); res.StatusCode != http.StatusForbidden || codeIssued(res) {
		t.Fatalf("another CSRF token: %s", res.Status)
	}
	for _, d := range []string{"", "maybe"} {
		if res, _ := c.postWith(sameOriginForm, path, consentForm(q, good, d)); res.StatusCode != http.StatusBadRequest || codeIssued(res) {
			t.Fatalf("decision %q: %s", d, res.Status)
		}
	}
	noCookie := h.client()
	noCookie.signIn(token)
	if res, _ := noCookie.postWith(sameOriginForm, path, consentForm(q, good, "approve")); res.StatusCode != http.StatusForbidden || codeIssued(res) {
		t.Fatalf("without the page's cookie: %s", res.Status)
	}
	if res, _ := noCookie.postWith(sameOriginForm, path, consentForm(q, "", "approve")); res.StatusCode != http.StatusForbidden || codeIssued(res) {
		t.Fatalf("without cookie or token: %s", res.Status)
	}
	emptyCookie := map[string]string{"Origin": "null", "Sec-Fetch-Site": "same-origin", "Cookie": "switchboard_consent="}
	if res, _ := noCookie.postWith(emptyCookie, path, consentForm(q, "", "approve")); res.StatusCode != http.StatusForbidden || codeIssued(res) {
		t.Fatalf("an empty cookie and an empty token: %s", res.Status)
	}

	h.advance(8 * 24 * time.Hour)
	if res, _ := c.postWith(sameOriginForm, path, consentForm(q, good, "approve")); res.StatusCode != http.StatusForbidden || codeIssued(res) {
		t.Fatalf("a sign-in past its lifetime: %s", res.Status)
	}
}

// TestConsentTargetServed: an agent whose MCP endpoint is off (even for
// its owner), or whose account is disabled, has no consent page: 404.
func TestConsentTargetServed(t *testing.T) {
	h := newHarness(t)
	alice, token := h.account("alice", switchboard.RoleOwner)
	off := h.agent(alice, "off", "Off", "")
	if _, err := h.db.UpdateAgent(context.Background(), off.ID, switchboard.AgentUpdate{MCPOff: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	bob, _ := h.account("bob", switchboard.RoleOperator)
	h.agent(bob, "gone", "Gone", "")
	if _, err := h.db.UpdateAccount(context.Background(), bob.ID, switchboard.AccountUpdate{Disabled: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	c := h.client()
	c.signIn(token)
	cl := h.oauthClient()
	for _, handle := range []string{"off", "gone"} {
		q := authorizeQuery(cl, h.base+"/a/"+handle+"/mcp")
		if res, page := c.get("/a/" + handle + "/oauth/authorize?" + q.Encode()); res.StatusCode != http.StatusNotFound || strings.Contains(page, `value="approve"`) {
			t.Fatalf("%s: %s\n%s", handle, res.Status, page)
		}
	}
}
