package front

import (
	"context"
	"errors"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// TestForwarderKeepsAClientInUse: the client of a gRPC upstream is one
// connection shared by every job; a job's failure (reset), and the front
// changing (Close), must not close it under the jobs still using it, and
// a client made after Close (a job's late cancel) must not outlive its
// use. A closed connection fails its calls with codes.Canceled.
func TestForwarderKeepsAClientInUse(t *testing.T) {
	u := newOneBinding(t, a2a.TransportProtocolGRPC, true, false)
	fw := forwarderTo(t, u.reflector, switchboard.FrontCredentials{})
	ctx := context.Background()
	usable := func(up *upstream) bool {
		t.Helper()
		_, err := up.client.GetTask(ctx, &a2a.GetTaskRequest{ID: "none"})
		if err != nil && !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Logf("GetTask: %v", err)
			return false
		}
		return true
	}

	a, err := fw.connect(ctx) // a job working
	if err != nil {
		t.Fatal(err)
	}
	b, err := fw.connect(ctx) // another, which fails
	if err != nil || b != a {
		t.Fatalf("connect: %v, %p, want the shared %p", err, b, a)
	}
	fw.reset(b)
	fw.release(b)
	if !usable(a) {
		t.Fatal("a job's failure closed the connection under another job")
	}
	c, err := fw.connect(ctx) // the next job reads the card again
	if err != nil || c == a {
		t.Fatalf("connect after a reset: %v, the same client %v", err, c == a)
	}
	fw.release(a)
	if usable(a) {
		t.Fatal("the client of a reset upstream was not closed once its last job ended")
	}

	fw.Close() // the front changed while c's job runs
	if !usable(c) {
		t.Fatal("Close closed the connection under a job")
	}
	late, err := fw.connect(ctx) // that job's cancel, after Close
	if err != nil {
		t.Fatal(err)
	}
	fw.release(c)
	if usable(c) {
		t.Fatal("the client was not closed once the last job ended after Close")
	}
	if !usable(late) {
		t.Fatal("a client made after Close was closed before its use ended")
	}
	fw.release(late)
	if usable(late) {
		t.Fatal("a client made after Close outlived its use: its connection leaks")
	}
}
