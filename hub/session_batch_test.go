package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/switchboard-dev/switchboard/connproto"
)

// Session batches (connproto.ParseSessionBatch) on real sockets: an agent
// that said it reads them may send and receive several SessionFrame and
// SessionAck notifications in one message.

// connectBatches dials and says hello as an agent that reads session
// batches, and checks that the server says it reads them too.
func (s *server) connectBatches(token string) *testAgent {
	s.t.Helper()
	a, _, err := s.dial(token)
	must(s.t, err)
	a.readsBatches.Store(true)
	res := a.call("hello", map[string]any{"holding": []string{}, "client": "test", "sessionBatches": true})
	if res.Error != nil {
		s.t.Fatalf("hello: %+v", res.Error)
	}
	var h connproto.HelloResult
	must(s.t, json.Unmarshal(res.Result, &h))
	if !h.SessionBatches {
		s.t.Fatalf("the server does not say it reads session batches: %s", res.Result)
	}
	return a
}

// noteJSON is a SessionFrame notification whose content is raw.
func noteJSON(id string, seq int, field, raw string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":{"sessionId":%q,"seq":%d,%q:%s}}`, connproto.MethodSessionFrame, id, seq, field, raw)
}

// ackJSON is a SessionAck notification.
func ackJSON(id string, seq int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":{"sessionId":%q,"seq":%d}}`, connproto.MethodSessionAck, id, seq)
}

// writeRaw writes one message as it is.
func writeRaw(a *testAgent, msg string) {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := a.ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		a.t.Fatalf("write: %v", err)
	}
}

// batchOf is the batch of the notes.
func batchOf(notes ...string) string { return "[" + strings.Join(notes, ",") + "]" }

// nextFrame reads the next frame of a session and checks its seq.
func nextFrame(t *testing.T, a *testAgent, seq uint64) connproto.SessionFrameParams {
	t.Helper()
	var p connproto.SessionFrameParams
	must(t, json.Unmarshal(nextNotice(t, a, connproto.MethodSessionFrame), &p))
	if p.Seq != seq {
		t.Fatalf("frame %d, want %d (%+v)", p.Seq, seq, p)
	}
	return p
}

// TestSessionWireBatches: frames sent in batches and alone, mixed, pass on
// in order, each once; a batch the server cannot read in one pass is read
// as if each notification came alone; acknowledgements in a batch are
// credit; the server sends batches only to an agent that reads them.
func TestSessionWireBatches(t *testing.T) {
	s := newServer(t)
	s.allowSessions()
	_, ta := s.agent("wa")
	_, tb := s.agent("wb")
	a, b := s.connectBatches(ta), s.connect(tb)
	ws := openWire(t, a, b, "wb")

	writeRaw(a, batchOf(noteJSON(ws.id, 1, "text", `"one"`), noteJSON(ws.id, 2, "data", `{"k": [1, 2]}`), noteJSON(ws.id, 3, "text", `"three"`)))
	writeRaw(a, noteJSON(ws.id, 4, "text", `"four"`))
	writeRaw(a, " [ "+noteJSON(ws.id, 5, "text", `"five"`)+" , "+
		`{"params":{"text":"six","seq":6,"sessionId":"`+ws.id+`"},"method":"SessionFrame","jsonrpc":"2.0"}`+" ] ")
	// An unknown key: read with encoding/json, in order all the same.
	writeRaw(a, batchOf(`{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"`+ws.id+`","seq":7,"text":"seven","x":1}}`,
		noteJSON(ws.id, 8, "text", `"eight"`)))
	want := []string{`"one"`, `{"k": [1, 2]}`, `"three"`, `"four"`, `"five"`, `"six"`, `"seven"`, `"eight"`}
	for i, w := range want {
		p := nextFrame(t, b, uint64(i+1))
		if got := string(p.Text) + string(p.Data); got != w {
			t.Fatalf("frame %d: %s, want %s", i+1, got, w)
		}
	}
	if n := b.batches.Load(); n != 0 {
		t.Fatalf("the server sent %d batches to an agent that reads none", n)
	}

	// B acknowledges, alone; A's credit comes.
	writeRaw(b, ackJSON(ws.id, 8))
	var ack connproto.SessionAckParams
	must(t, json.Unmarshal(nextNotice(t, a, connproto.MethodSessionAck), &ack))
	if ack.Seq != 8 {
		t.Fatalf("ack %+v", ack)
	}
	// The other way: B sends alone, A acknowledges in a batch with a frame.
	writeRaw(b, noteJSON(ws.id, 1, "text", `"back"`))
	if p := nextFrame(t, a, 1); string(p.Text) != `"back"` {
		t.Fatalf("frame %+v", p)
	}
	writeRaw(a, batchOf(ackJSON(ws.id, 1), noteJSON(ws.id, 9, "text", `"nine"`)))
	must(t, json.Unmarshal(nextNotice(t, b, connproto.MethodSessionAck), &ack))
	if ack.Seq != 1 {
		t.Fatalf("ack %+v", ack)
	}
	nextFrame(t, b, 9)
	// A gap within a batch ends the session, as it does alone.
	writeRaw(a, batchOf(noteJSON(ws.id, 10, "text", `"ten"`), noteJSON(ws.id, 12, "text", `"twelve"`)))
	nextFrame(t, b, 10)
	closedWith(t, a, ws.id, connproto.SessionReasonProtocol)
	closedWith(t, b, ws.id, connproto.SessionReasonProtocol)
}

// TestSessionWireBatchesToReader: an agent that reads batches gets every
// frame in order, each once, however the server joins them.
func TestSessionWireBatchesToReader(t *testing.T) {
	s := newServer(t)
	s.allowSessions()
	_, ta := s.agent("wa")
	_, tb := s.agent("wb")
	a, b := s.connect(ta), s.connectBatches(tb)
	ws := openWire(t, a, b, "wb")
	for seq := 1; seq <= ws.window.Frames; seq++ {
		sendFrame(a, ws.id, seq, "text", fmt.Sprintf(`"f%d"`, seq))
	}
	for seq := 1; seq <= ws.window.Frames; seq++ {
		if p := nextFrame(t, b, uint64(seq)); string(p.Text) != fmt.Sprintf(`"f%d"`, seq) {
			t.Fatalf("frame %+v", p)
		}
	}
	t.Logf("%d frames came in %d batches and the rest alone", ws.window.Frames, b.batches.Load())
}

// TestSessionWireBatchPastWindow: the window counts the frames of every
// batch; a sender past it ends the session, and the server held no more
// than the window.
func TestSessionWireBatchPastWindow(t *testing.T) {
	s := newServer(t)
	s.allowSessions()
	_, ta := s.agent("wa")
	_, tb := s.agent("wb")
	a, b := s.connectBatches(ta), s.connect(tb)
	ws := openWire(t, a, b, "wb")
	var notes []string
	for seq := 1; seq <= ws.window.Frames+1; seq++ {
		notes = append(notes, noteJSON(ws.id, seq, "text", `"x"`))
		if len(notes) == 10 || seq == ws.window.Frames+1 {
			writeRaw(a, batchOf(notes...))
			notes = nil
		}
	}
	for seq := 1; seq <= ws.window.Frames; seq++ {
		nextFrame(t, b, uint64(seq))
	}
	if n := s.sessions.Counts().Buffered; n > int64(ws.window.Frames) {
		t.Fatalf("the server holds %d frames", n)
	}
	closedWith(t, b, ws.id, connproto.SessionReasonFlowControl)
	closedWith(t, a, ws.id, connproto.SessionReasonFlowControl)
}

// TestSessionWireBatchFrameTooLarge: the limit holds for each frame of a
// batch: the frames before the large one pass on, then the session ends.
func TestSessionWireBatchFrameTooLarge(t *testing.T) {
	s := newServer(t)
	s.allowSessions()
	_, ta := s.agent("wa")
	_, tb := s.agent("wb")
	a, b := s.connectBatches(ta), s.connect(tb)
	ws := openWire(t, a, b, "wb")
	writeRaw(a, batchOf(noteJSON(ws.id, 1, "text", `"small"`),
		noteJSON(ws.id, 2, "text", `"`+strings.Repeat("x", connproto.MaxSessionFrameBytes)+`"`),
		noteJSON(ws.id, 3, "text", `"after"`)))
	nextFrame(t, b, 1)
	closedWith(t, b, ws.id, connproto.SessionReasonFrameTooLarge)
	closedWith(t, a, ws.id, connproto.SessionReasonFrameTooLarge)
}
