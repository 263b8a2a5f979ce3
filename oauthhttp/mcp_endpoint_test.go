package oauthhttp_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/facetest"
	"github.com/switchboard-dev/switchboard/mcpauth"
)

// TestMCPOAuthOfDisabledOrMCPOffAgent: the OAuth routes of an agent's MCP
// endpoint (here its protected resource metadata) answer 404 for an agent
// whose account is disabled or whose owner turned MCP off.
func TestMCPOAuthOfDisabledOrMCPOffAgent(t *testing.T) {
	var oauth *mcpauth.Service
	h := facetest.New(t, facetest.WithMCPOAuth(&oauth))
	ctx := context.Background()
	on := h.Agent("on")
	off := h.Agent("off")
	yes := true
	_, err := h.DB.UpdateAgent(ctx, off.ID, switchboard.AgentUpdate{MCPOff: &yes})
	facetest.Must(t, err)
	bob, _ := h.Account("bob")
	gone := h.AgentOf(bob, "gone")
	_, err = h.DB.UpdateAccount(ctx, bob.ID, switchboard.AccountUpdate{Disabled: &yes})
	facetest.Must(t, err)

	metadata := func(g *switchboard.Agent) *facetest.Response {
		return h.Do("GET", h.Server.URL+"/.well-known/oauth-protected-resource/a/"+g.Handle+"/mcp", nil, "")
	}
	if r := metadata(on); r.Status != http.StatusOK {
		t.Fatalf("an agent with MCP on: %d %s", r.Status, r.Body)
	}
	for _, g := range []*switchboard.Agent{off, gone} {
		if r := metadata(g); r.Status != http.StatusNotFound {
			t.Errorf("%s: %d %s, want 404", g.Handle, r.Status, r.Body)
		}
	}
}
