package mcpserver_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/mcpserver"
)

// TestAccountEndpoint drives {base}/mcp with an account MCP token: every
// tool takes the agent it acts for, limited to the token's agents, and
// create_agent makes one agent at most, which the token then acts for.
func TestAccountEndpoint(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		w := newWorld(t, kind, nil)
		one, other := w.agent("one"), w.agent("other")
		w.agent("two")
		r := w.do("POST", "/mcp-tokens", w.ownerToken, `{"label":"desk","agents":["one","two"]}`, nil)
		if r.status != http.StatusCreated || r.json["mcp_url"] != w.srv.URL+"/mcp" {
			t.Fatalf("mint an account token: HTTP %d %s", r.status, r.body)
		}
		secret := r.json["token"].(string)
		bob := w.token(switchboard.TokenPeer, "", one.ID, "bob")
		for _, version := range []string{"2026-07-28", "2025-06-18"} {
			t.Run(version, func(t *testing.T) {
				cs := connect(t, w.srv.URL+"/mcp", secret, version)
				tools, err := cs.ListTools(context.Background(), nil)
				must(t, err)
				var names []string
				for _, tool := range tools.Tools {
					names = append(names, tool.Name)
					if tool.Name != "create_agent" && !strings.Contains(mustJSON(t, tool.InputSchema), `"agent"`) {
						t.Errorf("%s: no agent argument: %s", tool.Name, mustJSON(t, tool.InputSchema))
					}
				}
				if len(names) != len(mcpserver.ToolNames)+1 || !slices.Contains(names, "create_agent") {
					t.Fatalf("tools %v", names)
				}
				taskID := w.peerSends(one, bob, "hello account "+version)
				inbox := call(t, cs, "inbox", map[string]any{"agent": "one"})
				if !strings.Contains(mustJSON(t, inbox), taskID) {
					t.Fatalf("inbox of one: %v", inbox)
				}
				call(t, cs, "reply", map[string]any{"agent": "one", "taskId": taskID, "text": "done " + version})
				if seen := w.a2a(one, bob, "GetTask", map[string]any{"id": taskID}); !strings.Contains(mustJSON(t, seen), "done "+version) {
					t.Fatalf("the peer's GetTask: %v", seen)
				}
				// Not the token's agent, or none: refused as not found.
				for _, args := range []map[string]any{{"agent": "other"}, {"agent": other.ID}, {}, {"agent": "ghost"}} {
					res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "inbox", Arguments: args})
					if err != nil || !res.IsError || !strings.HasPrefix(text(res), "Error: ") {
						t.Fatalf("inbox %v: %v %+v", args, err, res)
					}
				}
				// Another agent's task, through an agent the token acts for.
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "show_task",
					Arguments: map[string]any{"agent": "two", "taskId": taskID}})
				if err != nil || !res.IsError {
					t.Fatalf("show_task of one's task as two: %v %+v", err, res)
				}
			})
		}
		cs := connect(t, w.srv.URL+"/mcp", secret, "2026-07-28")
		created := call(t, cs, "create_agent", map[string]any{"handle": "fresh", "description": "made over MCP"})
		if created["handle"] != "fresh" || created["mode"] != "inbox" {
			t.Fatalf("create_agent: %v", created)
		}
		call(t, cs, "inbox", map[string]any{"agent": "fresh"})
		// The audit log has it: made by the MCP client holding the token,
		// from its address, in the token's account.
		entries, _, err := w.db.FindAuditEntries(context.Background(), switchboard.AuditFilter{Target: "fresh"})
		must(t, err)
		if len(entries) != 1 || entries[0].Action != switchboard.AuditAgentCreate || entries[0].ActorKind != switchboard.AuditMCPClient ||
			entries[0].ActorID != "mcp:desk" || entries[0].ClientAddr != "127.0.0.1" || entries[0].AccountID != one.AccountID {
			t.Fatalf("the audit log of create_agent: %+v", entries)
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_agent", Arguments: map[string]any{"handle": "second"}})
		if err != nil || !res.IsError {
			t.Fatalf("a second create_agent: %v %+v", err, res)
		}
		if r := w.do("GET", "/agents/second", w.ownerToken, "", nil); r.status != http.StatusNotFound {
			t.Fatalf("the refused agent exists: HTTP %d", r.status)
		}
		if list := w.do("GET", "/mcp-tokens", w.ownerToken, "", nil); !strings.Contains(list.body, `"agents":["one","two","fresh"]`) {
			t.Fatalf("the token list: %s", list.body)
		}
		// An agent's token does not open the account endpoint, and the
		// account token opens no agent's endpoint.
		if r := w.post(w.srv.URL+"/mcp", w.mcpToken(one, "solo"), legacyList, nil); r.status != http.StatusUnauthorized {
			t.Fatalf("an agent's token on /mcp: HTTP %d", r.status)
		}
		if r := w.post(w.mcpURL(one), secret, legacyList, nil); r.status != http.StatusUnauthorized {
			t.Fatalf("the account token on one's endpoint: HTTP %d", r.status)
		}
		if r := w.do("GET", "/mcp", secret, "", nil); r.status != http.StatusMethodNotAllowed {
			t.Fatalf("GET /mcp: HTTP %d", r.status)
		}
	})
}

// TestAccountTokenOwnAgentsOnly: an owner cannot mint an account token for
// another account's agent.
func TestAccountTokenOwnAgentsOnly(t *testing.T) {
	w := newWorld(t, "sqlite", nil)
	w.agent("mine")
	bobAcct := &switchboard.Account{ID: switchboard.NewID(), Name: "bob", Role: switchboard.RoleOwner}
	must(t, w.db.CreateAccount(context.Background(), bobAcct))
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: bobAcct.ID, Handle: "bobs", Name: "Bob's", Mode: switchboard.ModeInbox, AcceptsTasks: true}
	must(t, w.db.CreateAgent(context.Background(), g))
	if r := w.do("POST", "/mcp-tokens", w.ownerToken, `{"agents":["mine","bobs"]}`, nil); r.status != http.StatusNotFound {
		t.Fatalf("another account's agent: HTTP %d %s", r.status, r.body)
	}
	if r := w.do("POST", "/mcp-tokens", w.ownerToken, `{"agents":[]}`, nil); r.status != http.StatusBadRequest {
		t.Fatalf("no agents: HTTP %d %s", r.status, r.body)
	}
}

// TestAccountToolBadArguments: arguments of the wrong type on the account
// endpoint are a tool failure worded like every other ("Error: …").
func TestAccountToolBadArguments(t *testing.T) {
	w := newWorld(t, "sqlite", nil)
	w.agent("one")
	r := w.do("POST", "/mcp-tokens", w.ownerToken, `{"label":"desk","agents":["one"]}`, nil)
	cs := connect(t, w.srv.URL+"/mcp", r.json["token"].(string), "2025-06-18")
	for _, args := range []map[string]any{{"agent": 5}, {"agent": "one", "limit": "many"}} {
		if msg := toolError(t, cs, "inbox", args); !strings.HasPrefix(msg, "Error: invalid arguments: ") {
			t.Errorf("inbox %v: %q", args, msg)
		}
	}
}
