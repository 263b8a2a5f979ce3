package a2aedge_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/internal/facetest"
	"github.com/switchboard-dev/switchboard/relay"
)

func TestAuthentication(t *testing.T) {
	h := facetest.New(t)
	g, other := h.Agent("alice"), h.Agent("other")
	good := h.PeerToken(g, "bob")
	body := `{"jsonrpc":"2.0","id":42,"method":"GetTask","params":{"id":"x"}}`

	t.Run("NoToken", func(t *testing.T) {
		r := h.RPC(h.Addr(g), "", body)
		facetest.WantRPCError(t, r, http.StatusUnauthorized, -31401)
		if r.JSON["id"] != float64(42) {
			t.Fatalf("id not echoed: %s", r.Body)
		}
		want := `Bearer realm="a2a", resource_metadata="` + h.Server.URL + `/.well-known/oauth-protected-resource/a/alice"`
		if got := r.Header.Get("WWW-Authenticate"); got != want {
			t.Fatalf("WWW-Authenticate = %q, want %q", got, want)
		}
	})
	t.Run("BadToken", func(t *testing.T) {
		r := h.RPC(h.Addr(g), "sbp_not-a-real-token", `{"jsonrpc":"2.0","id":"abc","method":"GetTask","params":{}}`)
		facetest.WantRPCError(t, r, http.StatusUnauthorized, -31401)
		if r.JSON["id"] != "abc" {
			t.Fatalf("id not echoed: %s", r.Body)
		}
		if got := r.Header.Get("WWW-Authenticate"); !strings.Contains(got, `error="invalid_token"`) {
			t.Fatalf("WWW-Authenticate = %q", got)
		}
	})
	t.Run("OwnerTokenIsNotAPeerToken", func(t *testing.T) {
		facetest.WantRPCError(t, h.RPC(h.Addr(g), h.OperatorToken, body), http.StatusUnauthorized, -31401)
	})
	t.Run("OtherAgentsToken", func(t *testing.T) {
		facetest.WantRPCError(t, h.RPC(h.Addr(other), good, body), http.StatusUnauthorized, -31401)
	})
	t.Run("RevokedToken", func(t *testing.T) {
		tok := h.PeerToken(g, "carol")
		facetest.WantRPCError(t, h.RPC(h.Addr(g), tok, body), http.StatusOK, -32001) // accepted, task not found
		kind, label := switchboard.TokenPeer, "carol"
		n, err := h.DB.RevokeTokens(context.Background(), switchboard.TokenFilter{Kind: &kind, AgentID: &g.ID, Label: &label})
		if err != nil || n != 1 {
			t.Fatalf("revoke: %d %v", n, err)
		}
		facetest.WantRPCError(t, h.RPC(h.Addr(g), tok, body), http.StatusUnauthorized, -31401)
	})
	t.Run("GarbageBodyStill401", func(t *testing.T) {
		r := h.RPC(h.Addr(g), "", "{{{")
		facetest.WantRPCError(t, r, http.StatusUnauthorized, -31401)
		if string(r.Body) == "" || r.JSON["id"] != nil {
			t.Fatalf("unexpected id: %s", r.Body)
		}
	})
	t.Run("UnknownAgent", func(t *testing.T) {
		r := h.RPC(h.Server.URL+"/a/nobody", good, body)
		if r.Status != http.StatusNotFound {
			t.Fatalf("status %d", r.Status)
		}
	})
}

func TestEnvelopeErrors(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	tok := h.PeerToken(g, "bob")
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
			r := h.RPC(h.Addr(g), tok, tc.body)
			facetest.WantRPCError(t, r, tc.status, tc.code)
			if r.JSON["id"] != tc.id {
				t.Fatalf("id = %v, want %v", r.JSON["id"], tc.id)
			}
			if r.JSON["jsonrpc"] != "2.0" {
				t.Fatalf("jsonrpc = %v", r.JSON["jsonrpc"])
			}
		})
	}
}

func TestVersionHeader(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	tok := h.PeerToken(g, "bob")
	body := `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"nope"}}`
	for _, v := range []string{"", "1.0", "1", "0.3", "1.0.2", "0.3.0"} {
		r := h.RPC(h.Addr(g), tok, body, "A2A-Version", v)
		facetest.WantRPCError(t, r, http.StatusOK, -32001)
	}
	for _, v := range []string{"9.9", "2.0", "0.2", "latest"} {
		r := h.RPC(h.Addr(g), tok, body, "A2A-Version", v)
		facetest.WantRPCError(t, r, http.StatusOK, -32009)
		if !strings.Contains(string(r.Body), "VERSION_NOT_SUPPORTED") {
			t.Fatalf("1.0 error without ErrorInfo: %s", r.Body)
		}
	}
	r := h.RPC(h.Addr(g)+"?A2A-Version=7.0", tok, body)
	facetest.WantRPCError(t, r, http.StatusOK, -32009)
	// 0.3 methods get 0.3-shaped errors: no data array.
	r = h.RPC(h.Addr(g), tok, `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"nope"}}`, "A2A-Version", "0.3")
	facetest.WantRPCError(t, r, http.StatusOK, -32001)
	if _, ok := r.JSON["error"].(map[string]any)["data"]; ok {
		t.Fatalf("0.3 error carries data: %s", r.Body)
	}
}

func TestBodyLimit(t *testing.T) {
	h := facetest.New(t, facetest.WithConfig(func(c *httpapi.Config) { c.MaxBody = 2048 }))
	g := h.Agent("alice")
	tok := h.PeerToken(g, "bob")
	big := strings.Repeat("x", 4096)
	r := h.Call(h.Addr(g), tok, "SendMessage", facetest.UserMessage("m1", big))
	if r.Status != http.StatusRequestEntityTooLarge || r.RPCErrorCode() != -32600 {
		t.Fatalf("got %d %s", r.Status, r.Body)
	}
	// Nothing of the refused message was stored, and a small one still works.
	page, err := h.Tasks.ListTasks(context.Background(), h.PeerOf(tok), relay.TaskQuery{})
	facetest.Must(t, err)
	if page.TotalSize != 0 {
		t.Fatalf("a refused body created %d tasks", page.TotalSize)
	}
	h.Send(g, tok, "m2", "small")

	// A body larger than it claims is refused too (chunked, no length).
	req, err := http.NewRequest("POST", h.Addr(g), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"x":"`+big+`"}}`))
	facetest.Must(t, err)
	req.ContentLength = -1
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	facetest.Must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("chunked: status %d", resp.StatusCode)
	}
}

func TestRateLimit(t *testing.T) {
	h := facetest.New(t, facetest.WithRate(3))
	now := time.Date(2026, 1, 1, 10, 0, 15, 0, time.UTC) // mid-window, whatever the clock says
	h.Limiter.Now = func() time.Time { return now }
	g := h.Agent("alice")
	bob, carol := h.PeerToken(g, "bob"), h.PeerToken(g, "carol")
	for i := range 3 {
		r := h.Call(h.Addr(g), bob, "GetTask", map[string]any{"id": "x"})
		if r.Status != http.StatusOK {
			t.Fatalf("request %d: %d", i, r.Status)
		}
	}
	r := h.Call(h.Addr(g), bob, "SendMessage", facetest.UserMessage("m1", "over the limit"))
	facetest.WantRPCError(t, r, http.StatusTooManyRequests, -32000)
	if ra := r.Header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Fatalf("Retry-After = %q", ra)
	}
	// The refused message was not stored; other peers are not limited.
	if _, err := h.DB.FindTaskByMessageID(context.Background(), g.ID, h.PeerOf(bob).ID, "m1"); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("refused message stored: %v", err)
	}
	if r := h.Call(h.Addr(g), carol, "GetTask", map[string]any{"id": "x"}); r.Status != http.StatusOK {
		t.Fatalf("carol limited: %d", r.Status)
	}
}

func TestCORSPreflight(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	r := h.Do("OPTIONS", h.Addr(g), map[string]string{"Origin": "https://example.com", "Access-Control-Request-Method": "POST"}, "")
	if r.Status != http.StatusNoContent || r.Header.Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(r.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("preflight: %d %v", r.Status, r.Header)
	}
	if r := h.Do("PUT", h.Addr(g), nil, ""); r.Status != http.StatusMethodNotAllowed {
		t.Fatalf("PUT: %d", r.Status)
	}
}

func TestTrailingSlashAddress(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	tok := h.PeerToken(g, "bob")
	r := h.Call(h.Addr(g)+"/", tok, "SendMessage", facetest.UserMessage("m1", "hi"))
	if facetest.Path(r.Result(t), "task", "status", "state") != "TASK_STATE_SUBMITTED" {
		t.Fatalf("trailing slash: %s", r.Body)
	}
	r = h.Call(h.Server.URL+"/a/ALICE", tok, "GetTask", map[string]any{"id": "x"})
	facetest.WantRPCError(t, r, http.StatusOK, -32001) // handles are case-insensitive
}

func TestNotFound(t *testing.T) {
	h := facetest.New(t)
	if r := h.Do("GET", h.Server.URL+"/nothing-here", nil, ""); r.Status != http.StatusNotFound || r.JSON["error"] == nil {
		t.Fatalf("404: %d %s", r.Status, r.Body)
	}
}
