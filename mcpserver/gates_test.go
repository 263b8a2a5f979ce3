package mcpserver_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/outbox"
)

// TestAuthenticationGates: the endpoints take an MCP token only as a
// Bearer credential, and the account endpoint takes no token of a
// disabled account.
func TestAuthenticationGates(t *testing.T) {
	w := newWorld(t, "sqlite", nil)
	g := w.agent("helper")
	secret := w.mcpToken(g, "claude")
	if r := w.post(w.mcpURL(g), "", legacyList, map[string]string{"Authorization": "Token " + secret}); r.status != http.StatusUnauthorized {
		t.Errorf("the token under another scheme: HTTP %d %s", r.status, r.body)
	}
	if r := w.post(w.mcpURL(g), secret, legacyList, nil); r.status != http.StatusOK {
		t.Fatalf("the token as Bearer: HTTP %d %s", r.status, r.body)
	}
	acct := w.accountToken(t, []string{g.ID})
	if r := w.post(w.srv.URL+"/mcp", acct, legacyList, nil); r.status != http.StatusOK {
		t.Fatalf("an account token: HTTP %d %s", r.status, r.body)
	}
	_, err := w.db.UpdateAccount(context.Background(), w.owner.ID, switchboard.AccountUpdate{Disabled: new(true)})
	must(t, err)
	if r := w.post(w.srv.URL+"/mcp", acct, legacyList, nil); r.status != http.StatusUnauthorized {
		t.Errorf("a disabled account's token: HTTP %d %s", r.status, r.body)
	}
}

// accountToken stores an account MCP token of the owner for the agents.
func (w *world) accountToken(t *testing.T, agents []string) string {
	t.Helper()
	secret, hash := switchboard.NewToken(switchboard.TokenMCP)
	must(t, w.db.CreateToken(context.Background(), &switchboard.Token{Hash: hash, Kind: switchboard.TokenMCP, AccountID: w.owner.ID,
		Agents: agents, Label: "desk"}, false))
	return secret
}

// TestAccountTokenReachesOnlyItsAccountsServedAgents: an account token
// that names an agent of another account (a token row no minting makes),
// or an agent whose MCP endpoint is off, cannot act for it.
func TestAccountTokenReachesOnlyItsAccountsServedAgents(t *testing.T) {
	w := newWorld(t, "sqlite", nil)
	ctx := context.Background()
	mine := w.agent("mine")
	otherAcct := &switchboard.Account{ID: switchboard.NewID(), Name: "mallory", Role: switchboard.RoleOwner}
	must(t, w.db.CreateAccount(ctx, otherAcct))
	theirs := &switchboard.Agent{ID: switchboard.NewID(), AccountID: otherAcct.ID, Handle: "theirs", Name: "Theirs",
		Mode: switchboard.ModeInbox, Version: "1.0.0", AcceptsTasks: true, Approved: true}
	must(t, w.db.CreateAgent(ctx, theirs))
	cs := connect(t, w.srv.URL+"/mcp", w.accountToken(t, []string{mine.ID, theirs.ID}), "2026-07-28")
	inbox := func(agent string) *mcp.CallToolResult {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "inbox", Arguments: map[string]any{"agent": agent}})
		must(t, err)
		return res
	}
	if res := inbox("mine"); res.IsError {
		t.Fatalf("its own agent: %s", text(res))
	}
	if res := inbox("theirs"); !res.IsError {
		t.Errorf("another account's agent was served")
	}
	_, err := w.db.UpdateAgent(ctx, mine.ID, switchboard.AgentUpdate{MCPOff: new(true)})
	must(t, err)
	if res := inbox("mine"); !res.IsError {
		t.Errorf("an agent with MCP off was served")
	}
}

// TestPollOutboundOfAnotherAgent: an agent's MCP token cannot read
// another agent's outbox record by its id.
func TestPollOutboundOfAnotherAgent(t *testing.T) {
	w := newWorld(t, "sqlite", nil)
	ctx := context.Background()
	one, two := w.agent("one"), w.agent("two")
	o := &switchboard.Outbound{AgentID: two.ID, Target: "bob", Endpoint: "https://bob.example/", Protocol: switchboard.ProtocolV1, Text: "two's secret"}
	must(t, outbox.New(w.db, w.db).Record(ctx, o, ""))
	cs := connect(t, w.mcpURL(one), w.mcpToken(one, "claude"), "2026-07-28")
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "poll_outbound", Arguments: map[string]any{"outboundId": o.ID}})
	must(t, err)
	if !res.IsError || strings.Contains(text(res), "two's secret") {
		t.Fatalf("one polled two's record: %s", text(res))
	}
}
