package hub_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/relay"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/coder/websocket"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/hub"
	"github.com/switchboard-dev/switchboard/internal/pipenet"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/ratelimit"
)

// TestDropBeforeAckRedelivers checks at-least-once delivery: an offer the
// agent never acknowledged is offered again on its next connection.
func TestDropBeforeAckRedelivers(t *testing.T) {
	s := newServer(t)
	g, tok := s.agent("alice")
	peer := s.peerToken(g, "bob")
	a := s.connect(tok)
	s.send(g, peer, "first", true)
	o := a.nextOffer()
	must(t, a.ws.CloseNow()) // gone without acknowledging

	b := s.connect(tok)
	again := b.nextOffer()
	if again.taskID != o.taskID || again.messageID != o.messageID || string(again.id) != string(o.id) {
		t.Fatalf("redelivered %+v, want %+v", again, o)
	}
	b.complete(again, "done")
	s.waitState(o.taskID, a2a.TaskStateCompleted)
}

// TestAckedWorkNotHeldIsOfferedAgain checks hello's holding list: work the
// agent acknowledged but lost (it restarted) is offered again; work it
// says it still holds is not.
func TestAckedWorkNotHeldIsOfferedAgain(t *testing.T) {
	s := newServer(t)
	g, tok := s.agent("alice")
	peer := s.peerToken(g, "bob")
	a := s.connect(tok)
	s.send(g, peer, "kept", true)
	s.send(g, peer, "lost", true)
	kept, lost := a.nextOffer(), a.nextOffer()
	a.ackWorking(kept)
	a.ackWorking(lost)
	s.waitState(lost.taskID, a2a.TaskStateWorking)
	must(t, a.ws.Close(websocket.StatusNormalClosure, "restart"))

	b := s.connect(tok, kept.taskID)
	if o := b.nextOffer(); o.taskID != lost.taskID {
		t.Fatalf("offered %s, want the lost task %s", o.taskID, lost.taskID)
	}
	b.quiet(300 * time.Millisecond)
}

// TestDeadSocketDetected checks that an agent that stops answering without
// closing (a pulled cable) stops being a delivery target within two
// heartbeat intervals of the last time the hub heard from it, and its
// unacknowledged work moves to its next connection. It runs in a synctest
// bubble, on the in-process network: the intervals pass on the bubble's
// clock, so the bound is exact and no load on the machine stretches it.
func TestDeadSocketDetected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = 400 * time.Millisecond
		s := newBubbleServer(t, func(_ *relay.Service, h *hub.Config, _ *httpapi.Config) { h.HeartbeatInterval = interval })
		g, tok := s.agent("alice")
		peer := s.peerToken(g, "bob")

		// A cable that can be cut: the connection stays open but nothing
		// gets through, and no close frame is ever sent.
		var cable *pipenet.Cable
		a, _, err := s.dialWith(s.srv.URL, tok, func(c net.Conn) net.Conn {
			cable = pipenet.NewCable(c)
			return cable
		})
		must(t, err)
		a.call("hello", map[string]any{"holding": []string{}})
		s.send(g, peer, "x", true)
		o := a.nextOffer()
		// The agent was last heard at its hello, no later than now: the
		// offer is left unanswered. Two intervals on, exactly, it is gone.
		synctest.Wait()
		cable.Cut()
		testwait.Advance(2 * interval)
		if s.hub.Connected(g.ID) {
			t.Fatalf("the dead agent is still connected 2 heartbeat intervals (%v) after it was last heard", 2*interval)
		}
		b := s.connect(tok)
		if again := b.nextOffer(); again.taskID != o.taskID {
			t.Fatalf("redelivered %s, want %s", again.taskID, o.taskID)
		}
	})
}

func TestCancelReachesAgent(t *testing.T) {
	s := newServer(t)
	g, tok := s.agent("alice")
	peer := s.peerToken(g, "bob")
	a := s.connect(tok)
	s.send(g, peer, "long job", true)
	o := a.nextOffer()
	a.ackWorking(o)
	s.waitState(o.taskID, a2a.TaskStateWorking)
	out := s.rpc(g, peer, "CancelTask", map[string]any{"id": o.taskID})
	if path(out, "result", "status", "state") != "TASK_STATE_CANCELED" {
		t.Fatalf("cancel: %v", out)
	}
	f := a.next()
	if f.Method != connproto.MethodCancelTask || !strings.Contains(string(f.Params), o.taskID) {
		t.Fatalf("agent got %s %s, want CancelTask", f.Method, f.Params)
	}
	a.write(map[string]any{"jsonrpc": "2.0", "id": f.ID, "result": map[string]any{}})
}

func TestCancelBeforeOfferIsSilent(t *testing.T) {
	s := newServer(t)
	g, tok := s.agent("alice")
	peer := s.peerToken(g, "bob")
	id := path(s.send(g, peer, "never mind", true), "result", "task", "id").(string)
	s.rpc(g, peer, "CancelTask", map[string]any{"id": id})
	a := s.connect(tok)
	a.quiet(300 * time.Millisecond)
}

// TestAcceptsTasks checks that a paused agent is not offered new tasks,
// can still send its own, and gets what waited as soon as it resumes. It
// runs in a synctest bubble (newBubbleServer): the quiet spell and the
// second within which the work must come are the bubble's, exact however
// loaded the machine.
func TestAcceptsTasks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newBubbleServer(t)
		g, tok := s.agent("alice")
		peer := s.peerToken(g, "bob")
		a := s.connect(tok)
		patch := func(accepts bool) {
			r := s.ownerCall("PATCH", "/agents/alice", map[string]any{"accepts_tasks": accepts})
			if r != 200 {
				t.Fatalf("PATCH: %d", r)
			}
		}
		patch(false)
		id := path(s.send(g, peer, "while paused", true), "result", "task", "id").(string)
		a.quiet(300 * time.Millisecond)

		// The paused agent sends to another agent of the deployment.
		other, otherTok := s.agent("other")
		b := s.connect(otherTok)
		sent := a.call(connproto.MethodSendMessage, map[string]any{"to": s.srv.URL + "/a/other/", "token": s.peerToken(other, "alice"),
			"request": map[string]any{"message": map[string]any{"messageId": "x1", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "hi other"}}}}})
		if sent.Error != nil || !strings.Contains(string(sent.Result), "TASK_STATE_SUBMITTED") {
			t.Fatalf("own send: %+v %s", sent.Error, sent.Result)
		}
		if o := b.nextOffer(); o.text != "hi other" || o.from != "alice" {
			t.Fatalf("other got %+v", o)
		}
		if bad := a.call(connproto.MethodSendMessage, map[string]any{"to": "other", "token": "sbp_wrong",
			"request": map[string]any{"message": map[string]any{"messageId": "x2", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "x"}}}}}); bad.Error == nil {
			t.Fatal("own send with a bad token accepted")
		}

		start := time.Now()
		patch(true)
		if o := a.nextOffer(); o.taskID != id {
			t.Fatalf("offered %s, want %s", o.taskID, id)
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("resuming took %v", d)
		}
	})
}

// owner sends an owner-API request as the operator and returns the status.
func (s *server) ownerCall(method, path string, body any) int {
	s.t.Helper()
	secret, hash := switchboard.NewToken(switchboard.TokenOwner)
	must(s.t, s.db.CreateToken(context.Background(), &switchboard.Token{Hash: hash, Kind: switchboard.TokenOwner, AccountID: s.owner.ID}, true))
	return doJSON(s.t, s.client, method, s.srv.URL+path, secret, body)
}

func TestDuplicateConnectionReplacesOlder(t *testing.T) {
	s := newServer(t)
	g, tok := s.agent("alice")
	peer := s.peerToken(g, "bob")
	first := s.connect(tok)
	s.send(g, peer, "x", true)
	o := first.nextOffer() // held, not acknowledged, by the first connection
	second := s.connect(tok)
	if code := first.closed(); code != connproto.CloseReplaced {
		t.Fatalf("older connection closed with %d, want %d", code, connproto.CloseReplaced)
	}
	if again := second.nextOffer(); again.taskID != o.taskID {
		t.Fatalf("the newer connection got %s, want %s", again.taskID, o.taskID)
	}
	if !s.hub.Connected(g.ID) {
		t.Fatal("agent not connected after replacement")
	}
}

func TestRevocationAndDeletionClose(t *testing.T) {
	s := newServer(t)
	g, tok := s.agent("alice")
	a := s.connect(tok)
	if r := s.ownerCall("POST", "/agents/alice/agent-token", nil); r != 200 {
		t.Fatalf("rotate: %d", r)
	}
	if code := a.closed(); code != connproto.CloseUnauthorized {
		t.Fatalf("after rotation: close %d, want %d", code, connproto.CloseUnauthorized)
	}
	if _, resp, err := s.dial(tok); err == nil || resp.StatusCode != 401 {
		t.Fatal("the old token still connects")
	}
	b := s.connect(s.agentToken(g))
	if r := s.ownerCall("DELETE", "/agents/alice", nil); r != 200 {
		t.Fatalf("delete: %d", r)
	}
	if code := b.closed(); code != connproto.CloseGone {
		t.Fatalf("after deletion: close %d, want %d", code, connproto.CloseGone)
	}
}

// TestWorkHintsRereadNothing: a hint of queued work makes the connection
// claim the work and read nothing else; a hint that the agent changed makes
// it read its agent, session and token again. It runs in a synctest bubble
// (newBubbleServer), so that the wait below is the bubble's time.
func TestWorkHintsRereadNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newBubbleServer(t, withoutDirectOffers) // every task reaches the agent by a hint
		g, tok := s.agent("busy")
		peer := s.peerToken(g, "bob")
		a := s.connect(tok)
		before := s.tokenReads.n.Load()
		// The least time between two rereads (250 ms) is
		// let pass once since the hello's reread, so that a reread a hint of
		// work wrongly started would run at once, in the writer, before the
		// claim that offers the task, rather than be put off: each check
		// below, made once the offer has arrived, is then exact.
		time.Sleep(300 * time.Millisecond)
		for i := range 3 {
			id := path(s.send(g, peer, fmt.Sprint("task ", i), true), "result", "task", "id").(string)
			o := a.nextOffer()
			if o.taskID != id {
				t.Fatalf("offer of task %s, want %s", o.taskID, id)
			}
			if n := s.tokenReads.n.Load() - before; n != 0 {
				t.Fatalf("%d hints of work read the agent token %d times, want none", i+1, n)
			}
			a.complete(o, "done")
			s.waitState(id, a2a.TaskStateCompleted)
		}
		if n := s.tokenReads.n.Load() - before; n != 0 {
			t.Fatalf("three hints of work read the agent token %d times, want none", n)
		}
		must(t, s.bus.Notify(context.Background(), switchboard.AgentChangeSubject(g.ID)))
		testwait.For(t, "a hint that the agent changed to read the agent again", func() bool { return s.tokenReads.n.Load() != before })
	})
}

// TestHelloRequired: a connection's requests before hello are refused,
// and one that does not say hello within the timeout is closed. It runs
// in a synctest bubble (newBubbleServer): the refusal comes before the
// timeout, however loaded the machine.
func TestHelloRequired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newBubbleServer(t, func(_ *relay.Service, h *hub.Config, _ *httpapi.Config) {
			h.HelloTimeout = 200 * time.Millisecond
		})
		g, tok := s.agent("alice")
		peer := s.peerToken(g, "bob")
		s.send(g, peer, "x", true)
		a, _, err := s.dial(tok)
		must(t, err)
		if r := a.call(connproto.MethodGetTask, map[string]any{"id": "x"}); r.Error == nil || r.Error.Code != -32600 {
			t.Fatalf("before hello: %+v", r)
		}
		if code := a.closed(); code != connproto.CloseProtocol {
			t.Fatalf("no hello: close %d, want %d", code, connproto.CloseProtocol)
		}
	})
}

// TestSlowAgentDoesNotStallOthers checks that an agent that stops reading
// is dropped by the write timeout, and that another agent is served while
// the slow one's write waits: the fast agent's task completes while the
// slow agent is still connected, in less of the bubble's time than the
// write timeout that a stall behind the slow agent would take. It runs in a
// synctest bubble, on the in-process network, whose pipes hold no bytes:
// a write to the agent that reads nothing, of more than its WebSocket
// reads at once, blocks.
func TestSlowAgentDoesNotStallOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const writeTimeout = 300 * time.Millisecond
		s := newBubbleServer(t, func(_ *relay.Service, h *hub.Config, _ *httpapi.Config) {
			h.WriteTimeout = writeTimeout
			h.HeartbeatInterval = time.Minute // only the write timeout drops the slow agent
		})
		slow, slowTok := s.agent("slow")
		fast, fastTok := s.agent("fast")
		slowPeer, fastPeer := s.peerToken(slow, "p"), s.peerToken(fast, "p")
		var cable *pipenet.Cable
		a, _, err := s.dialWith(s.srv.URL, slowTok, func(c net.Conn) net.Conn {
			cable = pipenet.NewCable(c)
			return cable
		})
		must(t, err)
		a.call("hello", map[string]any{"holding": []string{}})
		synctest.Wait()
		cable.Cut() // the slow agent reads nothing more
		big := strings.Repeat("x", 64<<10)
		for range 2 {
			s.send(slow, slowPeer, big, true)
		}
		b := s.connect(fastTok)
		start := time.Now()
		res := async(func() map[string]any { return s.send(fast, fastPeer, "quick", false) })
		b.complete(b.nextOffer(), "done")
		if st := path(await(t, res), "result", "task", "status", "state"); st != "TASK_STATE_COMPLETED" {
			t.Fatalf("the fast agent's task is %v", st)
		}
		if waited := time.Since(start); waited >= writeTimeout || !s.hub.Connected(slow.ID) {
			t.Fatalf("the fast agent was served after %v, the slow agent still connected: %v; want at once, while the slow agent's write waits",
				waited, s.hub.Connected(slow.ID))
		}
		testwait.Advance(writeTimeout)
		if s.hub.Connected(slow.ID) {
			t.Fatalf("the slow agent is still connected past the write timeout (%v)", writeTimeout)
		}
	})
}

// TestReconnectDuringBurst sends a burst of tasks while the agent drops its
// connection again and again: every task completes, every task is offered,
// and offers are repeated only for what a dropped connection may not have
// answered (at most the three it took each round).
func TestReconnectDuringBurst(t *testing.T) {
	s := newServer(t)
	g, tok := s.agent("alice")
	peer := s.peerToken(g, "bob")
	const n = 40
	var wg sync.WaitGroup
	ids := make(chan string, n)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range n {
			ids <- path(s.send(g, peer, fmt.Sprintf("task %d", i), true), "result", "task", "id").(string)
		}
		close(ids)
	}()
	did := map[string]int{} // message id → times it was offered
	offers := 0
	handle := func(a *testAgent, o *offered) {
		did[o.messageID]++
		offers++
		a.complete(*o, "done")
	}
	// Connections that take a few offers and then drop, answered or not.
	for round := 0; round < 15; round++ {
		a := s.connect(tok)
		for range 3 {
			o := a.nextOfferWithin(200 * time.Millisecond)
			if o == nil {
				break
			}
			handle(a, o)
		}
		_ = a.ws.CloseNow()
	}
	wg.Wait()
	// A last connection that stays: everything still owed arrives (offers
	// the dropped connections held come back as the server notices each
	// drop, so answer until every task is done, within a bound).
	a := s.connect(tok)
	var all []string
	for id := range ids {
		all = append(all, id)
	}
	pending := all
	testwait.Within(t, patience, "every task to complete", func() error {
		if o := a.nextOfferWithin(100 * time.Millisecond); o != nil {
			handle(a, o)
			return errors.New("offers still come")
		}
		var still []string
		for _, id := range pending {
			if s.task(id).State() != a2a.TaskStateCompleted {
				still = append(still, id)
			}
		}
		if pending = still; len(pending) > 0 {
			return fmt.Errorf("%d tasks still not completed, e.g. %s (%s)", len(pending), pending[0], s.task(pending[0]).State())
		}
		return nil
	})
	if len(did) != n {
		t.Fatalf("the agent was offered %d distinct tasks, want %d", len(did), n)
	}
	if offers > n+3*15 {
		t.Fatalf("%d offers for %d tasks over 15 dropped connections of 3 offers each", offers, n)
	}
	t.Logf("%d offers for %d tasks", offers, n)
}

// nextOfferWithin returns the next offer, or nil if none comes within d.
func (a *testAgent) nextOfferWithin(d time.Duration) *offered {
	a.mu.Lock()
	stashed := len(a.stashed) > 0
	a.mu.Unlock()
	if !stashed {
		select {
		case f, ok := <-a.in:
			if !ok {
				return nil
			}
			a.mu.Lock()
			a.stashed = append(a.stashed, f)
			a.mu.Unlock()
		case <-time.After(d):
			return nil
		}
	}
	o := a.nextOffer()
	return &o
}

func TestStreamSeesAgentUpdates(t *testing.T) {
	s := newServer(t)
	g, tok := s.agent("alice")
	peer := s.peerToken(g, "bob")
	a := s.connect(tok)
	events := s.stream(g, peer, "stream it")
	if ev := <-events; !strings.Contains(ev, `"task"`) {
		t.Fatalf("first event %s", ev)
	}
	o := a.nextOffer()
	a.ackWorking(o)
	if ev := <-events; !strings.Contains(ev, "TASK_STATE_WORKING") {
		t.Fatalf("second event %s", ev)
	}
	a.update(map[string]any{"artifactUpdate": map[string]any{"taskId": o.taskID,
		"artifact": map[string]any{"artifactId": "a", "parts": []any{map[string]any{"text": "partial"}}}}})
	if ev := <-events; !strings.Contains(ev, "partial") {
		t.Fatalf("artifact event %s", ev)
	}
	a.update(status(o.taskID, "TASK_STATE_COMPLETED", "done"))
	if ev := <-events; !strings.Contains(ev, "TASK_STATE_COMPLETED") {
		t.Fatalf("final event %s", ev)
	}
	if _, open := <-events; open {
		t.Fatal("stream did not end")
	}
}

func TestShutdownTellsAgentsToReconnect(t *testing.T) {
	s := newServer(t)
	_, tok := s.agent("alice")
	a := s.connect(tok)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	must(t, s.hub.Shutdown(ctx))
	if code := a.closed(); code != connproto.CloseRestart {
		t.Fatalf("close %d, want %d", code, connproto.CloseRestart)
	}
	if _, resp, err := s.dial(tok); err == nil || resp.StatusCode != 503 {
		t.Fatal("a shut-down hub accepted a connection")
	}
}

// TestRestartKeepsQueuedWork stops the whole deployment with work queued
// and offered, starts it again on the same database, and delivers it all.
func TestRestartKeepsQueuedWork(t *testing.T) {
	path := t.TempDir() + "/sb.db"
	s := openServer(t, path)
	g, tok := s.agent("alice")
	peer := s.peerToken(g, "bob")
	a := s.connect(tok)
	s.send(g, peer, "offered", true)
	offeredTask := a.nextOffer().taskID // offered, never acknowledged
	queuedTask := pathOf(s.send(g, peer, "queued", true))
	_ = a.ws.CloseNow()
	s.close()

	s2 := openServer(t, path)
	b := s2.connect(tok)
	got := map[string]bool{}
	for range 2 {
		o := b.nextOffer()
		got[o.taskID] = true
		b.complete(o, "done")
	}
	if !got[offeredTask] || !got[queuedTask] {
		t.Fatalf("after restart got %v, want %s and %s", got, offeredTask, queuedTask)
	}
	s2.waitState(queuedTask, a2a.TaskStateCompleted)
}

func pathOf(out map[string]any) string { return path(out, "result", "task", "id").(string) }

// TestHelloAnsweredBeforeOffers checks that queued work is offered only
// after the answer to hello.
func TestHelloAnsweredBeforeOffers(t *testing.T) {
	s := newServer(t)
	g, tok := s.agent("alice")
	peer := s.peerToken(g, "bob")
	for range 5 {
		s.send(g, peer, "queued", true)
	}
	for range 5 {
		a := s.connect(tok)
		a.mu.Lock()
		early := len(a.stashed)
		a.mu.Unlock()
		if early > 0 {
			t.Fatalf("%d offers arrived before the answer to hello", early)
		}
		if r := a.call("hello", map[string]any{"holding": []string{}}); r.Error == nil {
			t.Fatal("a second hello was accepted")
		}
		_ = a.ws.CloseNow()
	}
}

func TestDisabledAccountDisconnects(t *testing.T) {
	s := newServer(t)
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "acme", Role: switchboard.RoleOwner}
	must(t, s.db.CreateAccount(context.Background(), acct))
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "acme-bot", Mode: switchboard.ModeConnector, AcceptsTasks: true}
	must(t, s.db.CreateAgent(context.Background(), g))
	a := s.connect(s.agentToken(g))
	if r := s.ownerCall("PATCH", "/accounts/"+acct.ID, map[string]any{"disabled": true}); r != 200 {
		t.Fatalf("disable: %d", r)
	}
	if code := a.closed(); code != connproto.CloseGone {
		t.Fatalf("close %d, want %d", code, connproto.CloseGone)
	}
}

// TestUnansweredOffersDoNotCloseTheWindow: an agent that finishes its tasks
// by TaskUpdate but never answers the offers themselves still gets new work
// (the finished tasks' offers leave the window at once), and so does one
// that leaves offers unanswered past their lease: the window opens for the
// work that waited, and the unanswered offers, which the sweeper puts back
// in the queue when their lease ends, are offered again. It runs in a
// synctest bubble (newBubbleServer): the leases end on the bubble's clock,
// never before the agent has had its offers.
func TestUnansweredOffersDoNotCloseTheWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newBubbleServer(t, func(ts *relay.Service, h *hub.Config, _ *httpapi.Config) {
			h.MaxInflight = 2
			ts.AckTimeout = 300 * time.Millisecond
			h.AckTimeout = ts.AckTimeout
		})
		g, tok := s.agent("forgetful")
		peer := s.peerToken(g, "bob")
		a := s.connect(tok)
		for range 2 {
			s.send(g, peer, "finish me by update", true)
			o := a.nextOffer()
			if up := a.update(status(o.taskID, "TASK_STATE_COMPLETED", "done")); up.Error != nil {
				t.Fatal(up.Error)
			}
		}
		s.send(g, peer, "third", true)
		third := a.nextOffer()
		if third.text != "third" {
			t.Fatalf("offered %q", third.text)
		}

		// Two offers left unanswered past their lease: the window opens again.
		s.send(g, peer, "fourth", true)
		if o := a.nextOffer(); o.text != "fourth" {
			t.Fatalf("offered %q", o.text)
		}
		s.send(g, peer, "fifth", true)
		// The order of the next offers depends on whether the sweeper or the
		// window's own clock sees the leases end first; what must come is all
		// three: the work that waited, and both unanswered offers again.
		seen := map[string]int{}
		for seen["fifth"] == 0 || seen["third"] == 0 || seen["fourth"] == 0 {
			o := a.nextOffer()
			switch o.text {
			case "third", "fourth", "fifth":
				seen[o.text]++
			default:
				t.Fatalf("offered %q", o.text)
			}
		}
	})
}

// TestAgentCannotGrowTaskWithoutBound: an agent appending to an artifact is
// refused (-32006) once the task would pass MaxTaskBytes; the task keeps
// working and can still be read whole over the connection.
func TestAgentCannotGrowTaskWithoutBound(t *testing.T) {
	// Each update rewrites a task of megabytes; under the race detector on
	// a loaded machine one can take seconds, during which the reader is
	// busy and reads no pong: no heartbeat within the test.
	s := newServer(t, func(_ *relay.Service, h *hub.Config, _ *httpapi.Config) {
		h.HeartbeatInterval = time.Hour
	})
	g, tok := s.agent("verbose")
	peer := s.peerToken(g, "bob")
	a := s.connect(tok)
	s.send(g, peer, "talk", true)
	o := a.nextOffer()
	a.ackWorking(o)
	// Chunks of 1 MiB: the fewest rewrites of a task of megabytes that
	// still show the bound, after the third.
	chunk := strings.Repeat("y", 1<<20)
	accepted := 0
	for i := range 10 {
		up := a.update(map[string]any{"artifactUpdate": map[string]any{"taskId": o.taskID, "append": i > 0,
			"artifact": map[string]any{"artifactId": "a", "parts": []any{map[string]any{"text": chunk}}}}})
		if up.Error != nil {
			if up.Error.Code != -32006 || !strings.Contains(up.Error.Message, "more than") {
				t.Fatalf("update %d refused with %+v", i, up.Error)
			}
			break
		}
		accepted++
	}
	if accepted != 3 {
		t.Fatalf("%d appends of 1 MiB accepted, want 3 (a fourth passes 4 MiB)", accepted)
	}
	if st := s.task(o.taskID).State(); st != a2a.TaskStateWorking {
		t.Fatalf("after the refusal the task is %s", st)
	}
	got := a.call(connproto.MethodGetTask, map[string]any{"id": o.taskID})
	if got.Error != nil || len(got.Result) < accepted*(1<<20) {
		t.Fatalf("GetTask after the refusal: %+v, %d bytes", got.Error, len(got.Result))
	}
}

// TestOwnSendLimits: an agent's own sends count against the peer token's
// rate limit, as calls over HTTP do, and are bounded in size like an HTTP
// body.
func TestOwnSendLimits(t *testing.T) {
	s := newServer(t, func(_ *relay.Service, h *hub.Config, _ *httpapi.Config) { h.MaxSendBytes = 4 << 10 })
	s.hub.Limiter = ratelimit.NewMemory(2, time.Minute)
	_, tok := s.agent("sender")
	other, _ := s.agent("target")
	token := s.peerToken(other, "sender")
	a := s.connect(tok)
	send := func(id, text string) frame {
		return a.call(connproto.MethodSendMessage, map[string]any{"to": "target", "token": token,
			"request": map[string]any{"message": map[string]any{"messageId": id, "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}}})
	}
	if f := send("big", strings.Repeat("x", 8<<10)); f.Error == nil || f.Error.Code != -32602 || !strings.Contains(f.Error.Message, "bytes") {
		t.Fatalf("an 8 KiB send past a 4 KiB bound: %+v", f.Error)
	}
	for i := range 2 {
		if f := send(fmt.Sprint("ok-", i), "hi"); f.Error != nil {
			t.Fatalf("send %d: %+v", i, f.Error)
		}
	}
	if f := send("third", "hi"); f.Error == nil || f.Error.Code != -32000 || !strings.Contains(f.Error.Message, "rate limit") {
		t.Fatalf("a third send in the minute, limit 2: %+v", f.Error)
	}
}

// TestOwnSendQuota: an agent's own send past its peer's quota of open
// tasks on the target is refused with the quota's code, -32050, as over
// HTTP.
func TestOwnSendQuota(t *testing.T) {
	s := newServer(t, func(ts *relay.Service, _ *hub.Config, _ *httpapi.Config) { ts.MaxOpenTasksPerPeer = 1 })
	_, tok := s.agent("sender")
	other, _ := s.agent("target")
	token := s.peerToken(other, "sender")
	a := s.connect(tok)
	send := func(id string) frame {
		return a.call(connproto.MethodSendMessage, map[string]any{"to": "target", "token": token,
			"request": map[string]any{"message": map[string]any{"messageId": id, "role": "ROLE_USER", "parts": []any{map[string]any{"text": "hi"}}}}})
	}
	if f := send("first"); f.Error != nil {
		t.Fatalf("the first send: %+v", f.Error)
	}
	if f := send("second"); f.Error == nil || f.Error.Code != connproto.CodeQuotaExceeded {
		t.Fatalf("a second open task past a quota of 1: %+v", f.Error)
	}
}

// TestBlockingTimeoutReturnsTaskAsItStands: a blocking send to an agent
// that works past the blocking timeout returns the task as it stands
// (working), not an error, after about the timeout. It runs in a synctest
// bubble (newBubbleServer): the time it takes is the bubble's, which a
// loaded machine does not stretch.
func TestBlockingTimeoutReturnsTaskAsItStands(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newBubbleServer(t, func(_ *relay.Service, _ *hub.Config, a *httpapi.Config) {
			a.BlockingTimeout = 300 * time.Millisecond
		})
		g, tok := s.agent("pondering")
		peer := s.peerToken(g, "bob")
		a := s.connect(tok)
		go func() {
			o := a.nextOffer()
			a.ackWorking(o) // and never finishes
		}()
		start := time.Now()
		res := s.send(g, peer, "think long", false)
		took := time.Since(start)
		if st := path(res, "result", "task", "status", "state"); st != "TASK_STATE_WORKING" {
			t.Fatalf("blocking send past the timeout: %v", res)
		}
		if took < 250*time.Millisecond || took > 3*time.Second {
			t.Fatalf("returned after %s, want about 300 ms", took)
		}
	})
}

// TestV03Blocking: over A2A 0.3, message/send with blocking true (or
// omitted) waits for a connector agent's answer; blocking false returns at
// once.
func TestV03Blocking(t *testing.T) {
	s := newServer(t)
	g, tok := s.agent("old-school")
	peer := s.peerToken(g, "bob")
	a := s.connect(tok)
	go func() {
		for range 2 { // the blocking sends; the third is left unanswered
			o := a.nextOffer()
			a.complete(o, "answer to "+o.text)
		}
	}()
	send := func(text string, blocking *bool) map[string]any {
		params := map[string]any{"message": map[string]any{"kind": "message", "messageId": switchboard.NewID(), "role": "user",
			"parts": []any{map[string]any{"kind": "text", "text": text}}}}
		if blocking != nil {
			params["configuration"] = map[string]any{"blocking": *blocking}
		}
		return s.rpc(g, peer, "message/send", params)
	}
	yes, no := true, false
	for _, tc := range []struct {
		name     string
		blocking *bool
	}{{"blocking true", &yes}, {"blocking omitted", nil}} {
		res := send(tc.name, tc.blocking)
		if st := path(res, "result", "status", "state"); st != "completed" {
			t.Fatalf("%s: %v", tc.name, res)
		}
	}
	res := send("blocking false", &no)
	if st := path(res, "result", "status", "state"); st != "submitted" && st != "working" {
		t.Fatalf("blocking false: %v", res)
	}
}

// TestManyClosingConnectionsReleaseTheirOffers closes many connections at
// once, each holding an offer it did not answer: their sessions end and
// every offer goes back to the queue (in the batches of disconnect.go).
func TestManyClosingConnectionsReleaseTheirOffers(t *testing.T) {
	s := newServer(t)
	const n = 30
	var agents []*switchboard.Agent
	var conns []*testAgent
	var tasks []string
	for i := range n {
		g, tok := s.agent(fmt.Sprint("agent", i))
		peer := s.peerToken(g, "bob")
		a := s.connect(tok)
		id := path(s.send(g, peer, "hold this", true), "result", "task", "id").(string)
		if o := a.nextOffer(); o.taskID != id {
			t.Fatalf("offered %s, want %s", o.taskID, id)
		}
		agents, conns, tasks = append(agents, g), append(conns, a), append(tasks, id)
	}
	var wg sync.WaitGroup
	for _, a := range conns {
		wg.Go(func() { _ = a.ws.CloseNow() })
	}
	wg.Wait()
	for i, g := range agents {
		testwait.ForErr(t, fmt.Sprint("agent ", i, "'s session to end"), func() error {
			_, err := s.db.FindSession(context.Background(), g.ID)
			d := s.delivery(tasks[i])
			if switchboard.ErrorCode(err) != switchboard.ENOTFOUND || d.State != switchboard.DeliveryQueued {
				return fmt.Errorf("agent %d after its connection closed: session %v, delivery %s, want no session and the delivery queued", i, err, d.State)
			}
			return nil
		})
	}
}
