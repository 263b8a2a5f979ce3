package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-dev/switchboard/mcpserver"
)

// TestToolSchemas: the tools' input schemas, registered encoded, are the
// schemas of their argument types, and the SDK still validates the
// arguments of a call against them.
func TestToolSchemas(t *testing.T) {
	w := newWorld(t, "sqlite", nil)
	g := w.agent("schemas")
	cs := connect(t, w.mcpURL(g), w.mcpToken(g, "schemas"), "2026-07-28")
	tools, err := cs.ListTools(context.Background(), nil)
	must(t, err)
	want, err := jsonschema.For[mcpserver.InboxArgs](nil)
	must(t, err)
	found := false
	for _, tool := range tools.Tools {
		if tool.Name != mcpserver.ToolInbox {
			continue
		}
		found = true
		if got, want := mustJSON(t, tool.InputSchema), mustJSON(t, want); !jsonEqual(t, got, want) {
			t.Errorf("inbox's input schema\n%s\nwant\n%s", got, want)
		}
	}
	if !found {
		t.Fatal("no inbox tool listed")
	}
	for _, args := range []map[string]any{{"limit": "many"}, {"all": 3}} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpserver.ToolInbox, Arguments: args})
		if err == nil && !res.IsError {
			t.Errorf("inbox %v: answered, want its arguments refused", args)
		}
	}
	call(t, cs, mcpserver.ToolInbox, map[string]any{"limit": 5})
}

// jsonEqual reports whether two JSON texts hold the same value.
func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	must(t, json.Unmarshal([]byte(a), &x))
	must(t, json.Unmarshal([]byte(b), &y))
	return mustJSON(t, x) == mustJSON(t, y)
}
