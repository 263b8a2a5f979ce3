package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/mcpserver"
)

// TestClientEveryVersion drives the endpoint with the go-sdk client in
// every protocol version served: it lists the tools and calls each one,
// and a peer sees the reply through A2A GetTask.
func TestClientEveryVersion(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		w := newWorld(t, kind, nil)
		helper, other := w.agent("helper"), w.webhookAgent("other")
		for _, g := range []string{helper.ID, other.ID} {
			_, err := w.db.JoinCommunity(context.Background(), g, "team", true)
			must(t, err)
		}
		bob := w.token("peer", "", helper.ID, "bob")
		secret := w.mcpToken(helper, "claude")
		for _, version := range mcpserver.ProtocolVersions {
			t.Run(version, func(t *testing.T) {
				cs := connect(t, w.mcpURL(helper), secret, version)
				if got := cs.InitializeResult().ProtocolVersion; got != version {
					t.Fatalf("negotiated %s, want %s", got, version)
				}
				if version != "2026-07-28" { // ping is gone from 2026-07-28
					must(t, cs.Ping(context.Background(), nil))
				}
				exerciseTools(t, w, cs, helper, bob, version)
			})
		}
	})
}

// exerciseTools lists the tools and calls each of them.
func exerciseTools(t *testing.T, w *world, cs *mcp.ClientSession, g *switchboard.Agent, bob, version string) {
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	must(t, err)
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if !strings.Contains(tool.Description, "UNTRUSTED") {
			t.Errorf("%s: the description does not say peer text is untrusted: %q", tool.Name, tool.Description)
		}
		readOnly := tool.Name == "inbox" || tool.Name == "show_task" || tool.Name == "history" || tool.Name == "list_peers" || tool.Name == "directory" || tool.Name == "pairing_requests"
		if tool.Annotations == nil || tool.Annotations.ReadOnlyHint != readOnly {
			t.Errorf("%s: annotations %+v, want readOnlyHint %v", tool.Name, tool.Annotations, readOnly)
		}
	}
	slices.Sort(names)
	want := slices.Clone(mcpserver.ToolNames)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}

	taskID := w.peerSends(g, bob, "please answer "+version)
	inbox := call(t, cs, "inbox", map[string]any{})
	if !strings.Contains(mustJSON(t, inbox), taskID) || inbox["untrusted"] != true {
		t.Fatalf("inbox does not show task %s: %v", taskID, inbox)
	}
	shown := call(t, cs, "show_task", map[string]any{"taskId": taskID})
	if shown["from"] != "bob" || !strings.Contains(mustJSON(t, shown), "please answer "+version) {
		t.Fatalf("show_task: %v", shown)
	}
	if got := call(t, cs, "mark_working", map[string]any{"taskId": taskID}); got["state"] != "working" {
		t.Fatalf("mark_working: %v", got)
	}
	answer := "answered in " + version
	if got := call(t, cs, "reply", map[string]any{"taskId": taskID, "text": answer}); got["state"] != "completed" {
		t.Fatalf("reply: %v", got)
	}
	seen := w.a2a(g, bob, "GetTask", map[string]any{"id": taskID})
	if st := seen["status"].(map[string]any)["state"]; st != "TASK_STATE_COMPLETED" || !strings.Contains(mustJSON(t, seen), answer) {
		t.Fatalf("the peer's GetTask: %v", seen)
	}
	hist := call(t, cs, "history", map[string]any{"contextId": shown["contextId"]})
	if !strings.Contains(mustJSON(t, hist), answer) {
		t.Fatalf("history: %v", hist)
	}

	sent := call(t, cs, "send", map[string]any{"to": "other", "text": "hello other " + version})
	if sent["target"] != "other" || sent["taskId"] == "" {
		t.Fatalf("send: %v", sent)
	}
	polled := call(t, cs, "poll_outbound", map[string]any{"taskId": sent["taskId"]})
	if polled["id"] != sent["id"] || polled["state"] != "submitted" {
		t.Fatalf("poll_outbound: %v", polled)
	}
	peers := call(t, cs, "list_peers", nil)
	if !strings.Contains(mustJSON(t, peers), `"bob"`) || !strings.Contains(mustJSON(t, peers), `"other"`) || strings.Contains(mustJSON(t, peers), "sbp_") {
		t.Fatalf("list_peers: %v", peers)
	}
	dir := call(t, cs, "directory", map[string]any{"community": "team"})
	if !strings.Contains(mustJSON(t, dir), `"other"`) {
		t.Fatalf("directory: %v", dir)
	}
	comm := call(t, cs, "send_to_community", map[string]any{"community": "team", "text": "anyone? " + version})
	if comm["target"] != "other" {
		t.Fatalf("send_to_community: %v", comm)
	}
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	must(t, err)
	return string(b)
}

// TestInboxContextBeyondAPage: inbox with a contextId lists that
// conversation's tasks although more than a page of other tasks waits
// before them.
func TestInboxContextBeyondAPage(t *testing.T) {
	w := newWorld(t, "sqlite", nil)
	g := w.agent("helper")
	bob := w.token("peer", "", g.ID, "bob")
	for i := range mcpserver.DefaultInboxLimit + 5 {
		w.peerSends(g, bob, fmt.Sprintf("filler %d", i))
	}
	res := w.a2a(g, bob, "SendMessage", map[string]any{"message": map[string]any{"messageId": switchboard.NewID(), "role": "ROLE_USER",
		"contextId": "ctx-late", "parts": []any{map[string]any{"text": "the late one"}}}})
	want := res["task"].(map[string]any)["id"].(string)
	cs := connect(t, w.mcpURL(g), w.mcpToken(g, "claude"), "2026-07-28")
	got := call(t, cs, "inbox", map[string]any{"contextId": "ctx-late"})
	tasks, _ := got["tasks"].([]any)
	if len(tasks) != 1 || tasks[0].(map[string]any)["id"] != want || got["nextCursor"] != nil {
		t.Fatalf("inbox of ctx-late: %v", got)
	}
}
