package a2aedge_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/facetest"
)

// FuzzSendMessage feeds arbitrary params to the send methods of both
// versions through the whole HTTP pipeline. Whatever arrives, the answer is
// one valid JSON-RPC response, and a message that was accepted is stored
// and can be read back.
func FuzzSendMessage(f *testing.F) {
	for _, seed := range []struct{ method, params string }{
		{"SendMessage", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`},
		{"SendMessage", `{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"data":{"a":[1,2]}},{"url":"https://x/y","mediaType":"a/b"}]},"configuration":{"historyLength":1}}`},
		{"SendMessage", `{"message":{"messageId":"m3","role":"ROLE_USER","contextId":"c","parts":[{"raw":"AAEC","filename":"f"}]},"metadata":{"k":null}}`},
		{"SendMessage", `{"message":{"messageId":"m4","role":"ROLE_USER","taskId":"nope","parts":[{"text":""}]}}`},
		{"SendMessage", `{"message":{"role":"ROLE_AGENT","parts":[]}}`},
		{"message/send", `{"message":{"kind":"message","messageId":"m5","role":"user","parts":[{"kind":"text","text":"hi"}]}}`},
		{"message/send", `{"message":{"kind":"message","messageId":"m6","role":"user","parts":[{"kind":"file","file":{"uri":"https://x","mimeType":"t/p"}},{"kind":"data","data":{}}]},"configuration":{"blocking":false}}`},
		{"message/send", `{"message":{"kind":"message","messageId":"m7","role":"user","parts":[{"kind":"file","file":{"bytes":"AA=="}}]}}`},
		{"message/send", `{"message":{"kind":"bogus"}}`},
		{"SendMessage", `{"message":null}`},
		{"message/send", `{}`},
		{"message/send", `{"message":{"messageId":"0","role":"user","parts":[{"kind":"data"}]}}`},
		{"message/send", `{"messAge":{"messAgeId":"0","role":"user","pArts":[{"kind":"data"}]}}`},
	} {
		f.Add(seed.method == "message/send", seed.params)
	}
	h := facetest.New(f)
	// Accepted inputs make tasks of the one peer: past its quota of
	// unfinished tasks (quota_test.go) every valid send would be refused,
	// and the accepted path would no longer be fuzzed.
	h.Tasks.MaxOpenTasksPerPeer, h.Tasks.MaxPeerBytes = 0, 0
	g := h.Agent("fuzz")
	tok := h.PeerToken(g, "fuzzer")
	f.Fuzz(func(t *testing.T, legacy bool, params string) {
		method, get := "SendMessage", "GetTask"
		if legacy {
			method, get = "message/send", "tasks/get"
		}
		body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
		result := checkAnswer(t, body, facetest.ServeRPC(h, tok, body), "1")
		if result == nil {
			return
		}
		var task struct {
			ID   string `json:"id"`
			Task struct {
				ID string `json:"id"`
			} `json:"task"`
		}
		if err := json.Unmarshal(result, &task); err != nil {
			t.Fatalf("result: %v", err)
		}
		id := task.ID
		if !legacy {
			id = task.Task.ID
		}
		idJSON, _ := json.Marshal(id)
		got := facetest.ServeRPC(h, tok, `{"jsonrpc":"2.0","id":2,"method":"`+get+`","params":{"id":`+string(idJSON)+`}}`)
		if strings.Contains(got.Body.String(), `"error"`) {
			t.Fatalf("accepted task %q cannot be read: %s", id, got.Body.String())
		}
	})
}

// checkAnswer fails t unless rec is one JSON-RPC answer to the request
// body with id, with a result or an error that is not an internal error,
// and returns the result (nil for an error).
func checkAnswer(t *testing.T, body string, rec *httptest.ResponseRecorder, id string) json.RawMessage {
	t.Helper()
	if rec.Code != http.StatusOK && rec.Code != http.StatusBadRequest {
		t.Fatalf("status %d for %s: %s", rec.Code, body, rec.Body.Bytes())
	}
	var resp struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || resp.JSONRPC != "2.0" {
		t.Fatalf("answer is not JSON-RPC: %v %s", err, rec.Body.Bytes())
	}
	if (resp.Error == nil) == (resp.Result == nil) {
		t.Fatalf("answer needs exactly one of result and error: %s", rec.Body.Bytes())
	}
	if resp.Error != nil {
		if resp.Error.Code == -32603 {
			t.Fatalf("internal error for %s: %s", body, rec.Body.Bytes())
		}
		return nil
	}
	if string(resp.ID) != id {
		t.Fatalf("answer to id %s has id %s", id, resp.ID)
	}
	return resp.Result
}
