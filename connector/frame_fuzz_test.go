package connector_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/coder/websocket"
	"github.com/switchboard-dev/switchboard/connector"
)

// FuzzServerFrame has a server send the client one arbitrary frame after
// the answer to hello. Whatever the frame, the client must answer only
// with JSON-RPC 2.0 and keep the connection: a ping after it is answered.
func FuzzServerFrame(f *testing.F) {
	seeds := []string{
		`{"jsonrpc":"2.0","id":"d1","method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","taskId":"t1","contextId":"c1","parts":[{"text":"hi"}]},"metadata":{"switchboard":{"from":"bob","attempt":1,"newTask":true}}}}`,
		`{"jsonrpc":"2.0","id":"d2","method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","taskId":"t1","parts":[]},"metadata":{"switchboard":7}}}`,
		`{"jsonrpc":"2.0","id":"d3","method":"CancelTask","params":{"id":"t1"}}`,
		`{"jsonrpc":"2.0","id":"d4","method":"CancelTask","params":{}}`,
		`{"jsonrpc":"2.0","id":"hello","result":{"agent":{"handle":"again"}}}`,
		`{"jsonrpc":"2.0","id":"c1","result":{"taskId":"t1","state":"TASK_STATE_COMPLETED","seq":3}}`,
		`{"jsonrpc":"2.0","id":"c1","error":{"code":-32001,"message":"no such task"}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`,
		`{"jsonrpc":"2.0","id":{},"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"SendMessage"}`,
		`{"jsonrpc":"2.0","id":"x","method":"Bogus"}`,
		`[1,2]`, `{`, ``, `"text"`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		probed := make(chan struct{})
		var once sync.Once // a reconnection after the probe finds nothing more
		url := scriptedServer(t, func(ctx context.Context, ws *websocket.Conn) {
			first := false
			once.Do(func() { first = true })
			if !first {
				return
			}
			defer close(probed)
			if fr := readFrame(ctx, t, ws); fr.Method != "hello" {
				t.Errorf("first frame: got %q, want hello", fr.Method)
				return
			}
			writeFrame(ctx, t, ws, `{"jsonrpc":"2.0","id":"hello","result":{"agent":{"handle":"fuzz"},"heartbeatSeconds":15}}`)
			writeFrame(ctx, t, ws, input)
			writeFrame(ctx, t, ws, `{"jsonrpc":"2.0","id":"probe","method":"ping"}`)
			for {
				_, data, err := ws.Read(ctx)
				if err != nil {
					t.Errorf("the connection ended after %q: %v", input, err)
					return
				}
				var fr struct {
					JSONRPC string          `json:"jsonrpc"`
					ID      json.RawMessage `json:"id"`
					Method  string          `json:"method"`
					Result  json.RawMessage `json:"result"`
				}
				if json.Unmarshal(data, &fr) != nil || fr.JSONRPC != "2.0" {
					t.Errorf("after %q the client sent a frame that is not JSON-RPC 2.0: %q", input, data)
					return
				}
				if fr.Method != "" && len(fr.ID) > 0 { // a call of the client: answer it
					writeFrame(ctx, t, ws, `{"jsonrpc":"2.0","id":`+string(fr.ID)+`,"result":{"taskId":"t1","state":"TASK_STATE_COMPLETED","seq":1}}`)
				}
				if string(fr.ID) == `"probe"` {
					if string(fr.Result) != `"pong"` {
						t.Errorf("ping after %q: got %s", input, data)
					}
					return
				}
			}
		})
		c := &connector.Client{URLs: []string{url}, Token: "sba_x", Logger: testLogger(),
			Handler: connector.HandlerFunc(func(ctx context.Context, w *connector.Work) { _ = w.Reply("ok") })}
		runClient(t, c)
		<-probed
	})
}
