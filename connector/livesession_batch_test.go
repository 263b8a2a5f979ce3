package connector_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/internal/testwait"
)

// TestSessionBatches: the client says it reads session batches, and reads
// frames and acknowledgements in batches and alone, mixed, in order; it
// sends batches only to a server that says it reads them, and its frames
// keep their order and its window across batches either way.
func TestSessionBatches(t *testing.T) {
	for _, serverBatches := range []bool{false, true} {
		t.Run(fmt.Sprint("server reads batches: ", serverBatches), func(t *testing.T) {
			testSessionBatches(t, serverBatches)
		})
	}
}

func testSessionBatches(t *testing.T, serverBatches bool) {
	const sent = 50 // frames the client sends, with a window of 2
	frame := func(seq int, text string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s1","seq":%d,"text":%q}}`, seq, text)
	}
	ack := func(seq uint64) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"SessionAck","params":{"sessionId":"s1","seq":%d}}`, seq)
	}
	url := scriptedServer(t, func(ctx context.Context, ws *websocket.Conn) {
		_, data, err := ws.Read(ctx)
		var hello struct {
			Params connproto.HelloParams `json:"params"`
		}
		if err != nil || json.Unmarshal(data, &hello) != nil || !hello.Params.SessionBatches {
			t.Errorf("hello %s (%v): the client does not say it reads session batches", data, err)
			return
		}
		writeFrame(ctx, t, ws, fmt.Sprintf(`{"jsonrpc":"2.0","id":"hello","result":{"agent":{"handle":"edge"},"heartbeatMs":15000,"sessionBatches":%v}}`, serverBatches))
		open := readFrame(ctx, t, ws)
		if open.Method != connproto.MethodSessionOpen {
			t.Errorf("got %q, want SessionOpen", open.Method)
			return
		}
		writeFrame(ctx, t, ws, `{"jsonrpc":"2.0","id":"`+open.ID+`","result":{"sessionId":"s1","peer":{"id":"p","handle":"peer"},"window":{"frames":2,"bytes":1048576},"maxFrameBytes":65536,"graceMs":5000}}`)
		writeFrame(ctx, t, ws, "["+frame(1, "one")+","+frame(2, "two")+"]")
		writeFrame(ctx, t, ws, frame(3, "three"))
		writeFrame(ctx, t, ws, " [ "+frame(4, "four")+" ] ")

		// The client's frames, in order, never more than the window in
		// flight; each of its messages a batch only if this server reads them.
		var got, acked uint64
		for got < sent {
			_, data, err := ws.Read(ctx)
			if err != nil {
				t.Errorf("read: %v", err)
				return
			}
			var list []json.RawMessage
			if connproto.IsBatch(data) {
				if !serverBatches {
					t.Errorf("a batch to a server that reads none: %s", data)
					return
				}
				if err := json.Unmarshal(data, &list); err != nil {
					t.Errorf("batch %s: %v", data, err)
					return
				}
			} else {
				list = []json.RawMessage{data}
			}
			for _, m := range list {
				var f struct {
					Method string                       `json:"method"`
					Params connproto.SessionFrameParams `json:"params"`
				}
				if err := json.Unmarshal(m, &f); err != nil {
					t.Errorf("%s: %v", m, err)
					return
				}
				if f.Method != connproto.MethodSessionFrame {
					continue // its acknowledgements
				}
				if f.Params.Seq != got+1 || string(f.Params.Text) != fmt.Sprintf(`"f%d"`, got+1) {
					t.Errorf("frame %+v after %d", f.Params, got)
					return
				}
				got++
				if got-acked > 2 {
					t.Errorf("frame %d with %d acknowledged: past the window of 2", got, acked)
					return
				}
			}
			if got > acked { // credit, now and then with a frame it does not take
				msg := ack(got)
				if got%3 == 0 && got < sent {
					msg = "[" + ack(got) + "," + frame(5, "not taken: a resend of nothing") + "]"
				}
				writeFrame(ctx, t, ws, msg)
				acked = got
			}
		}
		writeFrame(ctx, t, ws, `[{"jsonrpc":"2.0","method":"SessionAck","params":{"sessionId":"s1","seq":50}},{"jsonrpc":"2.0","method":"SessionClose","params":{"sessionId":"s1","reason":"closed","message":"bye"}}]`)
		for { // until the client closes the connection
			if _, _, err := ws.Read(ctx); err != nil {
				return
			}
		}
	})
	c := &connector.Client{URLs: []string{url}, Token: "t", Logger: testLogger()}
	runClient(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	sess, err := c.OpenSession(ctx, "peer", nil)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	for i, want := range []string{"one", "two", "three", "four"} {
		f, err := sess.Receive(ctx)
		if err != nil || f.Seq != uint64(i+1) || f.Text != want {
			t.Fatalf("frame %d: %+v %v", i+1, f, err)
		}
	}
	for i := 1; i <= sent; i++ {
		if err := sess.Send(ctx, fmt.Sprint("f", i)); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	for {
		f, err := sess.Receive(ctx)
		if err != nil {
			if !strings.Contains(err.Error(), "bye") {
				t.Fatalf("the session ended with %v", err)
			}
			break
		}
		if f.Seq != 5 {
			t.Fatalf("frame %+v", f)
		}
	}
}
