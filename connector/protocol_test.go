package connector_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/internal/testwait"
)

// scriptedServer accepts one connector connection and runs script on it:
// a fake at the edge, for frames the real server never sends.
func scriptedServer(t *testing.T, script func(ctx context.Context, ws *websocket.Conn)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{connector.Subprotocol}})
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx, cancel := context.WithTimeout(r.Context(), testwait.Timeout)
		defer cancel()
		script(ctx, ws)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// wireFrame is any JSON-RPC frame, as the fake server reads it.
type wireFrame struct {
	ID     string          `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code int `json:"code"`
	} `json:"error"`
}

func readFrame(ctx context.Context, t *testing.T, ws *websocket.Conn) wireFrame {
	_, data, err := ws.Read(ctx)
	if err != nil {
		t.Errorf("read: %v", err)
		return wireFrame{}
	}
	var f wireFrame
	if err := json.Unmarshal(data, &f); err != nil {
		t.Errorf("decode %s: %v", data, err)
	}
	return f
}

func writeFrame(ctx context.Context, t *testing.T, ws *websocket.Conn, frame string) {
	if err := ws.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		t.Errorf("write: %v", err)
	}
}

// TestProtocolEdges drives the client with frames the real server never
// sends, or sends only in a race: an offer ahead of the answer to hello, a
// JSON-RPC ping, an unknown method, a malformed offer. It checks each
// answer, that the acknowledgement of an offer precedes the reports about
// it (here the answer: a worker was idle, so the acknowledgement itself
// says working), and that close code 4004 stops Run.
func TestProtocolEdges(t *testing.T) {
	const offer = `{"jsonrpc":"2.0","id":"d1","method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER",
		"taskId":"t1","contextId":"c1","parts":[{"text":"hi"}]},"metadata":{"switchboard":{"from":"bob","attempt":1,"newTask":true}}}}`
	url := scriptedServer(t, func(ctx context.Context, ws *websocket.Conn) {
		if f := readFrame(ctx, t, ws); f.Method != "hello" {
			t.Errorf("first frame: got %q, want hello", f.Method)
		}
		writeFrame(ctx, t, ws, offer) // ahead of the answer to hello
		writeFrame(ctx, t, ws, `{"jsonrpc":"2.0","id":"hello","result":{"agent":{"handle":"edge"},"heartbeatSeconds":15}}`)
		writeFrame(ctx, t, ws, `{"jsonrpc":"2.0","id":"p1","method":"ping"}`)
		writeFrame(ctx, t, ws, `{"jsonrpc":"2.0","id":"b1","method":"Bogus","params":{}}`)
		writeFrame(ctx, t, ws, `{"jsonrpc":"2.0","id":"bad","method":"SendMessage","params":{"message":{"parts":[]}}}`)

		got := map[string]wireFrame{}
		var order []string
		updates := 0
		for len(got) < 5 {
			f := readFrame(ctx, t, ws)
			if t.Failed() {
				return
			}
			key := f.ID
			if f.Method == "TaskUpdate" {
				updates++
				key = fmt.Sprintf("update%d", updates)
				writeFrame(ctx, t, ws, `{"jsonrpc":"2.0","id":"`+f.ID+`","result":{"taskId":"t1","state":"TASK_STATE_COMPLETED","seq":3}}`)
			}
			got[key] = f
			order = append(order, key)
		}
		// An idle worker takes the offer at once: the acknowledgement says
		// working, and the next report is the answer.
		if s := string(got["d1"].Result); s != `{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}` {
			t.Errorf("acknowledgement: %s", s)
		}
		if s := string(got["update1"].Params); !strings.Contains(s, `"TASK_STATE_COMPLETED"`) || !strings.Contains(s, "hello bob") {
			t.Errorf("first report: %s, want the answer", s)
		}
		if s := string(got["p1"].Result); s != `"pong"` {
			t.Errorf("ping: %s", s)
		}
		if e := got["b1"].Error; e == nil || e.Code != -32601 {
			t.Errorf("unknown method: %+v", e)
		}
		if e := got["bad"].Error; e == nil || e.Code != -32602 {
			t.Errorf("malformed offer: %+v", e)
		}
		if slices.Index(order, "d1") > slices.Index(order, "update1") {
			t.Errorf("the report came before the acknowledgement: %v", order)
		}
		_ = ws.Close(4004, "the agent was deleted")
	})

	replied := make(chan error, 1)
	c := &connector.Client{URLs: []string{url}, Token: "sba_x", Logger: testLogger(),
		Handler: connector.HandlerFunc(func(ctx context.Context, w *connector.Work) { replied <- w.Reply("hello " + w.From) })}
	done := runClient(t, c)
	select {
	case err := <-replied:
		if err != nil {
			t.Fatalf("Reply: %v", err)
		}
	case <-time.After(testwait.Timeout):
		t.Fatal("the handler never ran")
	}
	select {
	case err := <-done:
		if !errors.Is(err, connector.ErrAgentGone) {
			t.Fatalf("Run: got %v, want ErrAgentGone", err)
		}
	case <-time.After(testwait.Timeout):
		t.Fatal("Run did not stop on close code 4004")
	}
}
