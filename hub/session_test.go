package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/coder/websocket"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connproto"
)

// The live sessions as an agent in another language sees them: raw
// frames on real sockets, through the real hub and session service.

// maySession is the harness's session policy.
func (s *server) maySession(_ context.Context, from, to *switchboard.Agent) (bool, error) {
	f := s.mayHold.Load()
	return f != nil && (*f)(from, to), nil
}

// allowSessions lets every two agents hold a session.
func (s *server) allowSessions() {
	f := func(from, to *switchboard.Agent) bool { return true }
	s.mayHold.Store(&f)
}

// wireSession is a session opened between two test agents.
type wireSession struct {
	id     string
	window connproto.SessionWindow
}

// openWire has a open a session with b, which accepts it.
func openWire(t *testing.T, a, b *testAgent, bHandle string) wireSession {
	t.Helper()
	res := async(func() frame {
		return a.call(connproto.MethodSessionOpen, map[string]any{"to": bHandle, "metadata": map[string]any{"k": "v"}})
	})
	offer := b.next()
	if offer.Method != connproto.MethodSessionOpen {
		t.Fatalf("B got %s, want SessionOpen", offer.Method)
	}
	var o connproto.SessionOffer
	must(t, json.Unmarshal(offer.Params, &o))
	if string(offer.ID) != `"`+connproto.SessionRequestPrefix+o.SessionID+`"` || string(o.Metadata) != `{"k":"v"}` ||
		o.MaxFrameBytes != connproto.MaxSessionFrameBytes || o.Window.Frames <= 0 || o.GraceMillis <= 0 {
		t.Fatalf("offer %s %s", offer.ID, offer.Params)
	}
	b.write(map[string]any{"jsonrpc": "2.0", "id": offer.ID, "result": map[string]any{"accepted": true}})
	f := await(t, res)
	if f.Error != nil {
		t.Fatalf("SessionOpen: %+v", f.Error)
	}
	var r connproto.SessionOpenResult
	must(t, json.Unmarshal(f.Result, &r))
	if r.SessionID != o.SessionID || r.Peer.Handle != bHandle || r.Window != o.Window {
		t.Fatalf("result %s for offer %s", f.Result, offer.Params)
	}
	return wireSession{id: r.SessionID, window: r.Window}
}

// sendFrame sends a SessionFrame notification whose content is raw, as
// it is (json.Marshal would compact it).
func sendFrame(a *testAgent, id string, seq int, field string, raw string) {
	a.t.Helper()
	b := fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":{"sessionId":%q,"seq":%d,%q:%s}}`, connproto.MethodSessionFrame, id, seq, field, raw)
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := a.ws.Write(ctx, websocket.MessageText, []byte(b)); err != nil {
		a.t.Fatalf("write: %v", err)
	}
}

// nextNotice returns the next frame from the server, which must be a
// notification of method.
func nextNotice(t *testing.T, a *testAgent, method string) json.RawMessage {
	t.Helper()
	f := a.next()
	if f.Method != method || len(f.ID) != 0 {
		t.Fatalf("got %s (id %s) %s, want the notification %s", f.Method, f.ID, f.Params, method)
	}
	return f.Params
}

// closedWith reads the next frame, a SessionClose, and checks its reason.
func closedWith(t *testing.T, a *testAgent, id, reason string) {
	t.Helper()
	var p connproto.SessionCloseParams
	must(t, json.Unmarshal(nextNotice(t, a, connproto.MethodSessionClose), &p))
	if p.SessionID != id || p.Reason != reason {
		t.Fatalf("SessionClose %+v, want %s for %s", p, reason, id)
	}
}

func TestSessionWire(t *testing.T) {
	s := newServer(t)
	s.allowSessions()
	_, ta := s.agent("wa")
	_, tb := s.agent("wb")
	a, b := s.connect(ta), s.connect(tb)
	ws := openWire(t, a, b, "wb")

	// Text and data frames pass through as sent, whitespace and all.
	sendFrame(a, ws.id, 1, "text", `"hello \u00e9"`)
	sendFrame(a, ws.id, 2, "data", `{"k": [1, 2]}`)
	var f1, f2 connproto.SessionFrameParams
	must(t, json.Unmarshal(nextNotice(t, b, connproto.MethodSessionFrame), &f1))
	must(t, json.Unmarshal(nextNotice(t, b, connproto.MethodSessionFrame), &f2))
	if f1.Seq != 1 || string(f1.Text) != `"hello \u00e9"` || f1.Data != nil || f2.Seq != 2 || string(f2.Data) != `{"k": [1, 2]}` {
		t.Fatalf("frames %+v %+v", f1, f2)
	}
	// B's acknowledgement is A's credit.
	b.write(map[string]any{"jsonrpc": "2.0", "method": connproto.MethodSessionAck, "params": map[string]any{"sessionId": ws.id, "seq": 2}})
	var ack connproto.SessionAckParams
	must(t, json.Unmarshal(nextNotice(t, a, connproto.MethodSessionAck), &ack))
	if ack.Seq != 2 || ack.SessionID != ws.id {
		t.Fatalf("ack %+v", ack)
	}
	// The other way, as a request: answered once passed on.
	if r := b.call(connproto.MethodSessionFrame, map[string]any{"sessionId": ws.id, "seq": 1, "text": "back"}); r.Error != nil {
		t.Fatalf("frame as a request: %+v", r.Error)
	}
	must(t, json.Unmarshal(nextNotice(t, a, connproto.MethodSessionFrame), &f1))
	if string(f1.Text) != `"back"` {
		t.Fatalf("frame %+v", f1)
	}
	// A gap in the numbering ends the session for both.
	sendFrame(a, ws.id, 5, "text", `"skipped ahead"`)
	closedWith(t, a, ws.id, connproto.SessionReasonProtocol)
	closedWith(t, b, ws.id, connproto.SessionReasonProtocol)
}

func TestSessionWireFrameTooLarge(t *testing.T) {
	s := newServer(t)
	s.allowSessions()
	_, ta := s.agent("wa")
	_, tb := s.agent("wb")
	a, b := s.connect(ta), s.connect(tb)
	ws := openWire(t, a, b, "wb")
	sendFrame(a, ws.id, 1, "text", `"`+strings.Repeat("x", connproto.MaxSessionFrameBytes)+`"`)
	closedWith(t, a, ws.id, connproto.SessionReasonFrameTooLarge)
	closedWith(t, b, ws.id, connproto.SessionReasonFrameTooLarge)
}

// TestSessionWireFlowControl: an agent that sends past its window (its
// peer acknowledges nothing) ends the session; the server held no more
// than the window.
func TestSessionWireFlowControl(t *testing.T) {
	s := newServer(t)
	s.allowSessions()
	_, ta := s.agent("wa")
	_, tb := s.agent("wb")
	a, b := s.connect(ta), s.connect(tb)
	ws := openWire(t, a, b, "wb")
	for i := 1; i <= ws.window.Frames+1; i++ {
		sendFrame(a, ws.id, i, "text", `"x"`)
	}
	for i := 1; i <= ws.window.Frames; i++ {
		nextNotice(t, b, connproto.MethodSessionFrame)
	}
	if n := s.sessions.Counts().Buffered; n > int64(ws.window.Frames) {
		t.Fatalf("the server holds %d frames", n)
	}
	closedWith(t, b, ws.id, connproto.SessionReasonFlowControl)
	closedWith(t, a, ws.id, connproto.SessionReasonFlowControl)
}

func TestSessionWireUnknown(t *testing.T) {
	s := newServer(t)
	s.allowSessions()
	_, ta := s.agent("wa")
	a := s.connect(ta)
	sendFrame(a, "0000-nope", 1, "text", `"x"`)
	closedWith(t, a, "0000-nope", connproto.SessionReasonUnknown)
	if r := a.call(connproto.MethodSessionClose, map[string]any{"sessionId": "0000-nope"}); r.Error == nil || r.Error.Code != connproto.CodeSessionUnknown {
		t.Fatalf("closing an unknown session: %+v", r)
	}
	if r := a.call(connproto.MethodSessionOpen, map[string]any{"no": "to"}); r.Error == nil || r.Error.Code != connproto.CodeInvalidParams {
		t.Fatalf("SessionOpen without to: %+v", r)
	}
	if r := a.call(connproto.MethodSessionResend, map[string]any{}); r.Error == nil || r.Error.Code != connproto.CodeMethodNotFound {
		t.Fatalf("an agent's SessionResend: %+v", r)
	}
}

// TestSessionWireNotAllowed: without a shared community, the agent is
// never asked.
func TestSessionWireNotAllowed(t *testing.T) {
	s := newServer(t)
	_, ta := s.agent("wa")
	_, tb := s.agent("wb")
	a, b := s.connect(ta), s.connect(tb)
	if r := a.call(connproto.MethodSessionOpen, map[string]any{"to": "wb"}); r.Error == nil || r.Error.Code != connproto.CodeSessionNotAllowed {
		t.Fatalf("got %+v", r)
	}
	b.quiet(50e6)
}

// TestSessionWireDropAndResume: B's socket drops; A's frames sent
// meanwhile wait; B reconnects, resumes, and gets them; later B drops for
// good and A is told after the grace. It runs in a synctest bubble
// (newBubbleServer): B's reconnection takes none of the grace, however
// loaded the machine.
func TestSessionWireDropAndResume(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newBubbleServer(t)
		s.allowSessions()
		ga, ta := s.agent("wa")
		_, tb := s.agent("wb")
		a, b := s.connect(ta), s.connect(tb)
		ws := openWire(t, a, b, "wb")
		sendFrame(a, ws.id, 1, "text", `"one"`)
		nextNotice(t, b, connproto.MethodSessionFrame)
		_ = b.ws.CloseNow()
		sendFrame(a, ws.id, 2, "text", `"two"`) // lost with nobody to take it

		b2 := s.connect(tb)
		r := b2.call(connproto.MethodSessionResume, map[string]any{"sessionId": ws.id, "peer": ga.ID, "received": 1, "acked": 1})
		if r.Error != nil {
			t.Fatalf("SessionResume: %+v", r.Error)
		}
		var rr connproto.SessionResumeResult
		must(t, json.Unmarshal(r.Result, &rr))
		if rr.From != 1 || rr.Acked != 0 {
			t.Fatalf("resume result %+v", rr)
		}
		// A is asked for what B missed, and its acknowledgement of frame 1.
		var resend connproto.SessionResendParams
		for {
			f := a.next()
			if f.Method == connproto.MethodSessionResend {
				must(t, json.Unmarshal(f.Params, &resend))
				break
			}
			if f.Method != connproto.MethodSessionAck {
				t.Fatalf("A got %s", f.Method)
			}
		}
		if resend.From != 2 {
			t.Fatalf("resend from %d, want 2", resend.From)
		}
		sendFrame(a, ws.id, 2, "text", `"two"`)
		var f connproto.SessionFrameParams
		must(t, json.Unmarshal(nextNotice(t, b2, connproto.MethodSessionFrame), &f))
		if f.Seq != 2 || string(f.Text) != `"two"` {
			t.Fatalf("after the resume: %+v", f)
		}
		_ = b2.ws.CloseNow()
		closedWith(t, a, ws.id, connproto.SessionReasonPeerDisconnected)
	})
}

// TestSessionWireRefusedByError: a JSON-RPC error answer refuses, with its
// message.
func TestSessionWireRefusedByError(t *testing.T) {
	s := newServer(t)
	s.allowSessions()
	_, ta := s.agent("wa")
	_, tb := s.agent("wb")
	a, b := s.connect(ta), s.connect(tb)
	res := async(func() frame { return a.call(connproto.MethodSessionOpen, map[string]any{"to": "wb"}) })
	offer := b.next()
	b.write(map[string]any{"jsonrpc": "2.0", "id": offer.ID, "error": map[string]any{"code": -32000, "message": "not now"}})
	f := await(t, res)
	if f.Error == nil || f.Error.Code != connproto.CodeSessionRefused || !strings.Contains(f.Error.Message, "not now") {
		t.Fatalf("got %+v", f.Error)
	}
}
