package session_test

import (
	"testing"

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
