package connector_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/session"
)

// sharedCommunities is the live sessions' policy in these tests: agents
// may hold a session when they were put in one community.
type sharedCommunities struct {
	mu      sync.Mutex
	members map[string]map[string]bool // guarded by mu: community → agent id
}

func newSharedCommunities() *sharedCommunities {
	return &sharedCommunities{members: make(map[string]map[string]bool)}
}

// join puts agents in community.
func (c *sharedCommunities) join(community string, agents ...*testAgent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.members[community] == nil {
		c.members[community] = make(map[string]bool)
	}
	for _, g := range agents {
		c.members[community][g.ID] = true
	}
}

// leave takes g out of community.
func (c *sharedCommunities) leave(community string, g *testAgent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.members[community], g.ID)
}

// MaySession implements session.Policy.
func (c *sharedCommunities) MaySession(_ context.Context, from, to *switchboard.Agent) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.members {
		if m[from.ID] && m[to.ID] {
			return true, nil
		}
	}
	return false, nil
}

// newSessionServer is a test server whose live sessions use cfg.
func newSessionServer(t *testing.T, cfg session.Config) *testServer {
	t.Helper()
	s := newTestServer(t)
	s.sessionConfig = cfg
	s.restart()
	return s
}

// sessionClient runs a client of g that takes no tasks and hands the
// sessions offered to it to h (nil: it refuses them); it returns once the
// agent is connected.
func sessionClient(t *testing.T, s *testServer, url string, g *testAgent, h connector.SessionHandlerFunc) *connector.Client {
	t.Helper()
	hello := make(chan struct{}, 1)
	c := &connector.Client{URLs: []string{url}, Token: g.Token, Logger: s.log,
		OnConnect: func(string) { signalOnce(hello) }}
	if h != nil {
		c.Sessions = h
	}
	runClient(t, c)
	select {
	case <-hello: // the agent said hello: its connection is in the store
	case <-time.After(testwait.Timeout):
		t.Fatalf("%s did not connect", g.Handle)
	}
	return c
}

// signalOnce sets a capacity-1 channel's signal, if it is not set.
func signalOnce(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// accepted collects the sessions an agent accepts.
type accepted chan *connector.Session

// handler accepts every session and hands it to the test.
func (a accepted) handler(_ context.Context, r *connector.SessionRequest) {
	sess, err := r.Accept()
	if err == nil {
		a <- sess
	}
}

// next returns the next session accepted.
func (a accepted) next(t *testing.T) *connector.Session {
	t.Helper()
	select {
	case sess := <-a:
		return sess
	case <-time.After(testwait.Timeout):
		t.Fatal("no session was accepted")
		return nil
	}
}

// frameText is the text of frame i: plain ASCII, or every seventh one
// with what JSON escapes (a quote, a backslash, a newline, a control
// character, HTML) and text beyond ASCII.
func frameText(i int) string {
	t := fmt.Sprint("frame ", i, " ", strings.Repeat("x", i%300))
	if i%7 == 0 {
		t += " \"quoted\" back\\slash\nline \x01 <b>&amp; é ☎"
	}
	return t
}

// echoFrames sends back every frame it receives, until the session ends.
func echoFrames(sess *connector.Session) {
	ctx := context.Background()
	for {
		f, err := sess.Receive(ctx)
		if err != nil {
			return
		}
		if f.IsJSON() {
			err = sess.SendJSON(ctx, f.Data)
		} else {
			err = sess.Send(ctx, f.Text)
		}
		if err != nil {
			return
		}
	}
}

// receive returns the next frame within the test's bound.
func receive(t *testing.T, sess *connector.Session) connector.Frame {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	f, err := sess.Receive(ctx)
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	return f
}

// endedWith waits for the session to end and checks its reason.
func endedWith(t *testing.T, sess *connector.Session, reason string) *connector.SessionError {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	for {
		_, err := sess.Receive(ctx)
		if err == nil {
			continue // frames that arrived before the end
		}
		var se *connector.SessionError
		if !errors.As(err, &se) {
			t.Fatalf("receive: %v, want the session to end with %s", err, reason)
		}
		if !errors.Is(err, connector.ErrSessionClosed) {
			t.Fatal("a SessionError does not match ErrSessionClosed")
		}
		if se.Reason != reason {
			t.Fatalf("the session ended with %q (%s), want %q", se.Reason, se.Message, reason)
		}
		return se
	}
}

// openSession opens a session from c to handle within the test's bound.
func openSession(t *testing.T, c *connector.Client, handle string) *connector.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	sess, err := c.OpenSession(ctx, handle, map[string]any{"topic": "test"})
	if err != nil {
		t.Fatalf("open a session with %s: %v", handle, err)
	}
	return sess
}

// TestSessionEcho: A opens a session with B, which accepts and echoes;
// text and JSON frames come back in order, each once; A closes, and B is
// told.
func TestSessionEcho(t *testing.T) {
	s := newTestServer(t)
	a, b := s.agent("alice"), s.agent("bob-agent")
	s.shared.join("team", a, b)
	got := make(accepted, 1)
	var meta json.RawMessage
	sessionClient(t, s, s.URL(), b, func(ctx context.Context, r *connector.SessionRequest) {
		if r.From.Handle != "alice" || r.From.ID != a.ID {
			t.Errorf("the request came from %+v", r.From)
		}
		meta = r.Metadata
		got.handler(ctx, r)
	})
	ca := sessionClient(t, s, s.URL(), a, nil)

	sess := openSession(t, ca, "bob-agent")
	if sess.Peer().Handle != "bob-agent" || sess.Peer().ID != b.ID {
		t.Fatalf("peer %+v", sess.Peer())
	}
	bs := got.next(t)
	if string(meta) != `{"topic":"test"}` {
		t.Fatalf("metadata %s", meta)
	}
	go echoFrames(bs)

	const n = 1000 // several windows
	ctx := context.Background()
	go func() {
		for i := range n {
			var err error
			if i%10 == 0 {
				err = sess.SendJSON(ctx, map[string]int{"i": i})
			} else {
				err = sess.Send(ctx, frameText(i))
			}
			if err != nil {
				t.Errorf("send %d: %v", i, err)
				return
			}
		}
	}()
	for i := range n {
		f := receive(t, sess)
		if f.Seq != uint64(i+1) {
			t.Fatalf("frame %d has seq %d", i, f.Seq)
		}
		if i%10 == 0 {
			if got, want := string(f.Data), fmt.Sprintf(`{"i":%d}`, i); got != want {
				t.Fatalf("frame %d: %s, want %s", i, got, want)
			}
			continue
		}
		if want := frameText(i); f.Text != want || f.IsJSON() {
			t.Fatalf("frame %d: %q", i, f.Text)
		}
	}
	if err := sess.CloseWith("done"); err != nil {
		t.Fatal(err)
	}
	se := endedWith(t, bs, connproto.SessionReasonClosed)
	if se.Message != "done" {
		t.Fatalf("B was told %q", se.Message)
	}
	if err := sess.Send(ctx, "after"); !errors.Is(err, connector.ErrSessionClosed) {
		t.Fatalf("send after close: %v", err)
	}
	testwait.For(t, "the server to forget the session", func() bool { return s.sessions.Counts().Ends == 0 })
}

// TestSessionRefused: the agent asked refuses (or takes no sessions), and
// the agent that asked is told why; nobody is asked when the two share no
// community, when the other is not connected, or does not exist.
func TestSessionRefused(t *testing.T) {
	s := newTestServer(t)
	a, b, c, d, e := s.agent("alice"), s.agent("busy"), s.agent("mute"), s.agent("stranger"), s.agent("absent")
	s.shared.join("team", a, b, c, e)
	sessionClient(t, s, s.URL(), b, func(ctx context.Context, r *connector.SessionRequest) { _ = r.Refuse("busy right now") })
	sessionClient(t, s, s.URL(), c, nil) // takes no sessions
	asked := make(chan struct{}, 1)
	sessionClient(t, s, s.URL(), d, func(ctx context.Context, r *connector.SessionRequest) { asked <- struct{}{} })
	ca := sessionClient(t, s, s.URL(), a, nil)

	tests := map[string]struct {
		to      string
		code    int
		message string
	}{
		"Refused":        {"busy", connproto.CodeSessionRefused, "busy right now"},
		"NoSessions":     {"mute", connproto.CodeSessionRefused, "takes no sessions"},
		"NoCommunity":    {"stranger", connproto.CodeSessionNotAllowed, "share no community"},
		"NotConnected":   {"absent", connproto.CodeSessionPeerOffline, "not connected"},
		"NoSuchAgent":    {"nobody", connproto.CodeSessionPeerNotFound, "no agent"},
		"Itself":         {"alice", connproto.CodeSessionNotAllowed, "itself"},
		"AddressOfAgent": {s.URL() + "/a/busy", connproto.CodeSessionRefused, "busy right now"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
			defer cancel()
			_, err := ca.OpenSession(ctx, tc.to, nil)
			var rpc *connector.RPCError
			if !errors.As(err, &rpc) || rpc.Code != tc.code || !strings.Contains(rpc.Message, tc.message) {
				t.Fatalf("got %v, want code %d with %q", err, tc.code, tc.message)
			}
		})
	}
	select {
	case <-asked:
		t.Fatal("an agent sharing no community was asked")
	default:
	}
	// The refusal reaches A just before its end is forgotten.
	testwait.For(t, "the server to forget the refused ends", func() bool { return s.sessions.Counts().Ends == 0 })
}

// TestSessionSlowReader: B stops reading. A's sends wait once its window
// is in flight, the server holds at most that window, and once B reads
// again every frame arrives, in order, once.
func TestSessionSlowReader(t *testing.T) {
	s := newTestServer(t)
	a, b := s.agent("writer"), s.agent("reader")
	s.shared.join("team", a, b)
	got := make(accepted, 1)
	sessionClient(t, s, s.URL(), b, got.handler)
	ca := sessionClient(t, s, s.URL(), a, nil)
	sess := openSession(t, ca, "reader")
	bs := got.next(t)
	window := sess.Window().Frames

	const n = 1000
	var mu sync.Mutex
	sent := 0
	sendCtx, stopSending := context.WithCancel(context.Background())
	defer stopSending()
	done := make(chan error, 1)
	go func() {
		for i := range n {
			if err := sess.Send(sendCtx, fmt.Sprint(i)); err != nil {
				done <- err
				return
			}
			mu.Lock()
			sent++
			mu.Unlock()
		}
		done <- nil
	}()
	testwait.For(t, "the window to fill", func() bool { return bs.Buffered() == window })
	// The sender is held: what it sent is the window, and the server
	// holds no more than that.
	mu.Lock()
	held := sent
	mu.Unlock()
	if held != window || sess.InFlight() != window {
		t.Fatalf("sent %d, in flight %d, want the window, %d", held, sess.InFlight(), window)
	}
	if c := s.sessions.Counts(); c.Buffered > int64(window) {
		t.Fatalf("the server holds %d frames for a window of %d", c.Buffered, window)
	}
	select {
	case err := <-done:
		t.Fatalf("the sender was not held: %v", err)
	default:
	}
	for i := range n {
		if f := receive(t, bs); f.Text != fmt.Sprint(i) {
			t.Fatalf("frame %d: %q", i, f.Text)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestSessionCloseByAcceptor: the agent that accepted closes; the one
// that asked is told, after the frames sent before.
func TestSessionCloseByAcceptor(t *testing.T) {
	s := newTestServer(t)
	a, b := s.agent("alice"), s.agent("bob-agent")
	s.shared.join("team", a, b)
	got := make(accepted, 1)
	sessionClient(t, s, s.URL(), b, got.handler)
	ca := sessionClient(t, s, s.URL(), a, nil)
	sess := openSession(t, ca, "bob-agent")
	bs := got.next(t)
	ctx := context.Background()
	for i := range 3 {
		if err := bs.Send(ctx, fmt.Sprint("last words ", i)); err != nil {
			t.Fatal(err)
		}
	}
	_ = bs.CloseWith("bye")
	for i := range 3 {
		if f := receive(t, sess); f.Text != fmt.Sprint("last words ", i) {
			t.Fatalf("frame %d: %q", i, f.Text)
		}
	}
	if se := endedWith(t, sess, connproto.SessionReasonClosed); se.Message != "bye" {
		t.Fatalf("message %q", se.Message)
	}
	if err := bs.Err(); err == nil {
		t.Fatal("the closed session has no error")
	}
}

// TestSessionFrameTooLarge: a frame over 64 KiB is refused before it is
// sent, and the session goes on.
func TestSessionFrameTooLarge(t *testing.T) {
	s := newTestServer(t)
	a, b := s.agent("alice"), s.agent("bob-agent")
	s.shared.join("team", a, b)
	got := make(accepted, 1)
	sessionClient(t, s, s.URL(), b, got.handler)
	ca := sessionClient(t, s, s.URL(), a, nil)
	sess := openSession(t, ca, "bob-agent")
	bs := got.next(t)
	ctx := context.Background()
	if err := sess.Send(ctx, strings.Repeat("x", connproto.MaxSessionFrameBytes)); !errors.Is(err, connector.ErrFrameTooLarge) {
		t.Fatalf("a frame over the limit: %v", err)
	}
	big := strings.Repeat("y", connproto.MaxSessionFrameBytes-2) // its JSON is the limit
	if err := sess.Send(ctx, big); err != nil {
		t.Fatal(err)
	}
	if f := receive(t, bs); f.Text != big || f.Seq != 1 {
		t.Fatalf("frame seq %d of %d bytes", f.Seq, len(f.Text))
	}
}

// TestSessionResumesAcrossReconnect: B's connection is cut while frames
// flow both ways; B reconnects within the grace, the session resumes, and
// nothing is lost, repeated or reordered.
func TestSessionResumesAcrossReconnect(t *testing.T) {
	s := newSessionServer(t, session.Config{Grace: sessionGrace})
	a, b := s.agent("alice"), s.agent("bob-agent")
	s.shared.join("team", a, b)
	p := newProxy(t, s.addr)
	got := make(accepted, 1)
	sessionClient(t, s, p.URL(), b, got.handler)
	ca := sessionClient(t, s, s.URL(), a, nil)
	sess := openSession(t, ca, "bob-agent")
	bs := got.next(t)
	go echoFrames(bs)

	const n = 2000
	ctx := context.Background()
	go func() {
		for i := range n {
			if err := sess.Send(ctx, fmt.Sprint(i)); err != nil {
				t.Errorf("send %d: %v", i, err)
				return
			}
		}
	}()
	for i := range n {
		if i == n/4 || i == n/2 {
			p.cut() // B's connection drops; its client reconnects through the proxy
		}
		if f := receive(t, sess); f.Text != fmt.Sprint(i) {
			t.Fatalf("echo %d: %q (seq %d)", i, f.Text, f.Seq)
		}
	}
	if p.accepted.Load() < 3 {
		t.Fatalf("B connected %d times, want 3", p.accepted.Load())
	}
}

// TestSessionDroppedPastGrace: B's connection drops and does not come
// back; after the grace A is told peer_disconnected, and B's client tells
// its side disconnected.
func TestSessionDroppedPastGrace(t *testing.T) {
	s := newSessionServer(t, session.Config{Grace: 300 * time.Millisecond})
	a, b := s.agent("alice"), s.agent("bob-agent")
	s.shared.join("team", a, b)
	p := newProxy(t, s.addr)
	got := make(accepted, 1)
	sessionClient(t, s, p.URL(), b, got.handler)
	ca := sessionClient(t, s, s.URL(), a, nil)
	sess := openSession(t, ca, "bob-agent")
	bs := got.next(t)
	p.close() // the connection and the way back
	endedWith(t, sess, connproto.SessionReasonPeerDisconnected)
	endedWith(t, bs, connproto.SessionReasonDisconnected)
	testwait.For(t, "the server to forget the session", func() bool { return s.sessions.Counts().Ends == 0 })
}

// TestSessionClientStops: an agent whose client stops closes its sessions
// at once (the peer does not wait for the grace).
func TestSessionClientStops(t *testing.T) {
	s := newSessionServer(t, session.Config{Grace: time.Hour})
	a, b := s.agent("alice"), s.agent("bob-agent")
	s.shared.join("team", a, b)
	got := make(accepted, 1)
	cb := &connector.Client{URLs: []string{s.URL()}, Token: b.Token, Logger: s.log, Sessions: connector.SessionHandlerFunc(got.handler)}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cb.Run(ctx) }()
	testwait.For(t, "B to say hello", func() bool { return s.sessionsKnow(b) })
	ca := sessionClient(t, s, s.URL(), a, nil)
	sess := openSession(t, ca, "bob-agent")
	bs := got.next(t)
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	endedWith(t, bs, connector.ReasonStopped)
	endedWith(t, sess, connproto.SessionReasonClosed)
}

// TestSessionServerRestart: the server restarts under both agents; they
// reconnect and the session goes on.
func TestSessionServerRestart(t *testing.T) {
	s := newTestServer(t)
	a, b := s.agent("alice"), s.agent("bob-agent")
	s.shared.join("team", a, b)
	got := make(accepted, 1)
	sessionClient(t, s, s.URL(), b, got.handler)
	ca := sessionClient(t, s, s.URL(), a, nil)
	sess := openSession(t, ca, "bob-agent")
	bs := got.next(t)
	go echoFrames(bs)
	ctx := context.Background()
	must(t, sess.Send(ctx, "before"))
	if f := receive(t, sess); f.Text != "before" {
		t.Fatalf("got %q", f.Text)
	}
	s.restart()
	must(t, sess.Send(ctx, "after"))
	if f := receive(t, sess); f.Text != "after" || f.Seq != 2 {
		t.Fatalf("got %q seq %d", f.Text, f.Seq)
	}
}

// TestSessionPolicyOnResume: an agent that left the community cannot take
// its session up again after a reconnect.
func TestSessionPolicyOnResume(t *testing.T) {
	s := newTestServer(t)
	a, b := s.agent("alice"), s.agent("bob-agent")
	s.shared.join("team", a, b)
	p := newProxy(t, s.addr)
	got := make(accepted, 1)
	sessionClient(t, s, p.URL(), b, got.handler)
	ca := sessionClient(t, s, s.URL(), a, nil)
	sess := openSession(t, ca, "bob-agent")
	bs := got.next(t)
	s.shared.leave("team", b)
	p.cut()
	endedWith(t, bs, connproto.SessionReasonNotAllowed)
	endedWith(t, sess, connproto.SessionReasonNotAllowed)
}

// cut drops every connection the proxy carries now; new ones are still
// accepted.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pr := range p.pairs {
		_ = pr.client.Close()
		_ = pr.server.Close()
	}
}

// sessionsKnow reports whether g's connection said hello: its session is
// in the store.
func (s *testServer) sessionsKnow(g *testAgent) bool {
	sess, err := s.db.FindSession(context.Background(), g.ID)
	return err == nil && sess.Live(time.Now())
}

// TestSessionCloseThenStop: an agent closes its session and stops its
// client at once (as chat does when its input ends): the peer is told
// "closed" after the frames sent before, not left to wait out the grace.
func TestSessionCloseThenStop(t *testing.T) {
	s := newSessionServer(t, session.Config{Grace: time.Hour})
	a, b := s.agent("alice"), s.agent("bob-agent")
	s.shared.join("team", a, b)
	got := make(accepted, 1)
	sessionClient(t, s, s.URL(), b, got.handler)
	for i := range 20 {
		ca := &connector.Client{URLs: []string{s.URL()}, Token: a.Token, Logger: s.log}
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- ca.Run(ctx) }()
		sess := openSession(t, ca, "bob-agent")
		bs := got.next(t)
		for j := range 3 {
			must(t, sess.Send(context.Background(), fmt.Sprint(i, " ", j)))
		}
		_ = sess.CloseWith("bye")
		stop()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		for j := range 3 {
			if f := receive(t, bs); f.Text != fmt.Sprint(i, " ", j) {
				t.Fatalf("round %d frame %d: %q", i, j, f.Text)
			}
		}
		if se := endedWith(t, bs, connproto.SessionReasonClosed); se.Message != "bye" {
			t.Fatalf("round %d: B was told %q", i, se.Message)
		}
	}
}
