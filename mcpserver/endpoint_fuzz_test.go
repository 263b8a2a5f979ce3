package mcpserver_test

import (
	"strings"
	"testing"
)

// FuzzEndpoint posts arbitrary bodies and version headers to an agent's
// MCP endpoint with its token: whatever arrives, the answer is never a
// server error, and a JSON error answer carries a JSON-RPC error.
func FuzzEndpoint(f *testing.F) {
	for _, seed := range [][3]string{
		{legacyList, "2025-06-18", ""},
		{modern("tools/list", "2026-07-28", ""), "2026-07-28", "tools/list"},
		{modern("tools/call", "2026-07-28", `"name":"inbox","arguments":{"limit":3}`), "2026-07-28", "tools/call"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"reply","arguments":{"taskId":"x","text":"y"}}}`, "2025-11-25", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":[]}}`, "", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{}}}`, "", ""},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, "", ""},
		{`{`, "", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, "2026-07-28", "tools/list"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	w := newWorld(f, "sqlite", nil)
	g := w.agent("helper")
	secret := w.mcpToken(g, "fuzz")
	w.peerSends(g, w.token("peer", "", g.ID, "bob"), "hello")
	url := w.mcpURL(g)
	f.Fuzz(func(t *testing.T, body, version, method string) {
		hdr := map[string]string{}
		if version != "" && validHeader(version) {
			hdr["MCP-Protocol-Version"] = version
		}
		if method != "" && validHeader(method) {
			hdr["Mcp-Method"] = method
		}
		wt := *w
		wt.t = t
		r := wt.post(url, secret, body, hdr)
		if r.status >= 500 {
			t.Fatalf("HTTP %d for %q: %s", r.status, body, r.body)
		}
		if r.status >= 400 && strings.HasPrefix(r.header.Get("Content-Type"), "application/json") && r.json["error"] == nil {
			t.Fatalf("HTTP %d JSON without an error for %q: %s", r.status, body, r.body)
		}
	})
}

// validHeader reports whether s may be sent as a header value.
func validHeader(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return false
		}
	}
	return len(s) < 200
}
