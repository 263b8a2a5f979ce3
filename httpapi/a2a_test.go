package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/relay"
)

func TestAuthentication(t *testing.T) {
	h := newHarness(t)
	g, other := h.agent("alice"), h.agent("other")
	good := h.peerToken(g, "bob")
	body := `{"jsonrpc":"2.0","id":42,"method":"GetTask","params":{"id":"x"}}`

	t.Run("NoToken", func(t *testing.T) {
		r := h.rpc(h.addr(g), "", body)
		wantRPCError(t, r, http.StatusUnauthorized, -31401)
		if r.json["id"] != float64(42) {
			t.Fatalf("id not echoed: %s", r.body)
		}
		want := `Bearer realm="a2a", resource_metadata="` + h.srv.URL + `/.well-known/oauth-protected-resource/a/alice"`
		if got := r.header.Get("WWW-Authenticate"); got != want {
			t.Fatalf("WWW-Authenticate = %q, want %q", got, want)
		}
	})
	t.Run("BadToken", func(t *testing.T) {
		r := h.rpc(h.addr(g), "sbp_not-a-real-token", `{"jsonrpc":"2.0","id":"abc","method":"GetTask","params":{}}`)
		wantRPCError(t, r, http.StatusUnauthorized, -31401)
		if r.json["id"] != "abc" {
			t.Fatalf("id not echoed: %s", r.body)
		}
		if got := r.header.Get("WWW-Authenticate"); !strings.Contains(got, `error="invalid_token"`) {
			t.Fatalf("WWW-Authenticate = %q", got)
		}
	})
	t.Run("OwnerTokenIsNotAPeerToken", func(t *testing.T) {
		wantRPCError(t, h.rpc(h.addr(g), h.operatorToken, body), http.StatusUnauthorized, -31401)
	})
	t.Run("OtherAgentsToken", func(t *testing.T) {
		wantRPCError(t, h.rpc(h.addr(other), good, body), http.StatusUnauthorized, -31401)
	})
	t.Run("RevokedToken", func(t *testing.T) {
		tok := h.peerToken(g, "carol")
		wantRPCError(t, h.rpc(h.addr(g), tok, body), http.StatusOK, -32001) // accepted, task not found
		kind, label := switchboard.TokenPeer, "carol"
		n, err := h.db.RevokeTokens(context.Background(), switchboard.TokenFilter{Kind: &kind, AgentID: &g.ID, Label: &label})
		if err != nil || n != 1 {
			t.Fatalf("revoke: %d %v", n, err)
		}
		wantRPCError(t, h.rpc(h.addr(g), tok, body), http.StatusUnauthorized, -31401)
	})
	t.Run("GarbageBodyStill401", func(t *testing.T) {
		r := h.rpc(h.addr(g), "", "{{{")
		wantRPCError(t, r, http.StatusUnauthorized, -31401)
		if string(r.body) == "" || r.json["id"] != nil {
			t.Fatalf("unexpected id: %s", r.body)
		}
	})
	t.Run("UnknownAgent", func(t *testing.T) {
		r := h.rpc(h.srv.URL+"/a/nobody", good, body)
		if r.status != http.StatusNotFound {
			t.Fatalf("status %d", r.status)
		}
	})
}

func TestEnvelopeErrors(t *testing.T) {
	h := newHarness(t)
	g := h.agent("alice")
	tok := h.peerToken(g, "bob")
	tests := map[string]struct {
		body   string
		status int
		code   int
		id     any
	}{
		"ParseError":        {`{"jsonrpc":"2.0","method":"SendMessage","params":{"foo":"bar"}`, 400, -32700, nil},
		"Batch":             {`[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}]`, 400, -32600, nil},
		"NotAnObject":       {`"hello"`, 200, -32600, nil},
		"WrongVersion":      {`{"jsonrpc":"1.0","id":1,"method":"GetTask","params":{}}`, 200, -32600, float64(1)},
		"MissingJSONRPC":    {`{"id":1,"method":"GetTask"}`, 200, -32600, float64(1)},
		"MissingMethod":     {`{"jsonrpc":"2.0","id":"m","params":{}}`, 200, -32600, "m"},
		"MethodNotString":   {`{"jsonrpc":"2.0","id":"m","method":7}`, 200, -32600, "m"},
		"ObjectID":          {`{"jsonrpc":"2.0","id":{"bad":"type"},"method":"SendMessage","params":{}}`, 200, -32600, nil},
		"UnknownMethod":     {`{"jsonrpc":"2.0","id":"3","method":"SendMessageXXX","params":{}}`, 200, -32601, "3"},
		"ParamsNotObject":   {`{"jsonrpc":"2.0","id":"4","method":"GetTask","params":[1,2]}`, 200, -32602, "4"},
		"ParamsMissingMsg":  {`{"jsonrpc":"2.0","id":"4","method":"SendMessage","params":{"":"not_a_dict"}}`, 200, -32602, "4"},
		"ParamsWrongTypes":  {`{"jsonrpc":"2.0","id":"5","method":"SendMessage","params":{"message":"text"}}`, 200, -32602, "5"},
		"UnknownPartKind":   {`{"jsonrpc":"2.0","id":"6","method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"weird":1}]}}}`, 200, -32602, "6"},
		"V03WithoutKind":    {`{"jsonrpc":"2.0","id":"7","method":"message/send","params":{"message":{"messageId":"m","role":"user","parts":[{"text":"x"}]}}}`, 200, -32602, "7"},
		"NullIDIsAnswered":  {`{"jsonrpc":"2.0","id":null,"method":"Nope"}`, 200, -32601, nil},
		"NumberIDEchoed":    {`{"jsonrpc":"2.0","id":12.5,"method":"Nope"}`, 200, -32601, 12.5},
		"TrailingGarbage":   {`{"jsonrpc":"2.0","id":1,"method":"GetTask"} x`, 400, -32700, nil},
		"EmptyBody":         {``, 400, -32700, nil},
		"ExtendedCardNoCfg": {`{"jsonrpc":"2.0","id":9,"method":"GetExtendedAgentCard"}`, 200, -32007, float64(9)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := h.rpc(h.addr(g), tok, tc.body)
			wantRPCError(t, r, tc.status, tc.code)
			if r.json["id"] != tc.id {
				t.Fatalf("id = %v, want %v", r.json["id"], tc.id)
			}
			if r.json["jsonrpc"] != "2.0" {
				t.Fatalf("jsonrpc = %v", r.json["jsonrpc"])
			}
		})
	}
}

func TestVersionHeader(t *testing.T) {
	h := newHarness(t)
	g := h.agent("alice")
	tok := h.peerToken(g, "bob")
	body := `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"nope"}}`
	for _, v := range []string{"", "1.0", "1", "0.3", "1.0.2", "0.3.0"} {
		r := h.rpc(h.addr(g), tok, body, "A2A-Version", v)
		wantRPCError(t, r, http.StatusOK, -32001)
	}
	for _, v := range []string{"9.9", "2.0", "0.2", "latest"} {
		r := h.rpc(h.addr(g), tok, body, "A2A-Version", v)
		wantRPCError(t, r, http.StatusOK, -32009)
		if !strings.Contains(string(r.body), "VERSION_NOT_SUPPORTED") {
			t.Fatalf("1.0 error without ErrorInfo: %s", r.body)
		}
	}
	r := h.rpc(h.addr(g)+"?A2A-Version=7.0", tok, body)
	wantRPCError(t, r, http.StatusOK, -32009)
	// 0.3 methods get 0.3-shaped errors: no data array.
	r = h.rpc(h.addr(g), tok, `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"nope"}}`, "A2A-Version", "0.3")
	wantRPCError(t, r, http.StatusOK, -32001)
	if _, ok := r.json["error"].(map[string]any)["data"]; ok {
		t.Fatalf("0.3 error carries data: %s", r.body)
	}
}

func TestBodyLimit(t *testing.T) {
	h := newHarness(t, withConfig(func(c *httpapi.Config) { c.MaxBody = 2048 }))
	g := h.agent("alice")
	tok := h.peerToken(g, "bob")
	big := strings.Repeat("x", 4096)
	r := h.call(h.addr(g), tok, "SendMessage", userMessage("m1", big))
	if r.status != http.StatusRequestEntityTooLarge || r.rpcErrorCode() != -32600 {
		t.Fatalf("got %d %s", r.status, r.body)
	}
	// Nothing of the refused message was stored, and a small one still works.
	page, err := h.tasks.ListTasks(context.Background(), h.peerOf(tok), relay.TaskQuery{})
	must(t, err)
	if page.TotalSize != 0 {
		t.Fatalf("a refused body created %d tasks", page.TotalSize)
	}
	h.send(g, tok, "m2", "small")

	// A body larger than it claims is refused too (chunked, no length).
	req, err := http.NewRequest("POST", h.addr(g), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"x":"`+big+`"}}`))
	must(t, err)
	req.ContentLength = -1
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("chunked: status %d", resp.StatusCode)
	}
}

func TestRateLimit(t *testing.T) {
	h := newHarness(t, withRate(3))
	now := time.Date(2026, 1, 1, 10, 0, 15, 0, time.UTC) // mid-window, whatever the clock says
	h.limiter.Now = func() time.Time { return now }
	g := h.agent("alice")
	bob, carol := h.peerToken(g, "bob"), h.peerToken(g, "carol")
	for i := range 3 {
		r := h.call(h.addr(g), bob, "GetTask", map[string]any{"id": "x"})
		if r.status != http.StatusOK {
			t.Fatalf("request %d: %d", i, r.status)
		}
	}
	r := h.call(h.addr(g), bob, "SendMessage", userMessage("m1", "over the limit"))
	wantRPCError(t, r, http.StatusTooManyRequests, -32000)
	if ra := r.header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Fatalf("Retry-After = %q", ra)
	}
	// The refused message was not stored; other peers are not limited.
	if _, err := h.db.FindTaskByMessageID(context.Background(), g.ID, h.peerOf(bob).ID, "m1"); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("refused message stored: %v", err)
	}
	if r := h.call(h.addr(g), carol, "GetTask", map[string]any{"id": "x"}); r.status != http.StatusOK {
		t.Fatalf("carol limited: %d", r.status)
	}
}

func TestCORSPreflight(t *testing.T) {
	h := newHarness(t)
	g := h.agent("alice")
	r := h.do("OPTIONS", h.addr(g), map[string]string{"Origin": "https://example.com", "Access-Control-Request-Method": "POST"}, "")
	if r.status != http.StatusNoContent || r.header.Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(r.header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("preflight: %d %v", r.status, r.header)
	}
	if r := h.do("PUT", h.addr(g), nil, ""); r.status != http.StatusMethodNotAllowed {
		t.Fatalf("PUT: %d", r.status)
	}
}

func TestTrailingSlashAddress(t *testing.T) {
	h := newHarness(t)
	g := h.agent("alice")
	tok := h.peerToken(g, "bob")
	r := h.call(h.addr(g)+"/", tok, "SendMessage", userMessage("m1", "hi"))
	if path(r.result(t), "task", "status", "state") != "TASK_STATE_SUBMITTED" {
		t.Fatalf("trailing slash: %s", r.body)
	}
	r = h.call(h.srv.URL+"/a/ALICE", tok, "GetTask", map[string]any{"id": "x"})
	wantRPCError(t, r, http.StatusOK, -32001) // handles are case-insensitive
}

func TestNotFound(t *testing.T) {
	h := newHarness(t)
	if r := h.do("GET", h.srv.URL+"/nothing-here", nil, ""); r.status != http.StatusNotFound || r.json["error"] == nil {
		t.Fatalf("404: %d %s", r.status, r.body)
	}
}
