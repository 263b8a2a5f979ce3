package session_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/session"
)

// TestOpenTakesAHandle: the sessions take a SessionOpen's to as a handle
// (the hub reads this deployment's address URLs into handles first,
// against the base its connection reached): a URL that reaches them,
// whatever handle its path holds, names no agent, and nobody is asked.
func TestOpenTakesAHandle(t *testing.T) {
	w := newWorld(t, session.Config{})
	a, b := w.connect(0, "a"), w.connect(1, "b")
	for _, to := range []string{"https://other.example/a/b", "http://x/a/b/"} {
		call(w.inst[0], a, "o1", connproto.MethodSessionOpen, connproto.SessionOpenParams{To: to})
		if f := only(t, a); f.Error == nil || f.Error.Code != connproto.CodeSessionPeerNotFound {
			t.Fatalf("open to %s: %+v", to, f)
		}
	}
	if fs := b.take(); len(fs) != 0 {
		t.Fatalf("b was asked: %+v", fs)
	}
	call(w.inst[0], a, "o2", connproto.MethodSessionOpen, connproto.SessionOpenParams{To: " B "})
	if f := only(t, b); f.Method != connproto.MethodSessionOpen {
		t.Fatalf("b got %+v, want the offer", f)
	}
}

// TestOpenToStaleConnection: the agent asked has a connection row that
// outlived its connection (its instance died without ending it, and the
// row's time ran out). The agent asking is told at once that it is not
// connected, and nothing is sent toward the dead instance to wait out the
// open timeout.
func TestOpenToStaleConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, session.Config{OpenTimeout: 10 * time.Second})
		a, b := w.connect(0, "a"), w.connect(1, "b")
		w.inst[1].Close() // dies: b's row stays
		w.agents.mu.Lock()
		w.agents.sessions[b.agent.ID].ExpiresAt = time.Now().Add(-time.Nanosecond)
		w.agents.mu.Unlock()
		call(w.inst[0], a, "o1", connproto.MethodSessionOpen, connproto.SessionOpenParams{To: "b"})
		synctest.Wait()
		if f := only(t, a); f.Error == nil || f.Error.Code != connproto.CodeSessionPeerOffline {
			t.Fatalf("A got %+v", f)
		}
		if n := w.inst[0].Counts().Ends; n != 0 {
			t.Fatalf("%d ends left on A's instance", n)
		}
	})
}
