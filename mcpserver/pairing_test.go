package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-dev/switchboard/mcpserver"
	"github.com/switchboard-dev/switchboard/pairing"
)

// TestPairingRequests lists the agent's pending pairing requests with the
// go-sdk client, in every protocol version: the code, the claimed names and card, the approval link,
// and never the requester's address; another agent's request is not shown.
func TestPairingRequests(t *testing.T) {
	w := newWorld(t, "sqlite", nil)
	helper, other := w.agent("helper"), w.agent("other")
	ctx := context.Background()
	g, err := w.pairing.Authorize(ctx, helper, pairing.Request{ClientName: "Bob's agent", ClientID: "bob",
		CardURL: "https://bob.example/.well-known/agent-card.json", Requester: "203.0.113.9"})
	must(t, err)
	_, err = w.pairing.Authorize(ctx, other, pairing.Request{ClientName: "Carol", Requester: "203.0.113.10"})
	must(t, err)

	secret := w.mcpToken(helper, "claude")
	for _, version := range mcpserver.ProtocolVersions {
		t.Run(version, func(t *testing.T) { checkPairingRequests(t, w, connect(t, w.mcpURL(helper), secret, version), g) })
	}
}

// checkPairingRequests calls pairing_requests and checks it lists the one
// request g of the agent helper.
func checkPairingRequests(t *testing.T, w *world, cs *mcp.ClientSession, g *pairing.Grant) {
	got := call(t, cs, "pairing_requests", nil)
	reqs, _ := got["requests"].([]any)
	if len(reqs) != 1 {
		t.Fatalf("requests: %v", got)
	}
	r := reqs[0].(map[string]any)
	code := pairing.FormatUserCode(g.UserCode)
	if r["code"] != code || r["clientName"] != "Bob's agent" || r["clientId"] != "bob" ||
		r["agentCardUrl"] != "https://bob.example/.well-known/agent-card.json" || r["expiresAt"] == "" {
		t.Fatalf("request: %v", r)
	}
	if want := w.srv.URL + "/a/helper/device?user_code=" + code; r["approvalUrl"] != want {
		t.Fatalf("approvalUrl %v, want %s", r["approvalUrl"], want)
	}
	if s := mustJSON(t, got); strings.Contains(s, "203.0.113") || strings.Contains(s, "Carol") {
		t.Fatalf("the result shows a requester's address or another agent's request: %s", s)
	}
}
