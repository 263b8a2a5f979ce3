package dashboard_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
)

// upstreamCard is the card of the A2A server a connector forwards to, as
// connect --forward publishes it; its name holds markup.
const upstreamCard = `{"name": "Upstream <b>1.0</b>", "description": "the upstream", "version": "1.0",
	"supportedInterfaces": [{"url": "http://127.0.0.1:9999/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
	"skills": [{"id": "echo", "name": "Echo"}, {"id": "sum", "name": "Sum"}]}`

// TestPublishedCard: a connector agent's page names the card its
// forwarding connector published (the server, the card's name and skills,
// when), as GET /agents/{ref} does; an agent without one, or not a
// connector, shows none.
func TestPublishedCard(t *testing.T) {
	h := newHarness(t)
	alice, token := h.account("alice", switchboard.RoleOwner)
	laptop := h.agent(alice, "laptop", "Laptop", "")
	h.agent(alice, "plain", "Plain", "")
	desk := &switchboard.Agent{ID: switchboard.NewID(), AccountID: alice.ID, Handle: "desk", Name: "Desk",
		Mode: switchboard.ModeInbox, Version: "1.0.0", AcceptsTasks: true, Approved: true}
	ctx := context.Background()
	if err := h.db.CreateAgent(ctx, desk); err != nil {
		t.Fatal(err)
	}
	for _, g := range []*switchboard.Agent{laptop, desk} {
		if err := h.db.PublishCard(ctx, &switchboard.PublishedCard{AgentID: g.ID, Target: `http://127.0.0.1:9999/"><i>`, Card: []byte(upstreamCard)}); err != nil {
			t.Fatal(err)
		}
	}
	c := h.client()
	c.signIn(token)

	res, page := c.get("/dashboard/agents/laptop")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("agent page: %s", res.Status)
	}
	want := `Card published by <code>connect --forward</code> from <code>http://127.0.0.1:9999/&#34;&gt;&lt;i&gt;</code>: Upstream &lt;b&gt;1.0&lt;/b&gt;, 2 skills, updated `
	if !strings.Contains(page, want) {
		t.Fatalf("the page lacks %q:\n%s", want, page)
	}
	if strings.Contains(page, "<b>1.0") || strings.Contains(page, `"><i>`) {
		t.Fatalf("the card's markup is in the page:\n%s", page)
	}
	for _, handle := range []string{"plain", "desk"} {
		if _, page := c.get("/dashboard/agents/" + handle); strings.Contains(page, "Card published by") {
			t.Fatalf("%s shows a published card:\n%s", handle, page)
		}
	}
}
