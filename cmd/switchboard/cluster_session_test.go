package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/internal/testwait"
)

// sessionAgent runs a connector client that takes no tasks, with h for
// the sessions offered to it, until the test ends; it returns once the
// agent said hello to one of urls.
func (c *testCluster) sessionAgent(agentID, agentToken string, urls []string, h connector.SessionHandlerFunc) *connector.Client {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cl := &connector.Client{URLs: urls, Token: agentToken, Logger: slog.New(slog.DiscardHandler)}
	if h != nil {
		cl.Sessions = h
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cl.Run(ctx)
	}()
	c.t.Cleanup(func() { cancel(); <-done })
	c.saidHello(agentID, "")
	return cl
}

// saidHello waits until the agent's connection is in the store (on
// instance, when not empty).
func (c *testCluster) saidHello(agentID, instance string) {
	c.t.Helper()
	testwait.For(c.t, "the agent to say hello", func() bool {
		s, err := c.inst[0].DB.FindSession(context.Background(), agentID)
		return err == nil && s.Live(time.Now()) && (instance == "" || s.InstanceID == instance)
	})
}

// TestClusterSessionAcrossInstances: A is connected to instance 0, B to
// instance 2; frames flow both ways through NATS, in order. Instance 2
// shuts down under B: B reconnects to instance 1, the session resumes, and
// nothing is lost, repeated or reordered.
func TestClusterSessionAcrossInstances(t *testing.T) {
	c := newCluster(t, 3, nil)
	aID, aToken, _ := c.agent("chat-a", nil)
	bID, bToken, _ := c.agent("chat-b", nil)
	for _, h := range []string{"chat-a", "chat-b"} {
		if st := c.owner(0, "PUT", "/agents/"+h+"/communities/team", nil, nil); st/100 != 2 {
			t.Fatalf("join %s: HTTP %d", h, st)
		}
	}
	accepted := make(chan *connector.Session, 1)
	c.sessionAgent(bID, bToken, []string{c.bases[2], c.bases[1]}, func(_ context.Context, r *connector.SessionRequest) {
		s, err := r.Accept()
		if err != nil {
			return
		}
		accepted <- s
		for {
			f, err := s.Receive(context.Background())
			if err != nil {
				return
			}
			if err := s.Send(context.Background(), "echo: "+f.Text); err != nil {
				return
			}
		}
	})
	c.saidHello(bID, c.inst[2].Tasks.InstanceID)
	ca := c.sessionAgent(aID, aToken, []string{c.bases[0]}, nil)

	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	s, err := ca.OpenSession(ctx, "chat-b", nil)
	if err != nil {
		t.Fatal(err)
	}
	var bs *connector.Session
	select {
	case bs = <-accepted:
	case <-ctx.Done():
		t.Fatal("B did not accept")
	}
	exchange := func(from, to int) {
		t.Helper()
		go func() {
			for i := from; i < to; i++ {
				if err := s.Send(context.Background(), fmt.Sprint(i)); err != nil {
					t.Errorf("send %d: %v", i, err)
					return
				}
			}
		}()
		for i := from; i < to; i++ {
			rctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
			f, err := s.Receive(rctx)
			cancel()
			if err != nil {
				t.Fatalf("receive %d: %v", i, err)
			}
			if want := fmt.Sprint("echo: ", i); f.Text != want || f.Seq != uint64(i+1) {
				t.Fatalf("got %q (seq %d), want %q (seq %d)", f.Text, f.Seq, want, i+1)
			}
		}
	}
	exchange(0, 500)

	if err := c.inst[2].Close(); err != nil {
		t.Logf("close instance 2: %v", err)
	}
	c.saidHello(bID, c.inst[1].Tasks.InstanceID)
	exchange(500, 1000)

	_ = s.CloseWith("bye")
	rctx, cancel2 := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel2()
	for {
		_, err := bs.Receive(rctx)
		var se *connector.SessionError
		if errors.As(err, &se) {
			if se.Reason != connproto.SessionReasonClosed || se.Message != "bye" {
				t.Fatalf("B was told %+v", se)
			}
			break
		}
		if err != nil {
			t.Fatalf("B: %v", err)
		}
	}
}
