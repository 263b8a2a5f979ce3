package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// mcpTests cover what MCP adds to the stores: an agent's MCP switch and
// when an MCP token was last used.
var mcpTests = map[string]func(*testing.T, Store){
	"AgentMCPOff":   testAgentMCPOff,
	"TokenLastUsed": testTokenLastUsed,
	"TokenExpires":  testTokenExpires,
}

// testTokenExpires: a token with an expiry opens nothing once it passed;
// FindTokens still lists it, with its expiry.
func testTokenExpires(t *testing.T, s Store) {
	ctx := context.Background()
	alice := newAccount(t, s, "alice")
	g := newAgent(t, s, alice, "helper")
	kind := switchboard.TokenMCP
	past, future := time.Now().Add(-time.Second).UTC(), time.Now().Add(time.Hour).UTC()
	_, gone := switchboard.NewToken(kind)
	_, live := switchboard.NewToken(kind)
	must(t, s.CreateToken(ctx, &switchboard.Token{Hash: gone, Kind: kind, AccountID: alice.ID, AgentID: g.ID, Label: "old", ExpiresAt: &past}, false))
	must(t, s.CreateToken(ctx, &switchboard.Token{Hash: live, Kind: kind, AccountID: alice.ID, AgentID: g.ID, Label: "new", ExpiresAt: &future}, false))
	if _, err := s.FindTokenByHash(ctx, gone); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("an expired token: %v, want ENOTFOUND", err)
	}
	tok, err := s.FindTokenByHash(ctx, live)
	must(t, err)
	if tok.ExpiresAt == nil || !tok.ExpiresAt.Equal(future.Truncate(time.Microsecond)) && !tok.ExpiresAt.Equal(future) {
		t.Fatalf("expiry read back %v, want %v", tok.ExpiresAt, future)
	}
	toks, err := s.FindTokens(ctx, switchboard.TokenFilter{Kind: &kind, AgentID: &g.ID})
	must(t, err)
	if len(toks) != 2 || toks[0].ExpiresAt == nil {
		t.Fatalf("listed %+v", toks)
	}
}

func testAgentMCPOff(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	if g.MCPOff {
		t.Fatal("a new agent has MCP off")
	}
	off := true
	upd, err := s.UpdateAgent(ctx, g.ID, switchboard.AgentUpdate{MCPOff: &off})
	must(t, err)
	got, err := s.FindAgentByHandle(ctx, "helper")
	must(t, err)
	if !upd.MCPOff || !got.MCPOff {
		t.Fatalf("after the update: returned %v, found %v; want both off", upd.MCPOff, got.MCPOff)
	}
}

func testTokenLastUsed(t *testing.T, s Store) {
	ctx := context.Background()
	alice := newAccount(t, s, "alice")
	g := newAgent(t, s, alice, "helper")
	kind := switchboard.TokenMCP
	_, hash := switchboard.NewToken(kind)
	must(t, s.CreateToken(ctx, &switchboard.Token{Hash: hash, Kind: kind, AccountID: alice.ID, AgentID: g.ID, Label: "claude"}, false))
	toks, err := s.FindTokens(ctx, switchboard.TokenFilter{Kind: &kind, AgentID: &g.ID})
	must(t, err)
	if len(toks) != 1 || toks[0].LastUsedAt != nil {
		t.Fatalf("a new token: %+v, want one never used", toks)
	}
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	must(t, s.TouchToken(ctx, hash, at))
	must(t, s.TouchToken(ctx, "no-such-hash", at))
	toks, err = s.FindTokens(ctx, switchboard.TokenFilter{Kind: &kind, AgentID: &g.ID})
	must(t, err)
	if len(toks) != 1 || toks[0].LastUsedAt == nil || !toks[0].LastUsedAt.Equal(at) {
		t.Fatalf("after TouchToken: %+v, want last used at %s", toks[0], at)
	}
	if _, err := s.FindTokenByHash(ctx, hash); err != nil {
		t.Fatalf("the touched token no longer opens: %v", err)
	}
}
