package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
)

var issuedToken = regexp.MustCompile(`<code id="new-token">(sbp_[A-Za-z0-9_-]+)</code>`)

// TestAgentPage: an agent's page shows its address, card and connect
// command; a peer token issued there is shown once and works (its hash is
// stored), a taken label is refused on the page, revoking it ends it;
// joining and leaving a community go through the network's rules.
func TestAgentPage(t *testing.T) {
	h := newHarness(t)
	alice, token := h.account("alice", switchboard.RoleOwner)
	bob, _ := h.account("bob", switchboard.RoleOwner)
	g := h.agent(alice, "helper", "Helper", "")
	h.agent(bob, "bobs", "Bob's", "")
	c := h.client()
	c.signIn(token)
	res, page := c.get("/dashboard/agents/helper")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("agent page: %s", res.Status)
	}
	checkSecurityHeaders(t, res)
	for _, want := range []string{h.base + "/a/helper", "/a/helper/.well-known/agent-card.json", "switchboard connect --server " + h.base} {
		if !strings.Contains(page, want) {
			t.Fatalf("the agent page lacks %q:\n%s", want, page)
		}
	}
	if res, _ := c.get("/dashboard/agents/bobs"); res.StatusCode != http.StatusNotFound {
		t.Fatalf("another owner's agent: %s", res.Status)
	}

	csrfToken := csrf(t, page)
	res, page = c.post("/dashboard/agents/helper/tokens", url.Values{"csrf": {csrfToken}, "label": {"carol"}})
	m := issuedToken.FindStringSubmatch(page)
	if res.StatusCode != http.StatusCreated || m == nil {
		t.Fatalf("issue: %s\n%s", res.Status, page)
	}
	ctx := context.Background()
	if tok, err := h.db.FindTokenByHash(ctx, switchboard.HashToken(m[1])); err != nil || tok.AgentID != g.ID || tok.Label != "carol" {
		t.Fatalf("the issued token: %+v %v", tok, err)
	}
	if _, page = c.get("/dashboard/agents/helper"); strings.Contains(page, m[1]) || !strings.Contains(page, `data-token="carol"`) {
		t.Fatalf("the token is shown again, or not listed:\n%s", page)
	}
	res, page = c.post("/dashboard/agents/helper/tokens", url.Values{"csrf": {csrfToken}, "label": {"carol"}})
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(page, "an active token labelled &#34;carol&#34; exists") {
		t.Fatalf("a taken label: %s\n%s", res.Status, page)
	}
	res, _ = c.post("/dashboard/agents/helper/tokens/revoke", url.Values{"csrf": {csrfToken}, "label": {"carol"}, "back": {"/dashboard/agents/helper"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard/agents/helper" {
		t.Fatalf("revoke: %s", res.Status)
	}
	if _, err := h.db.FindTokenByHash(ctx, switchboard.HashToken(m[1])); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("the revoked token is still found: %v", err)
	}

	res, _ = c.post("/dashboard/agents/helper/communities/join", url.Values{"csrf": {csrfToken}, "community": {"Lab"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("join: %s", res.Status)
	}
	if _, page = c.get("/dashboard/agents/helper"); !strings.Contains(page, `aria-label="leave lab"`) {
		t.Fatalf("not in lab after joining:\n%s", page)
	}
	res, page = c.post("/dashboard/agents/helper/communities/join", url.Values{"csrf": {csrfToken}, "community": {"<b>bad</b>"}})
	if res.StatusCode != http.StatusUnprocessableEntity || strings.Contains(page, "<b>bad") {
		t.Fatalf("join an invalid name: %s\n%s", res.Status, page)
	}
	res, _ = c.post("/dashboard/agents/helper/communities/leave", url.Values{"csrf": {csrfToken}, "community": {"lab"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("leave: %s", res.Status)
	}
	if _, page = c.get("/dashboard/agents/helper"); strings.Contains(page, `aria-label="leave lab"`) {
		t.Fatalf("still in lab after leaving:\n%s", page)
	}
	if res, _ := c.postFrom("https://evil.example", "/dashboard/agents/helper/tokens", url.Values{"csrf": {csrfToken}, "label": {"eve"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("issue from another origin: %s", res.Status)
	}
}
