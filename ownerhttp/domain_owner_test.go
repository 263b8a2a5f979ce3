package ownerhttp_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/internal/facetest"
)

// setDomain gives the agent a domain through the owner API and returns the
// answer.
func setDomain(h *facetest.Harness, token, ref, domain string) *facetest.Response {
	h.T.Helper()
	return h.Owner("PATCH", "/agents/"+ref, token, map[string]any{"domain": domain})
}

// TestAgentDomainSet: an owner gives an agent a domain and takes it away;
// it is held lower-case, in punycode, and the agent's addresses in the
// owner API name it; the push URL stays on the deployment.
func TestAgentDomainSet(t *testing.T) {
	h := facetest.NewDomain(t)
	alice, tok := h.Account("alice")
	h.AgentOf(alice, "bob")
	r := setDomain(h, tok, "bob", "  Bot.Example.COM. ")
	if r.Status != http.StatusOK || r.JSON["domain"] != "bot.example.com" {
		t.Fatalf("set: %d %s", r.Status, r.Body)
	}
	if r.JSON["address"] != "http://bot.example.com/" || r.JSON["agent_card"] != "http://bot.example.com/.well-known/agent-card.json" {
		t.Fatalf("addresses of an agent with a domain: %s", r.Body)
	}
	if got := h.AgentByHandle("bob"); got.Domain != "bot.example.com" {
		t.Fatalf("stored %q", got.Domain)
	}
	if r := h.Owner("GET", "/agents/bob", tok, nil); r.JSON["domain"] != "bot.example.com" {
		t.Fatalf("show: %s", r.Body)
	}
	if r := setDomain(h, tok, "bob", "Bücher.example"); r.Status != http.StatusOK || r.JSON["domain"] != "xn--bcher-kva.example" {
		t.Fatalf("an IDN: %d %s", r.Status, r.Body)
	}
	out := h.Owner("POST", "/agents/bob/outbox", tok, map[string]any{"target": "carol", "endpoint": "https://carol.example/a2a",
		"protocol": "1.0", "push_token": "push-token-0123456789abcdef"})
	if out.Status != http.StatusCreated || out.JSON["push_url"] != facetest.DeploymentURL+"/a/bob/push" {
		t.Fatalf("push URL of an agent with a domain: %d %s", out.Status, out.Body)
	}
	r = setDomain(h, tok, "bob", "")
	if r.Status != http.StatusOK || r.JSON["domain"] != nil || r.JSON["address"] != facetest.DeploymentURL+"/a/bob/" {
		t.Fatalf("removed: %d %s", r.Status, r.Body)
	}
	if _, err := h.DB.FindAgentByDomain(context.Background(), "xn--bcher-kva.example"); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("the removed domain still finds: %v", err)
	}

	// At create: the agent is made with it, or not at all.
	r = h.Owner("POST", "/agents", tok, map[string]any{"handle": "carl", "mode": "inbox", "domain": "carl.example.com"})
	if r.Status != http.StatusCreated || r.JSON["domain"] != "carl.example.com" {
		t.Fatalf("create with a domain: %d %s", r.Status, r.Body)
	}
	r = h.Owner("POST", "/agents", tok, map[string]any{"handle": "dup", "mode": "inbox", "domain": "CARL.example.com"})
	if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.JSON["error"].(string), "already the domain of another agent") {
		t.Fatalf("create with a taken domain: %d %s", r.Status, r.Body)
	}
	if r := h.Owner("GET", "/agents/dup", tok, nil); r.Status != http.StatusNotFound {
		t.Fatalf("an agent refused its domain was kept: %d %s", r.Status, r.Body)
	}
}

// TestAgentDomainRefused is the bad-input table: each name that cannot be
// an agent's domain is refused with 422 and a message that says which,
// on update and on create; the agent keeps what it had.
func TestAgentDomainRefused(t *testing.T) {
	h := facetest.NewDomain(t, facetest.WithConfig(func(c *httpapi.Config) { c.DeploymentDomains = []string{"SB2.test", "agents.sb.test"} }))
	alice, tok := h.Account("alice")
	mallory, mtok := h.Account("mallory")
	h.AgentOf(alice, "bob")
	h.AgentOf(mallory, "eve")
	if r := setDomain(h, mtok, "eve", "eve.example.com"); r.Status != http.StatusOK {
		t.Fatalf("eve's domain: %d %s", r.Status, r.Body)
	}
	for _, c := range []struct{ domain, says string }{
		{"127.0.0.1", "IP address"},
		{"2001:db8::1", "IP address"},
		{"[::1]", "IP address"},
		{"*.example.com", "wildcard"},
		{"bot.example.com:8443", "port"},
		{"https://bot.example.com", "scheme"},
		{"bot.example.com/a/bob", "path"},
		{"bot..example.com", "not a valid DNS name"},
		{"bot_1.example.com", "not a valid DNS name"},
		{strings.Repeat("a", 64) + ".example.com", "not a valid DNS name"},
		{"localhost", "single-label"},
		{"Eve.Example.com", "eve.example.com is already the domain of another agent"},
		{"sb.test", "this deployment's own domain"},
		{"sb2.test", "this deployment's own domain"},
		{"agents.sb.test", "this deployment's own domain"},
		{"bob.sb.test", "under this deployment's own domain sb.test"},
		{"x.agents.sb.test", "under this deployment's own domain"},
	} {
		r := setDomain(h, tok, "bob", c.domain)
		msg, _ := r.JSON["error"].(string)
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(msg, c.says) {
			t.Errorf("PATCH domain %q: %d %s; want 422 saying %q", c.domain, r.Status, r.Body, c.says)
		}
		if strings.Contains(msg, "eve\"") || strings.Contains(msg, "mallory") {
			t.Errorf("PATCH domain %q: the refusal names the holder: %s", c.domain, msg)
		}
		r = h.Owner("POST", "/agents", tok, map[string]any{"handle": "new", "mode": "inbox", "domain": c.domain})
		if r.Status != http.StatusUnprocessableEntity {
			t.Errorf("POST with domain %q: %d %s", c.domain, r.Status, r.Body)
		}
	}
	if got := h.AgentByHandle("bob"); got.Domain != "" {
		t.Fatalf("a refused domain was kept: %q", got.Domain)
	}
	// The request's own host is the deployment's, whatever the public URL.
	r := h.At("PATCH", "http://other-name.test/agents/bob", map[string]string{"Authorization": "Bearer " + tok}, `{"domain":"other-name.test"}`)
	if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.JSON["error"].(string), "own domain") {
		t.Fatalf("the request's host: %d %s", r.Status, r.Body)
	}
	// The operator gives names under the deployment's.
	h.Agent("ops")
	if r := setDomain(h, h.OperatorToken, "ops", "ops.sb.test"); r.Status != http.StatusOK {
		t.Fatalf("the operator under the deployment's domain: %d %s", r.Status, r.Body)
	}
}

// TestAgentDomainNeedsKnownAddress: a deployment that takes its address
// from each request cannot tell an agent domain from itself: it refuses
// to set one, and serves none.
func TestAgentDomainNeedsKnownAddress(t *testing.T) {
	h := facetest.New(t)
	alice, tok := h.Account("alice")
	g := h.AgentOf(alice, "bob")
	r := setDomain(h, tok, "bob", "bot.example.com")
	if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.JSON["error"].(string), "--public-url or --domain") {
		t.Fatalf("set without a known address: %d %s", r.Status, r.Body)
	}
	d := "bot.example.com"
	_, err := h.DB.UpdateAgent(context.Background(), g.ID, switchboard.AgentUpdate{Domain: &d})
	facetest.Must(t, err)
	if r := h.At("GET", "http://bot.example.com/.well-known/agent-card.json", nil, ""); r.Status != http.StatusNotFound {
		t.Fatalf("an agent domain served without a known address: %d %s", r.Status, r.Body)
	}
}

// TestAgentDomainQuota: an account's agents hold at most
// MaxDomainsPerAccount domains; a change of domain keeps the count; the
// operator has no bound; a negative bound lets no owner have one.
func TestAgentDomainQuota(t *testing.T) {
	h := facetest.NewDomain(t, facetest.WithConfig(func(c *httpapi.Config) { c.MaxDomainsPerAccount = 2 }))
	alice, tok := h.Account("alice")
	for _, n := range []string{"a1", "a2", "a3"} {
		h.AgentOf(alice, n)
	}
	for _, n := range []string{"a1", "a2"} {
		if r := setDomain(h, tok, n, n+".example.com"); r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", n, r.Status, r.Body)
		}
	}
	r := setDomain(h, tok, "a3", "a3.example.com")
	if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.JSON["error"].(string), "hold 2 domains") {
		t.Fatalf("past the quota: %d %s", r.Status, r.Body)
	}
	r = h.Owner("POST", "/agents", tok, map[string]any{"handle": "a4", "mode": "inbox", "domain": "a4.example.com"})
	if r.Status != http.StatusUnprocessableEntity || h.Owner("GET", "/agents/a4", tok, nil).Status != http.StatusNotFound {
		t.Fatalf("create past the quota: %d %s", r.Status, r.Body)
	}
	if r := setDomain(h, tok, "a2", "deux.example.com"); r.Status != http.StatusOK {
		t.Fatalf("a change of domain: %d %s", r.Status, r.Body)
	}
	// The operator gives alice's agent one past her quota, and its own.
	if r := setDomain(h, h.OperatorToken, "a3", "a3.example.com"); r.Status != http.StatusOK {
		t.Fatalf("the operator: %d %s", r.Status, r.Body)
	}
	for i := range 3 {
		h.Agent("op" + string(rune('0'+i)))
		if r := setDomain(h, h.OperatorToken, "op"+string(rune('0'+i)), "op"+string(rune('0'+i))+".example.com"); r.Status != http.StatusOK {
			t.Fatalf("the operator's own: %d %s", r.Status, r.Body)
		}
	}

	none := facetest.NewDomain(t, facetest.WithConfig(func(c *httpapi.Config) { c.MaxDomainsPerAccount = -1 }))
	bob, btok := none.Account("bob")
	none.AgentOf(bob, "b1")
	if r := setDomain(none, btok, "b1", "b1.example.com"); r.Status != http.StatusUnprocessableEntity ||
		!strings.Contains(r.JSON["error"].(string), "may not give its agents domains") {
		t.Fatalf("no domains for owners: %d %s", r.Status, r.Body)
	}
	none.Agent("ops")
	if r := setDomain(none, none.OperatorToken, "ops", "ops.example.com"); r.Status != http.StatusOK {
		t.Fatalf("the operator, with no domains for owners: %d %s", r.Status, r.Body)
	}
}
