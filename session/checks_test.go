package session_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/session"
)

// These tests keep the checks of who may open, answer, resume, send on
// and close a session, and when its parts expire: each fails when its
// check is taken out.

// errorCode returns the JSON-RPC error code of a reply, or 0.
func errorCode(f connproto.Frame) int {
	if f.Error == nil {
		return 0
	}
	return f.Error.Code
}

// closes returns the reasons of the SessionClose frames among fs.
func closes(fs []connproto.Frame) []string {
	var out []string
	for _, f := range fs {
		var p connproto.SessionCloseParams
		if f.Method == connproto.MethodSessionClose && json.Unmarshal(f.Params, &p) == nil {
			out = append(out, p.Reason)
		}
	}
	return out
}

// framesTo returns the seqs of the SessionFrame frames among fs.
func framesTo(fs []connproto.Frame) []uint64 {
	var out []uint64
	for _, f := range fs {
		var p connproto.SessionFrameParams
		if f.Method == connproto.MethodSessionFrame && json.Unmarshal(f.Params, &p) == nil {
			out = append(out, p.Seq)
		}
	}
	return out
}

// otherConn is another connection of c's agent, which the service does
// not hold sessions for (an older one, or one that never said hello).
func otherConn(c *conn) *conn {
	return &conn{agent: c.agent, holder: c.holder + "/other"}
}

// TestOpenRefusals: a SessionOpen is answered at once, and the agent
// named is not asked, when the agent named does not exist, is of a
// disabled account, is the asker itself, shares no community with it (or
// there is no policy), is not a connector agent, or is not connected
// where its connection row says; and when the metadata is not a small
// JSON object.
func TestOpenRefusals(t *testing.T) {
	for name, c := range map[string]struct {
		setup func(w *world, b *conn)
		to    string
		meta  string
		code  int
	}{
		"NoSuchAgent": {to: "nobody", code: connproto.CodeSessionPeerNotFound},
		"AccountDisabled": {setup: func(w *world, b *conn) {
			w.agents.mu.Lock()
			b.agent.AccountDisabled = true
			w.agents.mu.Unlock()
		}, code: connproto.CodeSessionPeerNotFound},
		"Itself":      {to: "a", code: connproto.CodeSessionNotAllowed},
		"NoCommunity": {setup: func(w *world, b *conn) { w.allow = false }, code: connproto.CodeSessionNotAllowed},
		"NoPolicy": {setup: func(w *world, b *conn) {
			w.inst[0].Close()
			w.inst[0] = session.New(session.Deps{Carrier: w.bus, Agents: w.agents, InstanceID: "no-policy"}, w.cfg)
			must(w.t, w.inst[0].Start(context.Background()))
		}, code: connproto.CodeSessionNotAllowed},
		"NotConnector": {setup: func(w *world, b *conn) {
			w.agents.mu.Lock()
			b.agent.Mode = switchboard.ModeInbox
			w.agents.mu.Unlock()
		}, code: connproto.CodeSessionPeerOffline},
		"NotConnectedThere": {setup: func(w *world, b *conn) { w.inst[1].Disconnect(b) }, code: connproto.CodeSessionPeerOffline},
		"MetadataNotObject": {meta: `[1,2]`, code: connproto.CodeInvalidParams},
		"MetadataTooLarge":  {meta: `{"x":"` + strings.Repeat("x", session.MaxMetadataBytes) + `"}`, code: connproto.CodeInvalidParams},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := newWorld(t, session.Config{})
				b := w.connect(1, "b")
				if c.setup != nil {
					c.setup(w, b)
				}
				a := w.connect(0, "a")
				to := c.to
				if to == "" {
					to = "b"
				}
				p := connproto.SessionOpenParams{To: to}
				if c.meta != "" {
					p.Metadata = json.RawMessage(c.meta)
				}
				call(w.inst[0], a, "o1", connproto.MethodSessionOpen, p)
				synctest.Wait()
				if f := only(t, a); errorCode(f) != c.code {
					t.Fatalf("A got %+v, want error %d", f, c.code)
				}
				if fs := b.take(); len(fs) != 0 {
					t.Fatalf("B was asked: %+v", fs)
				}
			})
		})
	}
}

// offer has a ask b for a session and returns the id of the request B
// got and the session's id.
func (w *world) offer(ia int, a *conn, b *conn) (reqID, sid string) {
	w.t.Helper()
	call(w.inst[ia], a, "o1", connproto.MethodSessionOpen, connproto.SessionOpenParams{To: b.agent.Handle})
	synctest.Wait()
	f := only(w.t, b)
	var o connproto.SessionOffer
	_ = json.Unmarshal(f.Params, &o)
	_ = json.Unmarshal(f.ID, &reqID)
	return reqID, o.SessionID
}

// TestAnswerFromAnotherConnection: only the connection that was asked
// answers an offer; another connection of the same agent is ignored.
func TestAnswerFromAnotherConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, session.Config{})
		a, b := w.connect(0, "a"), w.connect(1, "b")
		req, _ := w.offer(0, a, b)
		if !w.inst[1].Answer(otherConn(b), req, json.RawMessage(`{"accepted":true}`), nil) {
			t.Fatal("the answer was not taken for a session request")
		}
		synctest.Wait()
		if fs := a.take(); len(fs) != 0 {
			t.Fatalf("another connection's answer reached A: %+v", fs)
		}
		w.inst[1].Answer(b, req, json.RawMessage(`{"accepted":true}`), nil)
		synctest.Wait()
		if f := only(t, a); f.Error != nil {
			t.Fatalf("A got %+v", f)
		}
	})
}

// TestAnswerTwice: an answer to an offer answered already changes
// nothing: a refusal after an acceptance does not end the session.
func TestAnswerTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, session.Config{})
		a, b := w.connect(0, "a"), w.connect(1, "b")
		req, sid := w.offer(0, a, b)
		w.inst[1].Answer(b, req, json.RawMessage(`{"accepted":true}`), nil)
		w.inst[1].Answer(b, req, json.RawMessage(`{"accepted":false,"reason":"changed my mind"}`), nil)
		synctest.Wait()
		a.take()
		frame(w.inst[0], a, sid, 1, "still there?")
		synctest.Wait()
		if got := framesTo(b.take()); len(got) != 1 {
			t.Fatalf("B got frames %v: a second answer ended the session", got)
		}
	})
}

// TestOfferExpires: the instance of the agent that asked dies while the
// agent asked has not answered; the offer is forgotten, and the agent
// asked told, after the open timeout and a keepalive.
func TestOfferExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, session.Config{OpenTimeout: 10 * time.Second, Keepalive: time.Second})
		a, b := w.connect(0, "a"), w.connect(1, "b")
		w.offer(0, a, b)
		w.inst[0].Close() // says nothing
		testwait.Advance(11*time.Second - time.Millisecond)
		if got := closes(b.take()); len(got) != 0 {
			t.Fatalf("B was told %v before the offer expired", got)
		}
		testwait.Advance(time.Millisecond)
		if got := closes(b.take()); len(got) != 1 || got[0] != connproto.SessionReasonTimeout {
			t.Fatalf("B was told %v, want timeout", got)
		}
		if n := w.inst[1].Counts().Ends; n != 0 {
			t.Fatalf("%d ends left on B's instance", n)
		}
	})
}

// TestResumeRefusals: a SessionResume names the session's other agent;
// one of a disabled account, the agent itself, or one it no longer
// shares a community with is refused (and in the last case the other
// agent is told the session ended); so is one that says it took in more
// frames than it received.
func TestResumeRefusals(t *testing.T) {
	for name, c := range map[string]struct {
		change func(w *world, a *conn)
		peer   func(a, b *conn) string
		code   int
		told   string // what A is told, if anything
	}{
		"AccountDisabled": {change: func(w *world, a *conn) {
			w.agents.mu.Lock()
			a.agent.AccountDisabled = true
			w.agents.mu.Unlock()
		}, code: connproto.CodeSessionUnknown},
		"Itself":            {peer: func(a, b *conn) string { return b.agent.ID }, code: connproto.CodeSessionUnknown},
		"NoCommunity":       {change: func(w *world, a *conn) { w.allow = false }, code: connproto.CodeSessionNotAllowed, told: connproto.SessionReasonNotAllowed},
		"AckedPastReceived": {code: connproto.CodeInvalidParams},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := newWorld(t, session.Config{Grace: 5 * time.Second})
				a, b := w.connect(0, "a"), w.connect(1, "b")
				sid := w.open(0, a, 1, b)
				w.inst[1].Disconnect(b)
				synctest.Wait()
				if c.change != nil {
					c.change(w, a)
				}
				peer := a.agent.ID
				if c.peer != nil {
					peer = c.peer(a, b)
				}
				b2 := w.connect(1, "b")
				p := connproto.SessionResumeParams{SessionID: sid, Peer: peer}
				if name == "AckedPastReceived" {
					p.Received, p.Acked = 1, 2
				}
				call(w.inst[1], b2, "r1", connproto.MethodSessionResume, p)
				synctest.Wait()
				if f := only(t, b2); errorCode(f) != c.code {
					t.Fatalf("resume: %+v, want error %d", f, c.code)
				}
				got := closes(a.take())
				if c.told == "" && len(got) != 0 || c.told != "" && (len(got) != 1 || got[0] != c.told) {
					t.Fatalf("A was told %v, want %q", got, c.told)
				}
			})
		})
	}
}

// TestAwayOfAnOlderConnection: B resumes the session on a new connection
// before its old one is found gone; word that the old one dropped does
// not start B's grace, and the session goes on past it.
func TestAwayOfAnOlderConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, session.Config{Grace: 5 * time.Second, Keepalive: time.Hour})
		a, b := w.connect(0, "a"), w.connect(1, "b")
		sid := w.open(0, a, 1, b)
		b2 := w.connect(0, "b")
		call(w.inst[0], b2, "r1", connproto.MethodSessionResume, connproto.SessionResumeParams{SessionID: sid, Peer: a.agent.ID})
		synctest.Wait()
		if f := only(t, b2); f.Error != nil {
			t.Fatalf("resume: %+v", f)
		}
		w.inst[1].Disconnect(b) // the old connection, found gone late
		testwait.Advance(time.Minute)
		if got := closes(a.take()); len(got) != 0 {
			t.Fatalf("A was told %v: the old connection's drop ended the session", got)
		}
	})
}

// TestGraceAfterAReturn: B drops, comes back within the grace, drops
// again; the session waits a whole grace from the second drop, not what
// was left of the first.
func TestGraceAfterAReturn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, session.Config{Grace: 5 * time.Second, Keepalive: time.Hour})
		a, b := w.connect(0, "a"), w.connect(1, "b")
		sid := w.open(0, a, 1, b)
		w.inst[1].Disconnect(b)
		time.Sleep(3 * time.Second)
		b2 := w.connect(1, "b")
		call(w.inst[1], b2, "r1", connproto.MethodSessionResume, connproto.SessionResumeParams{SessionID: sid, Peer: a.agent.ID})
		synctest.Wait()
		if f := only(t, b2); f.Error != nil {
			t.Fatalf("resume: %+v", f)
		}
		time.Sleep(time.Second)
		w.inst[1].Disconnect(b2)
		testwait.Advance(5*time.Second - time.Millisecond)
		if got := closes(a.take()); len(got) != 0 {
			t.Fatalf("A was told %v before a grace from the second drop", got)
		}
		testwait.Advance(time.Millisecond)
		if got := closes(a.take()); len(got) != 1 || got[0] != connproto.SessionReasonPeerDisconnected {
			t.Fatalf("A was told %v, want peer_disconnected", got)
		}
	})
}

// TestOtherConnectionOfTheAgent: frames, acknowledgements and closes of a
// session are taken only from the connection that holds its end: another
// connection of the same agent is told the session is unknown, and
// changes nothing.
func TestOtherConnectionOfTheAgent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, session.Config{})
		a, b := w.connect(0, "a"), w.connect(1, "b")
		sid := w.open(0, a, 1, b)
		a2 := otherConn(a)

		raw, _ := json.Marshal("from elsewhere")
		call(w.inst[0], a2, "f1", connproto.MethodSessionFrame, connproto.SessionFrameParams{SessionID: sid, Seq: 1, Text: raw})
		synctest.Wait()
		if f := only(t, a2); errorCode(f) != connproto.CodeSessionUnknown {
			t.Fatalf("a frame from another connection: %+v", f)
		}
		if got := b.take(); len(got) != 0 {
			t.Fatalf("B got %+v from another connection of A", got)
		}

		frame(w.inst[1], b, sid, 1, "to A")
		synctest.Wait()
		if got := framesTo(a.take()); len(got) != 1 {
			t.Fatalf("A got frames %v", got)
		}
		notice(w.inst[0], a2, connproto.MethodSessionAck, connproto.SessionAckParams{SessionID: sid, Seq: 1})
		synctest.Wait()
		if got := b.take(); len(got) != 0 {
			t.Fatalf("an acknowledgement from another connection of A reached B: %+v", got)
		}
		notice(w.inst[0], a, connproto.MethodSessionAck, connproto.SessionAckParams{SessionID: sid, Seq: 1})
		synctest.Wait()
		if f := only(t, b); f.Method != connproto.MethodSessionAck {
			t.Fatalf("A's acknowledgement: B got %+v", f)
		}

		call(w.inst[0], a2, "c1", connproto.MethodSessionClose, connproto.SessionCloseParams{SessionID: sid})
		synctest.Wait()
		if f := only(t, a2); errorCode(f) != connproto.CodeSessionUnknown {
			t.Fatalf("a close from another connection: %+v", f)
		}
		frame(w.inst[0], a, sid, 1, "still open")
		synctest.Wait()
		if got := framesTo(b.take()); len(got) != 1 {
			t.Fatalf("B got frames %v after another connection's close", got)
		}
	})
}

// TestAckOnlyWhatWasPassedOn: an agent that acknowledges frames it was
// not given gives its peer credit for those it was given only: a reader
// cannot open its sender's window past what it has read.
func TestAckOnlyWhatWasPassedOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, session.Config{})
		a, b := w.connect(0, "a"), w.connect(1, "b")
		sid := w.open(0, a, 1, b)
		notice(w.inst[1], b, connproto.MethodSessionAck, connproto.SessionAckParams{SessionID: sid, Seq: 5})
		synctest.Wait()
		if got := a.take(); len(got) != 0 {
			t.Fatalf("A got %+v for an acknowledgement of frames never sent", got)
		}
		frame(w.inst[0], a, sid, 1, "one")
		synctest.Wait()
		b.take()
		notice(w.inst[1], b, connproto.MethodSessionAck, connproto.SessionAckParams{SessionID: sid, Seq: 5})
		synctest.Wait()
		var p connproto.SessionAckParams
		if f := only(t, a); f.Method != connproto.MethodSessionAck || json.Unmarshal(f.Params, &p) != nil || p.Seq != 1 {
			t.Fatalf("A got %+v, want credit up to frame 1", f)
		}
	})
}

// TestNewerConnectionStaysAsked: an agent's older connection ending does
// not take its newer one out of the sessions it may be asked for.
func TestNewerConnectionStaysAsked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, session.Config{})
		a, old := w.connect(0, "a"), w.connect(1, "b")
		b := w.connect(1, "b") // the newer connection, on the same instance
		w.inst[1].Disconnect(old)
		call(w.inst[0], a, "o1", connproto.MethodSessionOpen, connproto.SessionOpenParams{To: "b"})
		synctest.Wait()
		if f := only(t, b); f.Method != connproto.MethodSessionOpen {
			t.Fatalf("B's newer connection got %+v, want the offer", f)
		}
	})
}

// TestFrameRules: a session whose agent breaks its rules ends, and both
// agents are told why: a frame before the session opened, a frame larger
// than allowed, a gap in the numbering, a sender past the receiver's
// window.
func TestFrameRules(t *testing.T) {
	big, _ := json.Marshal(strings.Repeat("x", connproto.MaxSessionFrameBytes))
	for name, c := range map[string]struct {
		send   func(w *world, a *conn, sid string)
		reason string
	}{
		"TooLarge": {send: func(w *world, a *conn, sid string) {
			notice(w.inst[0], a, connproto.MethodSessionFrame, connproto.SessionFrameParams{SessionID: sid, Seq: 1, Text: big})
		}, reason: connproto.SessionReasonFrameTooLarge},
		"Gap": {send: func(w *world, a *conn, sid string) {
			frame(w.inst[0], a, sid, 1, "one")
			frame(w.inst[0], a, sid, 3, "three")
		}, reason: connproto.SessionReasonProtocol},
		"PastTheWindow": {send: func(w *world, a *conn, sid string) {
			for seq := uint64(1); seq <= 3; seq++ {
				frame(w.inst[0], a, sid, seq, "x")
			}
		}, reason: connproto.SessionReasonFlowControl},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := newWorld(t, session.Config{Window: connproto.SessionWindow{Frames: 2}})
				a, b := w.connect(0, "a"), w.connect(1, "b")
				sid := w.open(0, a, 1, b)
				c.send(w, a, sid)
				synctest.Wait()
				if got := closes(a.take()); len(got) != 1 || got[0] != c.reason {
					t.Fatalf("A was told %v, want %s", got, c.reason)
				}
				if got := closes(b.take()); len(got) != 1 || got[0] != c.reason {
					t.Fatalf("B was told %v, want %s", got, c.reason)
				}
			})
		})
	}
	t.Run("BeforeOpen", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t, session.Config{})
			a, b := w.connect(0, "a"), w.connect(1, "b")
			_, sid := w.offer(0, a, b)
			frame(w.inst[0], a, sid, 1, "too soon")
			synctest.Wait()
			if got := closes(a.take()); len(got) != 1 || got[0] != connproto.SessionReasonProtocol {
				t.Fatalf("A was told %v, want protocol_error", got)
			}
			if got := framesTo(b.take()); len(got) != 0 {
				t.Fatalf("B got frames %v before it answered", got)
			}
		})
	})
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
