package mcpserver_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCreateAgentRefusesControlAndBidi: create_agent refuses a handle, a
// name or a description with a control or bidirectional formatting
// character, naming the field, and creates nothing.
func TestCreateAgentRefusesControlAndBidi(t *testing.T) {
	w := newWorld(t, "sqlite", nil)
	w.agent("one")
	r := w.do("POST", "/mcp-tokens", w.ownerToken, `{"label":"desk","agents":["one"]}`, nil)
	if r.status != http.StatusCreated {
		t.Fatalf("mint an account token: HTTP %d %s", r.status, r.body)
	}
	cs := connect(t, w.srv.URL+"/mcp", r.json["token"].(string), "2026-07-28")
	for field, args := range map[string]map[string]any{
		"handle":      {"handle": "fre\x00sh"},
		"name":        {"handle": "fresh", "name": "Fresh\u202e"},
		"description": {"handle": "fresh", "description": "made\x1b[2J"},
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_agent", Arguments: args})
		if err != nil || !res.IsError || !strings.HasPrefix(text(res), "Error: "+field+" may not hold") {
			t.Errorf("create_agent %v: %v %+v", args, err, res)
		}
	}
	if created := call(t, cs, "create_agent", map[string]any{"handle": "fresh", "description": "two\nlines"}); created["handle"] != "fresh" {
		t.Fatalf("create_agent after the refusals: %v", created)
	}
}
