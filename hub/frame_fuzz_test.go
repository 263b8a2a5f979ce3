package hub_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/connproto"

	"github.com/coder/websocket"
	"github.com/switchboard-dev/switchboard"
)

// FuzzAgentFrame sends one arbitrary frame from a connected agent, in the
// middle of a live task: "$TASK" in the input stands for the task's id and
// "$OFFER" for the id of the offer the agent holds. Whatever the frame, the
// server must answer only with JSON-RPC 2.0, keep the connection (a ping
// after it is answered) and keep the task readable by the peer that sent it.
func FuzzAgentFrame(f *testing.F) {
	seeds := []string{
		`{"jsonrpc":"2.0","id":"$OFFER","result":{"task":{"id":"$TASK","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}}`,
		`{"jsonrpc":"2.0","id":"$OFFER","result":{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"hi"}]}}}`,
		`{"jsonrpc":"2.0","id":"$OFFER","result":{"statusUpdate":{"taskId":"$TASK","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}}`,
		`{"jsonrpc":"2.0","id":"$OFFER","result":42}`,
		`{"jsonrpc":"2.0","id":"$OFFER","error":{"code":-1,"message":"no"}}`,
		`{"jsonrpc":"2.0","id":"u1","method":"TaskUpdate","params":{"statusUpdate":{"taskId":"$TASK","status":{"state":"TASK_STATE_INPUT_REQUIRED"}}}}`,
		`{"jsonrpc":"2.0","id":"u2","method":"TaskUpdate","params":{"artifactUpdate":{"taskId":"$TASK","artifact":{"artifactId":"a","parts":[{"text":"x"}]},"append":true}}}`,
		`{"jsonrpc":"2.0","id":"u3","method":"TaskUpdate","params":{"task":{"id":"$TASK","status":{"state":"TASK_STATE_SUBMITTED"}}}}`,
		`{"jsonrpc":"2.0","id":"u4","method":"TaskUpdate","params":{"statusUpdate":{"taskId":"other","status":{"state":"TASK_STATE_FAILED"}}}}`,
		`{"jsonrpc":"2.0","id":"g","method":"GetTask","params":{"id":"$TASK","historyLength":-1}}`,
		`{"jsonrpc":"2.0","id":"s","method":"SendMessage","params":{"to":"nobody","token":"x","request":{}}}`,
		`{"jsonrpc":"2.0","id":"h","method":"hello","params":{"holding":["$TASK"]}}`,
		`{"jsonrpc":"2.0","id":[1],"method":"ping"}`,
		`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"TaskUpdate"}`,
		`{"jsonrpc":"2.0","id":null,"result":null}`,
		`[]`, `null`, `"$TASK"`, `{`, ``,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	s := newServer(f)
	g, agentToken := s.agent("fuzz")
	peer := s.peerToken(g, "fuzzer")
	address := s.srv.URL + "/a/" + g.Handle
	f.Fuzz(func(t *testing.T, input string) {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.srv.URL, "http")+"/connect",
			&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + agentToken}},
				Subprotocols: []string{connproto.Subprotocol}})
		if err != nil {
			t.Fatal(err)
		}
		defer ws.CloseNow()
		ws.SetReadLimit(8 << 20)
		write := func(b []byte) {
			if err := ws.Write(ctx, websocket.MessageText, b); err != nil {
				t.Fatalf("write: %v", err)
			}
		}
		// read returns the next frame, checking that it is JSON-RPC 2.0.
		read := func() fuzzFrame {
			_, data, err := ws.Read(ctx)
			if err != nil {
				t.Fatalf("the connection ended after %q: %v", input, err)
			}
			var fr fuzzFrame
			if json.Unmarshal(data, &fr) != nil || fr.JSONRPC != "2.0" {
				t.Fatalf("the server sent a frame that is not JSON-RPC 2.0: %q", data)
			}
			return fr
		}
		write([]byte(`{"jsonrpc":"2.0","id":"hello","method":"hello","params":{"holding":[]}}`))
		for fr := read(); string(fr.ID) != `"hello"`; fr = read() {
		}

		task := peerCall(t, s.client, address, peer, "SendMessage", textMessage("fuzz me", true))
		taskID, _ := path(task, "result", "task", "id").(string)
		if taskID == "" {
			t.Fatalf("send: %v", task)
		}
		// Offers left from earlier inputs are answered, so that they do
		// not fill the agent's window (MaxInflight).
		var offer json.RawMessage
		for offer == nil {
			switch fr := read(); {
			case fr.Method == connproto.MethodSendMessage && bytes.Contains(fr.Params, []byte(taskID)):
				offer = fr.ID
			case fr.Method == connproto.MethodSendMessage:
				write(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{"message":{"messageId":%q,"role":"ROLE_AGENT","parts":[{"text":"done"}]}}}`, fr.ID, switchboard.NewID()))
			case fr.Method != "" && len(fr.ID) > 0:
				write(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{}}`, fr.ID))
			}
		}

		frame := strings.ReplaceAll(input, "$TASK", taskID)
		frame = strings.ReplaceAll(frame, `"$OFFER"`, string(offer))
		write([]byte(frame))
		write([]byte(`{"jsonrpc":"2.0","id":"probe","method":"ping"}`))
		for fr := read(); string(fr.ID) != `"probe"`; fr = read() {
		}

		got := peerCall(t, s.client, address, peer, "GetTask", map[string]any{"id": taskID})
		if state, _ := path(got, "result", "status", "state").(string); !strings.HasPrefix(state, "TASK_STATE_") {
			t.Fatalf("after %q the peer reads the task as %v", frame, got)
		}
	})
}

// fuzzFrame is the envelope of a frame the server sends.
type fuzzFrame struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}
