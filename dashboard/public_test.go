package dashboard_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/dashboard"
	"github.com/switchboard-dev/switchboard/internal/acmetest"
	"github.com/switchboard-dev/switchboard/reach"
)

// withReach checks the public addresses of the deployment
// https://sb.example.com with the test DNS server, which knows none of
// the names of these tests: every check fails at DNS, at once, and no
// address is dialed.
func withReach(t *testing.T, names ...string) harnessOption {
	for _, n := range names {
		acmetest.SetNoAddress(t, n)
	}
	dns := acmetest.DNS(t)
	res := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, dns)
	}}
	return func(d *dashboard.Deps, _ *dashboard.Config, _ *harness) {
		d.Reach = reach.New(reach.Config{PublicURL: "https://sb.example.com", Resolver: res})
	}
}

// setDomain gives the agent a domain.
func setDomain(t *testing.T, h *harness, g *switchboard.Agent, domain string) {
	t.Helper()
	if _, err := h.db.UpdateAgent(context.Background(), g.ID, switchboard.AgentUpdate{Domain: &domain}); err != nil {
		t.Fatal(err)
	}
}

// TestHealthPagePublic: every owner's health page lists the deployment's
// name and the domains of the owner's own agents, each with its checks
// and the problem with its fix; another owner's agents' domains are not
// there, nor the operator's counts. The operator sees every domain, and
// the counts.
func TestHealthPagePublic(t *testing.T) {
	h := newHarness(t, withReach(t, "sb.example.com", "alice-bot.example.com", "bob-bot.example.com"))
	_, opToken := h.account("operator", switchboard.RoleOperator)
	alice, aliceToken := h.account("alice", switchboard.RoleOwner)
	bob, _ := h.account("bob", switchboard.RoleOwner)
	setDomain(t, h, h.agent(alice, "abot", "A", ""), "alice-bot.example.com")
	h.agent(alice, "plain", "P", "")
	setDomain(t, h, h.agent(bob, "bbot", "B", ""), "bob-bot.example.com")

	c := h.client()
	home := c.signIn(aliceToken)
	if !strings.Contains(home, `href="/dashboard/health"`) {
		t.Fatalf("an owner has no link to the health page:\n%s", home)
	}
	res, page := c.get("/dashboard/health")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("health: %s\n%s", res.Status, page)
	}
	for _, want := range []string{`<tr data-public="https://sb.example.com" data-state="failing">`,
		`<tr data-public="https://alice-bot.example.com" data-state="failing">`,
		`no A/AAAA record for alice-bot.example.com: add one pointing at this server&#39;s public address, or a CNAME to sb.example.com`,
		`<td data-check="dns">failing</td><td data-check="certificate">not checked</td><td data-check="page">card not checked</td>`,
		`<td data-check="page">health not checked</td>`} {
		if !strings.Contains(page, want) {
			t.Fatalf("the owner's health page lacks %q:\n%s", want, page)
		}
	}
	for _, not := range []string{"bob-bot.example.com", "data-instance", `data-count="agents"`, "/a/plain"} {
		if strings.Contains(page, not) {
			t.Fatalf("the owner's health page shows %q:\n%s", not, page)
		}
	}

	op := h.client()
	op.signIn(opToken)
	_, page = op.get("/dashboard/health")
	for _, want := range []string{`data-public="https://alice-bot.example.com"`, `data-public="https://bob-bot.example.com"`, `data-count="agents">3<`} {
		if !strings.Contains(page, want) {
			t.Fatalf("the operator's health page lacks %q:\n%s", want, page)
		}
	}
}

// TestHealthPageNoPublic: without an https public URL on a domain name
// there is nothing to check, and the page says what would give one.
func TestHealthPageNoPublic(t *testing.T) {
	h := newHarness(t, func(d *dashboard.Deps, _ *dashboard.Config, _ *harness) {
		d.Reach = reach.New(reach.Config{PublicURL: "http://sb.example.com"})
	})
	_, token := h.account("alice", switchboard.RoleOwner)
	c := h.client()
	c.signIn(token)
	if _, page := c.get("/dashboard/health"); !strings.Contains(page, "no public HTTPS address on a domain name") || strings.Contains(page, "data-public") {
		t.Fatalf("health:\n%s", page)
	}
}
