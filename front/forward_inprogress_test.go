package front

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// TestForwarderRetriesAFollowUpInProgress: an a2a-go upstream may refuse a
// follow-up sent as soon as its task waits for input ("task execution is
// already in progress": it marks the turn's execution ending after it
// writes the state). The forwarder sends it again, and the turn goes on.
func TestForwarderRetriesAFollowUpInProgress(t *testing.T) {
	u := newReflector(t, "1.0", false)
	var refused atomic.Int64
	served := u.srv.Config.Handler
	u.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Message struct {
					TaskID string `json:"taskId"`
				} `json:"message"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &req) == nil && req.Method == "SendMessage" && req.Params.Message.TaskID != "" && refused.Add(1) <= 2 {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-32603,"message":"task execution is already in progress"}}`))
			return
		}
		served.ServeHTTP(w, r)
	})
	fw := forwarderTo(t, u, switchboard.FrontCredentials{})
	first := forward(t, fw, a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("ask")), nil)
	if first.upTask == "" || !strings.Contains(strings.Join(first.events, " "), "TASK_STATE_INPUT_REQUIRED") {
		t.Fatalf("the first turn: %v (failure %q)", first.events, first.failure)
	}
	next := forward(t, fw, a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("blue")), first)
	if next.failure != "" || !strings.Contains(strings.Join(next.events, " "), "TASK_STATE_COMPLETED") {
		t.Fatalf("the follow-up: %v (failure %q)", next.events, next.failure)
	}
	if n := refused.Load(); n != 3 {
		t.Fatalf("%d follow-ups sent, want two refused and one taken", n)
	}
}
