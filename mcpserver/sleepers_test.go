package mcpserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-dev/switchboard"
)

// TestSendToCommunityWakesSleepers: directory shows wakeable; by default
// send_to_community does not choose an agent that sleeps, and says how
// to ask; with wakeSleepers it does, and the task waits in its inbox.
func TestSendToCommunityWakesSleepers(t *testing.T) {
	w := newWorld(t, "sqlite", nil)
	ctx := context.Background()
	helper, sleepy := w.agent("helper"), w.agent("sleepy")
	inbox := switchboard.ModeInbox
	_, err := w.db.UpdateAgent(ctx, sleepy.ID, switchboard.AgentUpdate{Mode: &inbox})
	must(t, err)
	must(t, w.db.SaveWakeConfig(ctx, &switchboard.WakeConfig{AgentID: sleepy.ID, URL: "https://wake.example/sleepy",
		Preset: "generic", Debounce: time.Second}))
	for _, g := range []string{helper.ID, sleepy.ID} {
		_, err := w.db.JoinCommunity(ctx, g, "team", true)
		must(t, err)
	}
	cs := connect(t, w.mcpURL(helper), w.mcpToken(helper, "claude"), "2026-07-28")

	dir := mustJSON(t, call(t, cs, "directory", map[string]any{"community": "team"}))
	if !strings.Contains(dir, `"handle":"sleepy"`) || !strings.Contains(dir, `"wakeable":true`) {
		t.Fatalf("directory: %s", dir)
	}
	if msg := callError(t, cs, "send_to_community", map[string]any{"community": "team", "text": "anyone?"}); !strings.Contains(msg, "wake_sleepers") {
		t.Fatalf("without wakeSleepers: %s", msg)
	}
	sent := call(t, cs, "send_to_community", map[string]any{"community": "team", "text": "anyone?", "wakeSleepers": true})
	if sent["target"] != "sleepy" || sent["state"] != "submitted" {
		t.Fatalf("with wakeSleepers: %v", sent)
	}
}

// callError calls a tool that must fail and returns its error text.
func callError(tb testing.TB, cs *mcp.ClientSession, name string, args any) string {
	tb.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil || !res.IsError {
		tb.Fatalf("%s: want a tool error, got %v %+v", name, err, res)
	}
	return text(res)
}
