package connector_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/coder/websocket"
	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/internal/testwait"
)

// writeCounter counts the writes made to a connection.
type writeCounter struct {
	net.Conn
	writes *atomic.Int64
}

func (c writeCounter) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestSessionMessageInOneWrite: through a client whose transport is an
// *http.Transport, each message the connector writes, a batch of frames
// larger than the WebSocket library's 4 KiB buffer included, leaves in
// one write, or one per 64 KiB of a larger one (the cork's bound), not one
// per 4 KiB; the frames arrive whole and in order.
func TestSessionMessageInOneWrite(t *testing.T) {
	const sent = 40
	text := strings.Repeat("z", 5000) // each frame more than the library's buffer
	var writes atomic.Int64
	messages := make(chan [2]int64, 1) // the messages and bytes the server read after SessionOpen
	writesAtOpen := make(chan int64, 1)
	url := scriptedServer(t, func(ctx context.Context, ws *websocket.Conn) {
		ws.SetReadLimit(1 << 22)
		if _, _, err := ws.Read(ctx); err != nil { // hello
			t.Errorf("hello: %v", err)
			return
		}
		writeFrame(ctx, t, ws, `{"jsonrpc":"2.0","id":"hello","result":{"agent":{"handle":"edge"},"heartbeatMs":15000,"sessionBatches":true}}`)
		open := readFrame(ctx, t, ws)
		writesAtOpen <- writes.Load()
		writeFrame(ctx, t, ws, `{"jsonrpc":"2.0","id":"`+open.ID+`","result":{"sessionId":"s1","peer":{"id":"p","handle":"peer"},"window":{"frames":64,"bytes":4194304},"maxFrameBytes":65536,"graceMs":5000}}`)
		var got, n, size int64
		for got < sent {
			_, data, err := ws.Read(ctx)
			if err != nil {
				t.Errorf("read: %v", err)
				return
			}
			n, size = n+1, size+int64(len(data))
			list := []json.RawMessage{data}
			if connproto.IsBatch(data) {
				list = nil
				if err := json.Unmarshal(data, &list); err != nil {
					t.Errorf("batch: %v", err)
					return
				}
			}
			for _, m := range list {
				var f struct {
					Params connproto.SessionFrameParams `json:"params"`
				}
				if err := json.Unmarshal(m, &f); err != nil || f.Params.Seq != uint64(got+1) || string(f.Params.Text) != `"`+text+`"` {
					t.Errorf("frame %d: seq %d, %d bytes of text (%v)", got+1, f.Params.Seq, len(f.Params.Text), err)
					return
				}
				got++
			}
		}
		messages <- [2]int64{n, size}
		for { // until the client closes the connection
			if _, _, err := ws.Read(ctx); err != nil {
				return
			}
		}
	})
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return writeCounter{Conn: nc, writes: &writes}, nil
	}}
	c := &connector.Client{URLs: []string{url}, Token: "t", Logger: testLogger(), HTTPClient: &http.Client{Transport: tr}}
	runClient(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	sess, err := c.OpenSession(ctx, "peer", nil)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	for i := 1; i <= sent; i++ {
		if err := sess.Send(ctx, text); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	var read [2]int64
	select {
	case read = <-messages:
	case <-ctx.Done():
		t.Fatal("the server did not read every frame")
	}
	// The writes after SessionOpen (no ping is sent here to answer).
	n, size := read[0], read[1]
	if w, most := writes.Load()-<-writesAtOpen, n+size/(64<<10); w > most {
		t.Errorf("%d messages of %d bytes left in %d writes, want at most %d", n, size, w, most)
	}
}
