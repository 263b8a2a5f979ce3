package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-dev/switchboard"
)

// TestUnapprovedAgentReadsNoDirectory: the directory tool of an agent that
// waits for the operator's approval fails as its send does, and works
// once the agent is approved.
func TestUnapprovedAgentReadsNoDirectory(t *testing.T) {
	w := newWorld(t, "sqlite", nil)
	ctx := context.Background()
	newcomer, mate := w.agent("newcomer"), w.webhookAgent("mate")
	for _, g := range []string{newcomer.ID, mate.ID} {
		_, err := w.db.JoinCommunity(ctx, g, "team", true)
		must(t, err)
	}
	_, err := w.db.UpdateAgent(ctx, newcomer.ID, switchboard.AgentUpdate{Approved: new(false)})
	must(t, err)
	cs := connect(t, w.mcpURL(newcomer), w.mcpToken(newcomer, "claude"), "")
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"directory", map[string]any{}},
		{"directory", map[string]any{"community": "team"}},
		{"send", map[string]any{"to": "mate", "text": "hi"}},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil || !res.IsError || !strings.Contains(text(res), "not approved") {
			t.Fatalf("%s %v of an unapproved agent: %v %+v", c.tool, c.args, err, res)
		}
	}
	_, err = w.db.UpdateAgent(ctx, newcomer.ID, switchboard.AgentUpdate{Approved: new(true)})
	must(t, err)
	if dir := call(t, cs, "directory", map[string]any{}); !strings.Contains(mustJSON(t, dir), `"mate"`) {
		t.Fatalf("the approved agent's directory: %v", dir)
	}
}
