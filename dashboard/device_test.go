package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/pairing"
)

// pairingCode asks for a peer token of the agent and returns the user
// code, formatted as the page shows it.
func (h *harness) pairingCode(g *switchboard.Agent) string {
	h.t.Helper()
	grant, err := h.pairing.Authorize(context.Background(), g, pairing.Request{ClientName: "barry", Requester: "192.0.2.9"})
	if err != nil {
		h.t.Fatal(err)
	}
	return pairing.FormatUserCode(grant.UserCode)
}

// pairingStatus returns the request's status and who decided it.
func (h *harness) pairingStatus(g *switchboard.Agent, code string) (switchboard.PairingStatus, string) {
	h.t.Helper()
	p, err := h.pairing.Find(context.Background(), g, code)
	if err != nil {
		h.t.Fatal(err)
	}
	return p.Status, p.DecidedBy
}

// decision is the /device page's form with its buttons' decision.
func decision(csrf, code, decision string) url.Values {
	return url.Values{"csrf": {csrf}, "user_code": {code}, "decision": {decision}}
}

// TestDevicePageApproveIsTheOwners: only the agent's signed-in owner (or
// the operator) sees Approve and may approve; an owner of another
// account, or a visitor, gets 403 and the request stays pending; anyone
// may deny, and the denial says who (the page, or the owner).
func TestDevicePageApproveIsTheOwners(t *testing.T) {
	h := newHarness(t)
	alice, aliceToken := h.account("alice", switchboard.RoleOwner)
	g := h.agent(alice, "helper", "Helper", "")
	_, bobToken := h.account("bob", switchboard.RoleOwner)
	_, opToken := h.account("op", switchboard.RoleOperator)
	path := "/a/helper/device"

	code := h.pairingCode(g)
	bob := h.client()
	bob.signIn(bobToken)
	anon := h.client()
	for name, c := range map[string]*client{"another account's owner": bob, "a visitor": anon} {
		res, page := c.get(path + "?user_code=" + url.QueryEscape(code))
		if res.StatusCode != http.StatusOK || strings.Contains(page, `value="approve"`) || !strings.Contains(page, `value="deny"`) {
			t.Fatalf("%s sees: %s\n%s", name, res.Status, page)
		}
		res, page = c.postWith(sameOriginForm, path, decision(csrf(t, page), code, "approve"))
		if res.StatusCode != http.StatusForbidden || !strings.Contains(page, "Only the agent&#39;s owner") {
			t.Fatalf("%s approves: %s\n%s", name, res.Status, page)
		}
		if st, _ := h.pairingStatus(g, code); st != switchboard.PairingPending {
			t.Fatalf("after %s's approval the request is %s", name, st)
		}
	}
	_, page := anon.get(path + "?user_code=" + url.QueryEscape(code))
	if res, page := anon.postWith(sameOriginForm, path, decision(csrf(t, page), code, "deny")); res.StatusCode != http.StatusOK ||
		!strings.Contains(page, "Denied") {
		t.Fatalf("a visitor denies: %s\n%s", res.Status, page)
	}
	if st, by := h.pairingStatus(g, code); st != switchboard.PairingDenied || by != pairing.ByPage {
		t.Fatalf("a visitor's denial: %s by %s", st, by)
	}

	for name, token := range map[string]string{"owner": aliceToken, "operator": opToken} {
		c := h.client()
		c.signIn(token)
		for _, d := range []string{"approve", "deny"} {
			code := h.pairingCode(g)
			res, page := c.get(path + "?user_code=" + url.QueryEscape(code))
			if res.StatusCode != http.StatusOK || !strings.Contains(page, `value="approve"`) {
				t.Fatalf("the %s sees: %s\n%s", name, res.Status, page)
			}
			if res, page := c.postWith(sameOriginForm, path, decision(csrf(t, page), code, d)); res.StatusCode != http.StatusOK {
				t.Fatalf("the %s's %s: %s\n%s", name, d, res.Status, page)
			}
			want := map[string]switchboard.PairingStatus{"approve": switchboard.PairingApproved, "deny": switchboard.PairingDenied}[d]
			if st, by := h.pairingStatus(g, code); st != want || by != pairing.ByOwner {
				t.Fatalf("the %s's %s: %s by %s", name, d, st, by)
			}
		}
	}
}

// TestDevicePageNeedsOriginAndCSRF: a decision from another origin,
// without the page's cookie, or with another CSRF token is refused (403),
// even the owner's, and the request stays pending.
func TestDevicePageNeedsOriginAndCSRF(t *testing.T) {
	h := newHarness(t)
	alice, token := h.account("alice", switchboard.RoleOwner)
	g := h.agent(alice, "helper", "Helper", "")
	path := "/a/helper/device"
	code := h.pairingCode(g)
	c := h.client()
	c.signIn(token)
	_, page := c.get(path + "?user_code=" + url.QueryEscape(code))
	good := csrf(t, page)
	for name, headers := range map[string]map[string]string{
		"another origin":        {"Origin": "https://evil.example"},
		"no origin":             {},
		"null, cross-site":      {"Origin": "null", "Sec-Fetch-Site": "cross-site"},
		"our origin, same-site": {"Origin": h.base, "Sec-Fetch-Site": "same-site"},
	} {
		if res, _ := c.postWith(headers, path, decision(good, code, "approve")); res.StatusCode != http.StatusForbidden {
			t.Fatalf("%s: %s", name, res.Status)
		}
	}
	if res, _ := c.postWith(sameOriginForm, path, decision("forged", code, "approve")); res.StatusCode != http.StatusForbidden {
		t.Fatalf("another CSRF token: %s", res.Status)
	}
	noCookie := h.client()
	noCookie.signIn(token)
	for _, token := range []string{good, ""} {
		if res, _ := noCookie.postWith(sameOriginForm, path, decision(token, code, "approve")); res.StatusCode != http.StatusForbidden {
			t.Fatalf("without the page's cookie, token %q: %s", token, res.Status)
		}
	}
	emptyCookie := map[string]string{"Origin": "null", "Sec-Fetch-Site": "same-origin", "Cookie": "switchboard_device="}
	if res, _ := noCookie.postWith(emptyCookie, path, decision("", code, "approve")); res.StatusCode != http.StatusForbidden {
		t.Fatalf("an empty cookie and an empty token: %s", res.Status)
	}
	if st, _ := h.pairingStatus(g, code); st != switchboard.PairingPending {
		t.Fatalf("after refused decisions the request is %s", st)
	}
}

// TestDevicePageServedAndCurrent: an agent with pairing off, or of a
// disabled account, has no /device page (404); an expired code is 410 and
// cannot be approved; a decided one is 409.
func TestDevicePageServedAndCurrent(t *testing.T) {
	h := newHarness(t)
	alice, token := h.account("alice", switchboard.RoleOwner)
	g := h.agent(alice, "helper", "Helper", "")
	off := h.agent(alice, "off", "Off", "")
	if _, err := h.db.UpdateAgent(context.Background(), off.ID, switchboard.AgentUpdate{Pairing: ptr(switchboard.PairingOff)}); err != nil {
		t.Fatal(err)
	}
	bob, _ := h.account("bob", switchboard.RoleOwner)
	h.agent(bob, "gone", "Gone", "")
	if _, err := h.db.UpdateAccount(context.Background(), bob.ID, switchboard.AccountUpdate{Disabled: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	c := h.client()
	c.signIn(token)
	for _, handle := range []string{"off", "gone"} {
		if res, page := c.get("/a/" + handle + "/device"); res.StatusCode != http.StatusNotFound || !strings.Contains(page, "takes no pairing requests") {
			t.Fatalf("%s: %s\n%s", handle, res.Status, page)
		}
	}

	decided := h.pairingCode(g)
	_, page := c.get("/a/helper/device?user_code=" + url.QueryEscape(decided))
	form := csrf(t, page)
	if res, _ := c.postWith(sameOriginForm, "/a/helper/device", decision(form, decided, "deny")); res.StatusCode != http.StatusOK {
		t.Fatalf("deny: %s", res.Status)
	}
	if res, _ := c.get("/a/helper/device?user_code=" + url.QueryEscape(decided)); res.StatusCode != http.StatusConflict {
		t.Fatalf("a decided code: %s", res.Status)
	}
	expired := h.pairingCode(g)
	h.advance(pairing.DefaultTTL + time.Second)
	if res, page := c.get("/a/helper/device?user_code=" + url.QueryEscape(expired)); res.StatusCode != http.StatusGone || strings.Contains(page, `value="approve"`) {
		t.Fatalf("an expired code: %s\n%s", res.Status, page)
	}
	if res, _ := c.postWith(sameOriginForm, "/a/helper/device", decision(form, expired, "approve")); res.StatusCode != http.StatusConflict {
		t.Fatalf("approve an expired code: %s", res.Status)
	}
	if st, _ := h.pairingStatus(g, expired); st != switchboard.PairingPending {
		t.Fatalf("an expired request was decided: %s", st)
	}
}

// TestDevicePageLookupsLimited: lookups of codes, and decisions, from one
// address past the console's limit get 429 with Retry-After (a page with
// no code looked up is not counted).
func TestDevicePageLookupsLimited(t *testing.T) {
	for _, decide := range []bool{false, true} {
		h := newHarness(t, withLimit(3))
		alice, _ := h.account("alice", switchboard.RoleOwner)
		h.agent(alice, "helper", "Helper", "")
		c := h.client()
		c.get("/a/helper/device") // the entry form sets the page's cookie
		u, _ := url.Parse(h.srv.URL + "/a/helper/device")
		var token string
		for _, ck := range c.hc.Jar.Cookies(u) {
			if ck.Name == "switchboard_device" {
				token = ck.Value
			}
		}
		for i := range 4 {
			var res *http.Response
			if decide {
				res, _ = c.postWith(sameOriginForm, "/a/helper/device", decision(token, "WDJB-4827", "deny"))
			} else {
				res, _ = c.get("/a/helper/device?user_code=WDJB-4827")
			}
			want := http.StatusNotFound
			if i == 3 {
				want = http.StatusTooManyRequests
			}
			if res.StatusCode != want || want == http.StatusTooManyRequests && res.Header.Get("Retry-After") == "" {
				t.Fatalf("decide %v, request %d: %s, want %d", decide, i+1, res.Status, want)
			}
		}
	}
}
