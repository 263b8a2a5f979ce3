package agenthttp_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/facetest"
	"github.com/switchboard-dev/switchboard/mcpauth"
)

// TestMCPEndpointOfDisabledOrMCPOffAgent: {address}/mcp answers 404 for
// an agent whose account is disabled or whose owner turned MCP off; an
// agent with MCP on is served (the MCP handler refuses the request that
// has no token).
func TestMCPEndpointOfDisabledOrMCPOffAgent(t *testing.T) {
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

	call := func(g *switchboard.Agent) *facetest.Response {
		return h.Do("POST", h.Addr(g)+"/mcp", map[string]string{"Content-Type": "application/json"},
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	}
	if r := call(on); r.Status == http.StatusNotFound {
		t.Fatalf("an agent with MCP on: %d %s", r.Status, r.Body)
	}
	for _, g := range []*switchboard.Agent{off, gone} {
		r := call(g)
		if r.Status != http.StatusNotFound || !strings.Contains(r.Text(), "no MCP endpoint") {
			t.Errorf("%s: %d %s, want 404 no MCP endpoint", g.Handle, r.Status, r.Body)
		}
	}
}

// TestNetworkTaskFromDisabledAccount: POST /tasks with an owner token
// (the operator's) refuses to send as an agent whose account is disabled
// (the network's check, network.Send), with its 403.
func TestNetworkTaskFromDisabledAccount(t *testing.T) {
	h := facetest.New(t)
	_, alice := h.Account("alice")
	h.NetAgent(alice, "worker", "connector", "code", "lab")
	bob, bobToken := h.Account("bob")
	h.NetAgent(bobToken, "sender", "connector", "", "lab")
	body := map[string]any{"agent": "sender", "to": "worker", "payload": map[string]any{"message": "x"}}
	if r := h.Owner("POST", "/tasks", h.OperatorToken, body); r.Status != http.StatusAccepted {
		t.Fatalf("the operator sends as bob's agent: %d %s", r.Status, r.Body)
	}
	yes := true
	_, err := h.DB.UpdateAccount(context.Background(), bob.ID, switchboard.AccountUpdate{Disabled: &yes})
	facetest.Must(t, err)
	if r := h.Owner("POST", "/tasks", h.OperatorToken, body); r.Status != http.StatusForbidden ||
		!strings.Contains(r.Text(), "account is disabled") {
		t.Fatalf("as an agent of a disabled account: %d %s, want 403", r.Status, r.Body)
	}
}
