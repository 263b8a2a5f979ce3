package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/session"
)

// These tests run the session service alone, in synctest bubbles: two
// instances on one in-process bus, agents as fake connections that record
// what the service writes to them, and a store of agents in memory. The
// timing (open timeout, grace, keepalive) is exact in a bubble.

// agents is an in-memory session.Agents.
type agents struct {
	mu       sync.Mutex
	byID     map[string]*switchboard.Agent
	sessions map[string]*switchboard.AgentSession
}

func (a *agents) FindAgentByHandle(_ context.Context, handle string) (*switchboard.Agent, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, g := range a.byID {
		if g.Handle == handle {
			return g, nil
		}
	}
	return nil, switchboard.Errorf(switchboard.ENOTFOUND, "no agent")
}

func (a *agents) FindAgentByID(_ context.Context, id string) (*switchboard.Agent, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if g := a.byID[id]; g != nil {
		return g, nil
	}
	return nil, switchboard.Errorf(switchboard.ENOTFOUND, "no agent")
}

func (a *agents) FindSession(_ context.Context, id string) (*switchboard.AgentSession, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.sessions[id]; s != nil {
		return s, nil
	}
	return nil, switchboard.Errorf(switchboard.ENOTFOUND, "no session")
}

// conn is a fake connection: it records the frames written to it.
type conn struct {
	agent  *switchboard.Agent
	holder string

	mu     sync.Mutex
	frames []connproto.Frame
	closed bool
}

func (c *conn) SessionAgent() *switchboard.Agent { return c.agent }
func (c *conn) SessionHolder() string            { return c.holder }
func (c *conn) SessionWrite(b []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	var f connproto.Frame
	if err := json.Unmarshal(b, &f); err != nil {
		f = connproto.Frame{Method: fmt.Sprintf("not JSON: %q", b)} // no jsonrpc: the tests fail on it
	}
	c.frames = append(c.frames, f)
	return true
}

// take returns the frames written since the last take.
func (c *conn) take() []connproto.Frame {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.frames
	c.frames = nil
	return out
}

// world is two instances and their agents.
type world struct {
	t      *testing.T
	bus    *membus.Bus
	agents *agents
	inst   [2]*session.Service
	cfg    session.Config
	allow  bool
	conns  int // connections made, for their names
}

func newWorld(t *testing.T, cfg session.Config) *world {
	w := &world{t: t, bus: membus.New(), cfg: cfg, allow: true,
		agents: &agents{byID: make(map[string]*switchboard.Agent), sessions: make(map[string]*switchboard.AgentSession)}}
	for i := range w.inst {
		w.inst[i] = w.start(fmt.Sprint("instance-", i))
	}
	t.Cleanup(func() {
		for _, s := range w.inst {
			s.Close()
		}
		_ = w.bus.Close()
	})
	return w
}

// start starts an instance's service.
func (w *world) start(id string) *session.Service {
	s := session.New(session.Deps{Carrier: w.bus, Agents: w.agents, InstanceID: id,
		Policy: session.PolicyFunc(func(context.Context, *switchboard.Agent, *switchboard.Agent) (bool, error) { return w.allow, nil })}, w.cfg)
	if err := s.Start(context.Background()); err != nil {
		w.t.Fatal(err)
	}
	return s
}

// connect creates agent handle, connected to instance i.
func (w *world) connect(i int, handle string) *conn {
	g := &switchboard.Agent{ID: "id-" + handle, Handle: handle, Name: handle, Mode: switchboard.ModeConnector}
	w.conns++ // in a bubble, the clock alone would give two connections one name
	c := &conn{agent: g, holder: fmt.Sprint("conn/", handle, "/", time.Now().UnixNano(), "/", w.conns)}
	w.agents.mu.Lock()
	w.agents.byID[g.ID] = g
	w.agents.sessions[g.ID] = &switchboard.AgentSession{AgentID: g.ID, Holder: c.holder, InstanceID: w.inst[i].InstanceID, ExpiresAt: time.Now().Add(time.Hour)}
	w.agents.mu.Unlock()
	w.inst[i].Connect(c)
	return c
}

// replaceAll replaces each old, new pair of args in s.
func replaceAll(s string, args ...string) string { return strings.NewReplacer(args...).Replace(s) }

// call sends a request from c to instance i.
func call(s *session.Service, c *conn, id, method string, params any) {
	p, _ := json.Marshal(params)
	s.Handle(context.Background(), c, method, json.RawMessage(`"`+id+`"`), p)
}

// notice sends a notification from c to instance i.
func notice(s *session.Service, c *conn, method string, params any) {
	p, _ := json.Marshal(params)
	s.Handle(context.Background(), c, method, nil, p)
}

// only returns the one frame written to c, and fails unless there is
// exactly one.
func only(t *testing.T, c *conn) connproto.Frame {
	t.Helper()
	fs := c.take()
	if len(fs) != 1 {
		t.Fatalf("%s got %d frames, want 1: %+v", c.agent.Handle, len(fs), fs)
	}
	return fs[0]
}

// open has a (on instance ia) open a session with b (on instance ib),
// which accepts; it returns the session id.
func (w *world) open(ia int, a *conn, ib int, b *conn) string {
	w.t.Helper()
	return w.openNow(ia, a, ib, b)
}

// openNow is open; it needs no bubble.
func (w *world) openNow(ia int, a *conn, ib int, b *conn) string {
	w.t.Helper()
	call(w.inst[ia], a, "o1", connproto.MethodSessionOpen, connproto.SessionOpenParams{To: b.agent.Handle})
	offer := only(w.t, b) // the in-process bus delivers before Publish returns
	var o connproto.SessionOffer
	_ = json.Unmarshal(offer.Params, &o)
	var id string
	_ = json.Unmarshal(offer.ID, &id)
	w.inst[ib].Answer(b, id, json.RawMessage(`{"accepted":true}`), nil)
	res := only(w.t, a)
	var r connproto.SessionOpenResult
	if res.Error != nil || json.Unmarshal(res.Result, &r) != nil || r.SessionID != o.SessionID {
		w.t.Fatalf("open: %+v", res)
	}
	return r.SessionID
}

// frame sends text frame seq from c on instance i.
func frame(s *session.Service, c *conn, sid string, seq uint64, text string) {
	raw, _ := json.Marshal(text)
	notice(s, c, connproto.MethodSessionFrame, connproto.SessionFrameParams{SessionID: sid, Seq: seq, Text: raw})
}

// reasonOf returns the reason of a SessionClose frame.
func reasonOf(t *testing.T, f connproto.Frame) string {
	t.Helper()
	var p connproto.SessionCloseParams
	if f.Method != connproto.MethodSessionClose || json.Unmarshal(f.Params, &p) != nil {
		t.Fatalf("want a SessionClose, got %s %s", f.Method, f.Params)
	}
	return p.Reason
}

func TestOpenAcrossInstances(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, session.Config{})
		a, b := w.connect(0, "a"), w.connect(1, "b")
		sid := w.open(0, a, 1, b)
		frame(w.inst[0], a, sid, 1, "hi")
		synctest.Wait()
		var p connproto.SessionFrameParams
		f := only(t, b)
		if json.Unmarshal(f.Params, &p) != nil || string(p.Text) != `"hi"` || p.Seq != 1 {
			t.Fatalf("B got %+v", f)
		}
	})
}

// TestOpenTimeout: the agent asked never answers; the one that asked is
// told after the open timeout, and the one asked is told the offer is
// gone.
func TestOpenTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, session.Config{OpenTimeout: 10 * time.Second})
		a, b := w.connect(0, "a"), w.connect(1, "b")
		call(w.inst[0], a, "o1", connproto.MethodSessionOpen, connproto.SessionOpenParams{To: "b"})
		synctest.Wait()
		only(t, b) // the offer
		testwait.Advance(10*time.Second - time.Nanosecond)
		if fs := a.take(); len(fs) != 0 {
			t.Fatalf("answered before the timeout: %+v", fs)
		}
		testwait.Advance(time.Nanosecond)
		if f := only(t, a); f.Error == nil || f.Error.Code != connproto.CodeSessionTimeout {
			t.Fatalf("A got %+v", f)
		}
		if r := reasonOf(t, only(t, b)); r != connproto.SessionReasonTimeout {
			t.Fatalf("B was told %s", r)
		}
		if w.inst[0].Counts().Ends+w.inst[1].Counts().Ends != 0 {
			t.Fatal("ends left behind")
		}
	})
}

// TestGrace: B's connection drops; A hears of it at the end of the grace,
// not before; had B resumed within it, the session would go on.
func TestGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, session.Config{Grace: 5 * time.Second})
		a, b := w.connect(0, "a"), w.connect(1, "b")
		sid := w.open(0, a, 1, b)
		w.inst[1].Disconnect(b)
		testwait.Advance(5*time.Second - time.Millisecond)
		if fs := a.take(); len(fs) != 0 {
			t.Fatalf("A was told before the grace ended: %+v", fs)
		}
		testwait.Advance(time.Millisecond)
		if r := reasonOf(t, only(t, a)); r != connproto.SessionReasonPeerDisconnected {
			t.Fatalf("A was told %s", r)
		}
		// B comes back too late.
		b2 := w.connect(0, "b")
		call(w.inst[0], b2, "r1", connproto.MethodSessionResume, connproto.SessionResumeParams{SessionID: sid, Peer: a.agent.ID})
		testwait.Advance(time.Minute)
		if f := only(t, b2); f.Error == nil || f.Error.Code != connproto.CodeSessionUnknown {
			t.Fatalf("a late resume: %+v", f)
		}
	})
}

// TestResumeWithinGrace: B comes back on the other instance; the session
// goes on, and A sends again what B did not get.
func TestResumeWithinGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, session.Config{Grace: 5 * time.Second})
		a, b := w.connect(0, "a"), w.connect(1, "b")
		sid := w.open(0, a, 1, b)
		frame(w.inst[0], a, sid, 1, "one")
		synctest.Wait()
		only(t, b)
		w.inst[1].Disconnect(b)
		frame(w.inst[0], a, sid, 2, "two") // lost
		time.Sleep(4 * time.Second)
		b2 := w.connect(0, "b")
		call(w.inst[0], b2, "r1", connproto.MethodSessionResume, connproto.SessionResumeParams{SessionID: sid, Peer: a.agent.ID, Received: 1, Acked: 1})
		synctest.Wait()
		var rr connproto.SessionResumeResult
		if f := only(t, b2); f.Error != nil || json.Unmarshal(f.Result, &rr) != nil || rr.From != 1 {
			t.Fatalf("resume: %+v", f)
		}
		var resend connproto.SessionResendParams
		for _, f := range a.take() {
			if f.Method == connproto.MethodSessionResend {
				_ = json.Unmarshal(f.Params, &resend)
			}
		}
		if resend.From != 2 {
			t.Fatalf("A was asked to send again from %d, want 2", resend.From)
		}
		frame(w.inst[0], a, sid, 2, "two")
		testwait.Advance(time.Minute) // long past the grace
		for _, f := range a.take() {
			if f.Method == connproto.MethodSessionClose {
				t.Fatalf("the session ended: %s", f.Params)
			}
		}
		var p connproto.SessionFrameParams
		got := b2.take()
		if len(got) == 0 || json.Unmarshal(got[0].Params, &p) != nil || p.Seq != 2 {
			t.Fatalf("B got %+v", got)
		}
	})
}

// TestSilentInstance: B's instance stops without a word (it was killed);
// A's end takes the silence for a drop, and ends the session after three
// keepalives and the grace.
func TestSilentInstance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, session.Config{Keepalive: time.Second, Grace: 2 * time.Second})
		a, b := w.connect(0, "a"), w.connect(1, "b")
		w.open(0, a, 1, b)
		w.inst[1].Close() // forgets its ends, says nothing
		testwait.Advance(3 * time.Second)
		for _, f := range a.take() {
			if f.Method == connproto.MethodSessionClose {
				t.Fatal("closed before the grace")
			}
		}
		testwait.Advance(3 * time.Second)
		if r := reasonOf(t, only(t, a)); r != connproto.SessionReasonPeerDisconnected {
			t.Fatalf("A was told %s", r)
		}
	})
}

// TestIdleSessionStays: an idle session lives on keepalives.
func TestIdleSessionStays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, session.Config{Keepalive: time.Second, Grace: time.Second})
		a, b := w.connect(0, "a"), w.connect(1, "b")
		w.open(0, a, 1, b)
		testwait.Advance(time.Hour)
		if fs := append(a.take(), b.take()...); len(fs) != 0 {
			t.Fatalf("an idle session was told %+v", fs)
		}
		if n := w.inst[0].Counts().Ends + w.inst[1].Counts().Ends; n != 2 {
			t.Fatalf("%d ends", n)
		}
	})
}

// lossy is a carrier that loses the frames whose seq lost says.
type lossy struct {
	*membus.Bus
	mu   sync.Mutex
	lost map[uint64]bool // guarded by mu
}

// Publish loses a frame envelope whose first number is in lost (once).
func (l *lossy) Publish(ctx context.Context, subject string, data []byte) error {
	if len(data) > 2 && data[1] == 4 { // kindFrame
		l.mu.Lock()
		drop := l.lost[uint64(data[2])]
		delete(l.lost, uint64(data[2]))
		l.mu.Unlock()
		if drop {
			return nil
		}
	}
	return l.Bus.Publish(ctx, subject, data)
}

// TestLostFrames: frames lost between instances are sent again, in the
// middle (a gap) and at the tail (found by the keepalive).
func TestLostFrames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, session.Config{Keepalive: time.Second})
		carrier := &lossy{Bus: w.bus, lost: map[uint64]bool{2: true, 4: true}}
		for i := range w.inst {
			w.inst[i].Close()
			s := session.New(session.Deps{Carrier: carrier, Agents: w.agents, InstanceID: fmt.Sprint("lossy-", i),
				Policy: session.PolicyFunc(func(context.Context, *switchboard.Agent, *switchboard.Agent) (bool, error) { return true, nil })}, w.cfg)
			if err := s.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			w.inst[i] = s
		}
		a, b := w.connect(0, "a"), w.connect(1, "b")
		sid := w.open(0, a, 1, b)
		for seq := uint64(1); seq <= 4; seq++ {
			frame(w.inst[0], a, sid, seq, fmt.Sprint(seq))
		}
		synctest.Wait()
		resendFrom := func() uint64 {
			for _, f := range a.take() {
				var p connproto.SessionResendParams
				if f.Method == connproto.MethodSessionResend && json.Unmarshal(f.Params, &p) == nil {
					return p.From
				}
			}
			return 0
		}
		if from := resendFrom(); from != 2 {
			t.Fatalf("asked to send again from %d, want 2", from)
		}
		carrier.mu.Lock()
		carrier.lost[4] = true // lost again: the tail
		carrier.mu.Unlock()
		for seq := uint64(2); seq <= 4; seq++ {
			frame(w.inst[0], a, sid, seq, fmt.Sprint(seq))
		}
		synctest.Wait()
		testwait.Advance(3 * time.Second) // a keepalive says 4 was sent
		if from := resendFrom(); from != 4 {
			t.Fatalf("asked to send again from %d, want 4", from)
		}
		frame(w.inst[0], a, sid, 4, "4")
		synctest.Wait()
		var seqs []uint64
		for _, f := range b.take() {
			var p connproto.SessionFrameParams
			if f.Method == connproto.MethodSessionFrame && json.Unmarshal(f.Params, &p) == nil {
				seqs = append(seqs, p.Seq)
			}
		}
		if fmt.Sprint(seqs) != "[1 2 3 4]" {
			t.Fatalf("B got frames %v", seqs)
		}
	})
}

// TestLimit: a connection holds at most MaxSessions.
func TestLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, session.Config{MaxSessions: 1})
		a, b, c := w.connect(0, "a"), w.connect(1, "b"), w.connect(1, "c")
		w.open(0, a, 1, b)
		call(w.inst[0], a, "o2", connproto.MethodSessionOpen, connproto.SessionOpenParams{To: c.agent.Handle})
		synctest.Wait()
		if f := only(t, a); f.Error == nil || f.Error.Code != connproto.CodeSessionLimit {
			t.Fatalf("got %+v", f)
		}
	})
}

// TestResumeRefusesOddIDs: a SessionResume whose session id could change
// the Carrier's subjects (a separator, a wildcard) is answered "unknown
// session", and publishes nothing.
func TestResumeRefusesOddIDs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, session.Config{Grace: 5 * time.Second})
		a, b := w.connect(0, "a"), w.connect(1, "b")
		for i, sid := range []string{"*", ">", "x.y", "a b", strings.Repeat("x", 200)} {
			call(w.inst[0], a, fmt.Sprint("r", i), connproto.MethodSessionResume, connproto.SessionResumeParams{SessionID: sid, Peer: b.agent.ID})
			synctest.Wait()
			if f := only(t, a); f.Error == nil || f.Error.Code != connproto.CodeSessionUnknown {
				t.Fatalf("resume of %q: %+v", sid, f)
			}
			if got := b.take(); len(got) != 0 {
				t.Fatalf("resume of %q reached B: %+v", sid, got)
			}
		}
	})
}
