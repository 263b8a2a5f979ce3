package mcpserver_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/ratelimit"
)

// modern is a 2026-07-28 request body: the version and the client's
// capabilities in _meta.
func modern(method, version, params string) string {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `","io.modelcontextprotocol/clientCapabilities":{}}`
	if params != "" {
		meta += "," + params
	}
	return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{` + meta + `}}`
}

const legacyList = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`

// post sends an MCP request with the headers a client sends, plus hdr
// (an empty value removes a header).
func (w *world) post(url, token, body string, hdr map[string]string) *response {
	w.t.Helper()
	h := map[string]string{"Accept": "application/json, text/event-stream"}
	for k, v := range hdr {
		h[k] = v
	}
	return w.do("POST", url, token, body, h)
}

func rpcError(r *response) (code int, data map[string]any) {
	e, _ := r.json["error"].(map[string]any)
	c, _ := e["code"].(float64)
	data, _ = e["data"].(map[string]any)
	return int(c), data
}

// TestHTTPErrors checks each refusal of the endpoint, raw, status and
// JSON-RPC code.
func TestHTTPErrors(t *testing.T) {
	w := newWorld(t, "sqlite", nil)
	g := w.agent("helper")
	secret := w.mcpToken(g, "claude")
	url := w.mcpURL(g)
	v2026 := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}

	t.Run("OK", func(t *testing.T) {
		r := w.post(url, secret, legacyList, map[string]string{"MCP-Protocol-Version": "2025-06-18"})
		if r.status != http.StatusOK || !strings.Contains(r.body, `"name":"inbox"`) || r.header.Get("Mcp-Session-Id") != "" {
			t.Fatalf("HTTP %d session %q: %s", r.status, r.header.Get("Mcp-Session-Id"), r.body)
		}
		r = w.post(url, secret, modern("tools/list", "2026-07-28", ""), v2026)
		if r.status != http.StatusOK || !strings.Contains(r.body, `"name":"inbox"`) {
			t.Fatalf("2026-07-28 tools/list: HTTP %d %s", r.status, r.body)
		}
		r = w.post(url, secret, modern("server/discover", "2026-07-28", ""),
			map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"})
		if r.status != http.StatusOK || !strings.Contains(r.body, `"2025-03-26"`) {
			t.Fatalf("server/discover: HTTP %d %s", r.status, r.body)
		}
	})
	t.Run("MethodNotAllowed", func(t *testing.T) {
		for _, m := range []string{"GET", "DELETE", "PUT"} {
			r := w.do(m, url, secret, "", nil)
			if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "POST" {
				t.Errorf("%s: HTTP %d Allow %q, want 405 Allow POST", m, r.status, r.header.Get("Allow"))
			}
		}
	})
	t.Run("ForeignOrigin", func(t *testing.T) {
		r := w.post(url, secret, legacyList, map[string]string{"Origin": "https://evil.example"})
		if r.status != http.StatusForbidden {
			t.Fatalf("foreign Origin: HTTP %d %s", r.status, r.body)
		}
		if r := w.post(url, secret, legacyList, map[string]string{"Origin": w.srv.URL}); r.status != http.StatusOK {
			t.Fatalf("own Origin: HTTP %d %s", r.status, r.body)
		}
	})
	t.Run("TokenInQuery", func(t *testing.T) {
		for _, q := range []string{"?token=" + secret, "?access_token=x", "?Authorization=x", "?x=1&auth=2"} {
			if r := w.post(url+q, secret, legacyList, nil); r.status != http.StatusBadRequest {
				t.Errorf("%s: HTTP %d, want 400", q, r.status)
			}
		}
		if r := w.post(url+"?x=1", secret, legacyList, nil); r.status != http.StatusOK {
			t.Errorf("an innocent query: HTTP %d, want 200", r.status)
		}
	})
	t.Run("UnsupportedVersion", func(t *testing.T) {
		for _, v := range []string{"2024-11-05", "2099-01-01", "banana"} {
			r := w.post(url, secret, modern("tools/list", v, ""), map[string]string{"MCP-Protocol-Version": v, "Mcp-Method": "tools/list"})
			code, data := rpcError(r)
			if r.status != http.StatusBadRequest || code != -32022 || data["requested"] != v || len(data["supported"].([]any)) != 4 {
				t.Errorf("%s: HTTP %d code %d data %v, want 400 -32022 with the 4 versions", v, r.status, code, data)
			}
		}
	})
	t.Run("HeaderMismatch", func(t *testing.T) {
		cases := map[string]struct {
			body string
			hdr  map[string]string
		}{
			"VersionHeaderOlder": {modern("tools/list", "2026-07-28", ""), map[string]string{"MCP-Protocol-Version": "2025-11-25", "Mcp-Method": "tools/list"}},
			"NoVersionHeader":    {modern("tools/list", "2026-07-28", ""), map[string]string{"Mcp-Method": "tools/list"}},
			"MethodHeader":       {modern("tools/list", "2026-07-28", ""), map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"}},
			"NameHeader": {modern("tools/call", "2026-07-28", `"name":"inbox","arguments":{}`),
				map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "reply"}},
		}
		for name, c := range cases {
			r := w.post(url, secret, c.body, c.hdr)
			if code, _ := rpcError(r); r.status != http.StatusBadRequest || code != -32020 {
				t.Errorf("%s: HTTP %d code %d, want 400 -32020: %s", name, r.status, code, r.body)
			}
		}
		// A 2026-07-28 header over a body that names no version: invalid
		// params, as the SDK answers (docs/mcp.md).
		r := w.post(url, secret, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`,
			map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"})
		if code, _ := rpcError(r); r.status != http.StatusBadRequest || code != -32602 {
			t.Errorf("HeaderWithoutMeta: HTTP %d code %d, want 400 -32602: %s", r.status, code, r.body)
		}
	})
	t.Run("WrongTokens", func(t *testing.T) {
		other := w.agent("other")
		tokens := map[string]string{
			"None":          "",
			"Malformed":     "x",
			"Owner":         w.ownerToken,
			"Peer":          w.token(switchboard.TokenPeer, "", g.ID, "bob"),
			"Agent":         w.token(switchboard.TokenAgent, "", g.ID, ""),
			"MCPOfOther":    w.mcpToken(other, "claude"),
			"MCPWithPrefix": "sbm_" + strings.Repeat("A", 43),
		}
		for name, tok := range tokens {
			r := w.post(url, tok, legacyList, nil)
			if r.status != http.StatusUnauthorized || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s: HTTP %d (challenge %q), want 401", name, r.status, r.header.Get("WWW-Authenticate"))
			}
			// RFC 6750 section 3.1: invalid_token for a token that does not
			// open the endpoint, no error for a request without one.
			if invalid := strings.Contains(r.header.Get("WWW-Authenticate"), `error="invalid_token"`); invalid != (tok != "") {
				t.Errorf("%s: challenge %q", name, r.header.Get("WWW-Authenticate"))
			}
		}
		// The MCP token opens nothing else: not the owner API, not the
		// agent's A2A address.
		if r := w.do("GET", "/agents", secret, "", nil); r.status != http.StatusUnauthorized {
			t.Errorf("the MCP token on GET /agents: HTTP %d, want 401", r.status)
		}
		if r := w.do("POST", "/a/"+g.Handle, secret, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`,
			map[string]string{"A2A-Version": "1.0"}); r.status != http.StatusUnauthorized {
			t.Errorf("the MCP token on the A2A address: HTTP %d, want 401", r.status)
		}
	})
	t.Run("Revoked", func(t *testing.T) {
		tok := w.mcpToken(g, "short-lived")
		list := w.do("GET", "/agents/"+g.Handle+"/mcp-tokens", w.ownerToken, "", nil)
		id := ""
		for _, line := range strings.Split(list.body, "},{") {
			if strings.Contains(line, `"label":"short-lived"`) {
				id = line[strings.Index(line, `"id":"`)+6:][:16]
			}
		}
		if r := w.do("DELETE", "/mcp-tokens/"+id, w.ownerToken, "", nil); r.status != http.StatusOK {
			t.Fatalf("revoke %q: HTTP %d %s", id, r.status, r.body)
		}
		if r := w.post(url, tok, legacyList, nil); r.status != http.StatusUnauthorized {
			t.Fatalf("a revoked token: HTTP %d, want 401", r.status)
		}
	})
	t.Run("AgentMCPOff", func(t *testing.T) {
		off := w.agent("quiet")
		tok := w.mcpToken(off, "claude")
		r := w.do("PATCH", "/agents/quiet", w.ownerToken, `{"mcp":false}`, nil)
		if r.status != http.StatusOK || r.json["mcp"] != false || r.json["mcp_url"] != nil {
			t.Fatalf("PATCH mcp false: HTTP %d %s", r.status, r.body)
		}
		if r := w.post(w.mcpURL(off), tok, legacyList, nil); r.status != http.StatusNotFound {
			t.Fatalf("MCP off: HTTP %d, want 404", r.status)
		}
		w.do("PATCH", "/agents/quiet", w.ownerToken, `{"mcp":true}`, nil)
		if r := w.post(w.mcpURL(off), tok, legacyList, nil); r.status != http.StatusOK {
			t.Fatalf("MCP on again: HTTP %d, want 200", r.status)
		}
	})
	t.Run("Notification", func(t *testing.T) {
		r := w.post(url, secret, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil)
		if r.status != http.StatusAccepted {
			t.Fatalf("a notification: HTTP %d %s", r.status, r.body)
		}
	})
}

// TestRateLimit: 60 calls a minute per token, then 429 with Retry-After;
// another token of the agent has its own count.
func TestRateLimit(t *testing.T) {
	lim := ratelimit.NewMemory(60, time.Minute)
	now := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	lim.Now = func() time.Time { return now }
	w := newWorld(t, "sqlite", lim)
	g := w.agent("helper")
	first, second := w.mcpToken(g, "one"), w.mcpToken(g, "two")
	for i := range 60 {
		if r := w.post(w.mcpURL(g), first, legacyList, nil); r.status != http.StatusOK {
			t.Fatalf("call %d: HTTP %d", i+1, r.status)
		}
	}
	r := w.post(w.mcpURL(g), first, legacyList, nil)
	if code, _ := rpcError(r); r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != "60" || code != -32029 {
		t.Fatalf("call 61: HTTP %d Retry-After %q code %d, want 429, 60, -32029", r.status, r.header.Get("Retry-After"), code)
	}
	if r := w.post(w.mcpURL(g), second, legacyList, nil); r.status != http.StatusOK {
		t.Fatalf("another token: HTTP %d, want 200", r.status)
	}
	// A grant's new token (an OAuth refresh keeps the label) goes on with
	// the grant's count.
	tok, err := w.db.FindTokenByHash(context.Background(), switchboard.HashToken(first))
	must(t, err)
	refreshed, hash := switchboard.NewToken(switchboard.TokenMCP)
	must(t, w.db.CreateToken(context.Background(), &switchboard.Token{Hash: hash, Kind: switchboard.TokenMCP, AgentID: g.ID,
		AccountID: tok.AccountID, Label: tok.Label, CreatedAt: now}, true))
	if r := w.post(w.mcpURL(g), refreshed, legacyList, nil); r.status != http.StatusTooManyRequests {
		t.Fatalf("the grant's new token: HTTP %d, want 429", r.status)
	}
	now = now.Add(time.Minute)
	if r := w.post(w.mcpURL(g), refreshed, legacyList, nil); r.status != http.StatusOK {
		t.Fatalf("the next minute: HTTP %d, want 200", r.status)
	}
}

// TestLastUsed: the token list shows when a token was last used.
func TestLastUsed(t *testing.T) {
	w := newWorld(t, "sqlite", nil)
	g := w.agent("helper")
	tok := w.mcpToken(g, "claude")
	if r := w.do("GET", "/mcp-tokens", w.ownerToken, "", nil); !strings.Contains(r.body, `"last_used_at":null`) {
		t.Fatalf("before any use: %s", r.body)
	}
	w.post(w.mcpURL(g), tok, legacyList, nil)
	hash := switchboard.HashToken(tok)
	toks, err := w.db.FindTokens(context.Background(), switchboard.TokenFilter{AgentID: &g.ID})
	must(t, err)
	for _, x := range toks {
		if x.Hash == hash && x.LastUsedAt == nil {
			t.Fatal("the token's use was not recorded")
		}
	}
	if r := w.do("GET", "/mcp-tokens", w.ownerToken, "", nil); strings.Contains(r.body, `"last_used_at":null`) {
		t.Fatalf("after a use: %s", r.body)
	}
}
