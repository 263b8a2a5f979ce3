package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/alecthomas/kong"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/ownerapi"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/server"
)

// inboxAgent creates an inbox agent through the CLI and returns it with a
// peer of it.
func inboxAgent(t *testing.T, m *server.Server, handle string) (*switchboard.Agent, switchboard.Peer, string) {
	t.Helper()
	cli(t, m, "agent", "create", handle, "--mode", "inbox")
	var tok struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(cli(t, m, "--json", "token", "issue", "--agent", handle, "bob")), &tok); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	g, err := m.DB.FindAgentByHandle(ctx, handle)
	must(t, err)
	stored, err := m.DB.FindTokenByHash(ctx, switchboard.HashToken(tok.Token))
	must(t, err)
	return g, switchboard.Peer{AgentID: g.ID, ID: stored.PeerID, Label: stored.Label}, tok.Token
}

// TestInboxPages checks that `switchboard inbox` says when an agent has
// more tasks waiting than one page holds, and how to list them, and that
// --all-pages lists every one, oldest first.
func TestInboxPages(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	g, bob, _ := inboxAgent(t, m, "helper")
	total := relay.MaxInbox + 7
	for i := range total {
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(fmt.Sprint("question ", i)))
		msg.ID = fmt.Sprint("m-", i)
		_, _, err := m.Tasks.SendMessage(context.Background(), g, bob, &a2a.SendMessageRequest{Message: msg}, switchboard.ProtocolV1)
		must(t, err)
	}
	more := "more tasks wait for agent helper than these 200 (the oldest); list them all with  switchboard inbox --agent helper --all-pages"

	out := cli(t, m, "inbox", "--agent", "helper")
	if got := strings.Count("\n"+out, "\ntask "); got != relay.MaxInbox {
		t.Fatalf("inbox listed %d tasks, want %d", got, relay.MaxInbox)
	}
	if !strings.Contains(out, more) || strings.Contains(out, "question 200\n") {
		t.Fatalf("inbox of %d tasks does not say more wait:\n%s", total, out[len(out)-400:])
	}

	out = cli(t, m, "inbox", "--agent", "helper", "--all-pages")
	if strings.Contains(out, "more tasks wait") {
		t.Fatalf("--all-pages still says more wait")
	}
	last := -1
	for i := range total {
		at := strings.Index(out, fmt.Sprintf("  | question %d\n", i))
		if at < last {
			t.Fatalf("--all-pages: question %d missing or out of order", i)
		}
		last = at
	}

	var boxes []ownerapi.Inbox
	if err := json.Unmarshal([]byte(cli(t, m, "--json", "inbox", "--agent", "helper")), &boxes); err != nil {
		t.Fatal(err)
	}
	if len(boxes) != 1 || len(boxes[0].Tasks) != relay.MaxInbox || boxes[0].NextCursor == "" {
		t.Fatalf("--json: %d boxes, want one of %d tasks with next_cursor", len(boxes), relay.MaxInbox)
	}
	boxes = nil
	if err := json.Unmarshal([]byte(cli(t, m, "--json", "inbox", "--agent", "helper", "--all-pages")), &boxes); err != nil {
		t.Fatal(err)
	}
	if len(boxes[0].Tasks) != total || boxes[0].NextCursor != "" {
		t.Fatalf("--json --all-pages: %d tasks, cursor %q; want %d and none", len(boxes[0].Tasks), boxes[0].NextCursor, total)
	}
}

// TestServeQuotaFlags checks that serve's quota flags reach the task
// service: their defaults, a value, and 0 for no limit.
func TestServeQuotaFlags(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		wantTasks int
		wantBytes int64
	}{
		{nil, relay.DefaultMaxOpenTasksPerPeer, relay.DefaultMaxPeerBytes},
		{[]string{"--max-open-tasks-per-peer", "2", "--max-peer-bytes", "5000"}, 2, 5000},
		{[]string{"--max-open-tasks-per-peer", "0", "--max-peer-bytes", "0"}, 0, 0},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cfg := parseServe(t, tc.args...)
			cfg.Addr, cfg.DataDir = "127.0.0.1:0", t.TempDir()
			m := MustRunMain(t, cfg.DataDir, "", func(c *server.Config) { c.MaxOpenTasks, c.MaxPeerBytes = cfg.MaxOpenTasks, cfg.MaxPeerBytes })
			if m.Tasks.MaxOpenTasksPerPeer != tc.wantTasks || m.Tasks.MaxPeerBytes != tc.wantBytes {
				t.Fatalf("task service: %d tasks, %d bytes; want %d, %d", m.Tasks.MaxOpenTasksPerPeer, m.Tasks.MaxPeerBytes, tc.wantTasks, tc.wantBytes)
			}
		})
	}
	t.Run("environment", func(t *testing.T) {
		t.Setenv("SWITCHBOARD_MAX_OPEN_TASKS_PER_PEER", "7")
		t.Setenv("SWITCHBOARD_MAX_PEER_BYTES", "0")
		if cfg := parseServe(t); cfg.MaxOpenTasks != 7 || cfg.MaxPeerBytes != -1 {
			t.Fatalf("from the environment: %d tasks, %d bytes; want 7, -1 (no limit)", cfg.MaxOpenTasks, cfg.MaxPeerBytes)
		}
	})
}

// parseServe parses a serve command line and returns the Config it makes.
func parseServe(t *testing.T, args ...string) server.Config {
	t.Helper()
	var c CLI
	parser, err := kong.New(&c, kong.Vars{"default_data": t.TempDir()}, serveVars())
	must(t, err)
	if _, err := parser.Parse(append([]string{"serve"}, args...)); err != nil {
		t.Fatal(err)
	}
	return c.Serve.config(&c)
}

// TestQuotaRefusalOverHTTP sends to a server started with a quota of two
// open tasks: the third is refused with the quota's code.
func TestQuotaRefusalOverHTTP(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "", func(c *server.Config) { c.MaxOpenTasks = 2 })
	_, _, token := inboxAgent(t, m, "helper")
	send := func(id string) map[string]any {
		body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"` + id + `","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`
		req, _ := http.NewRequest("POST", m.URL()+"/a/helper", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		defer resp.Body.Close()
		var out map[string]any
		must(t, json.NewDecoder(resp.Body).Decode(&out))
		return out
	}
	for _, id := range []string{"m-1", "m-2"} {
		if e := send(id)["error"]; e != nil {
			t.Fatalf("send %s: %v", id, e)
		}
	}
	e, _ := send("m-3")["error"].(map[string]any)
	if code, _ := e["code"].(float64); code != -32050 || !strings.Contains(fmt.Sprint(e["message"]), "at most 2 unfinished tasks") {
		t.Fatalf("third send: %v, want -32050 naming the limit of 2", e)
	}
}
