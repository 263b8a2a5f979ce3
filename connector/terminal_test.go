package connector_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/internal/pipenet"
	"github.com/switchboard-dev/switchboard/internal/testwait"
)

// runUntilStopped runs c and returns what Run returned, failing the test
// if it does not stop by itself within testwait.Timeout.
func runUntilStopped(t *testing.T, c *connector.Client, whileRunning func()) error {
	t.Helper()
	done := runClient(t, c)
	if whileRunning != nil {
		whileRunning()
	}
	select {
	case err := <-done:
		return err
	case <-time.After(testwait.Timeout):
		t.Fatal("Run did not stop")
		return nil
	}
}

func TestTerminalRefusalsStopRun(t *testing.T) {
	nothing := func(ctx context.Context, w *connector.Work) {}
	tests := map[string]struct {
		before, during func(s *testServer, g *testAgent)
		want           error
	}{
		"ErrUnauthorizedBadToken": {
			before: func(s *testServer, g *testAgent) { g.Token = "sba_not-a-token" },
			want:   connector.ErrUnauthorized,
		},
		"ErrNotConnectorBeforeConnecting": {
			before: func(s *testServer, g *testAgent) {
				s.owner("PATCH", "/agents/"+g.Handle, map[string]any{"mode": "inbox"}, nil)
			},
			want: connector.ErrNotConnector,
		},
		"ErrUnauthorizedTokenRotated": {
			during: func(s *testServer, g *testAgent) { s.owner("POST", "/agents/"+g.Handle+"/agent-token", nil, nil) },
			want:   connector.ErrUnauthorized,
		},
		"ErrAgentGoneModeChanged": {
			during: func(s *testServer, g *testAgent) {
				s.owner("PATCH", "/agents/"+g.Handle, map[string]any{"mode": "inbox"}, nil)
			},
			want: connector.ErrAgentGone,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			s := newTestServer(t)
			g := s.agent("doomed")
			if tt.before != nil {
				tt.before(s, g)
			}
			err := runUntilStopped(t, newClient(s, g, nothing), func() {
				if tt.during != nil {
					s.connected(g)
					tt.during(s, g)
				}
			})
			if !errors.Is(err, tt.want) {
				t.Fatalf("Run: got %v, want %v", err, tt.want)
			}
		})
	}
}

func TestDeletedAgentStopsRun(t *testing.T) {
	s := newTestServer(t)
	g := s.agent("deleted")
	err := runUntilStopped(t, newClient(s, g, func(ctx context.Context, w *connector.Work) {}), func() {
		s.connected(g)
		s.owner("DELETE", "/agents/"+g.Handle, nil, nil)
	})
	if !errors.Is(err, connector.ErrAgentGone) {
		t.Fatalf("Run: got %v, want ErrAgentGone", err)
	}
}

func TestRunStopsWithContext(t *testing.T) {
	s := newTestServer(t)
	g := s.agent("stopper")
	ctx, cancel := context.WithCancel(context.Background())
	c := newClient(s, g, func(ctx context.Context, w *connector.Work) {})
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	s.connected(g)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: got %v, want nil", err)
		}
	case <-time.After(testwait.Timeout):
		t.Fatal("Run did not return")
	}
	testwait.For(t, "the server to see the agent leave", func() bool { return !s.hub.Connected(g.ID) })
	if _, err := c.GetTask(context.Background(), "any"); !errors.Is(err, connector.ErrClosed) {
		t.Fatalf("GetTask after Run: got %v, want ErrClosed", err)
	}
}

// TestRunStopsOnDeadLink: a client whose link went dead (no close, no
// answer) stops when its context ends, bounded by its own give-up on the
// close handshake. It runs in a synctest bubble, on the in-process network
// (newBubbleServer): the time Run takes is the bubble's, which a loaded
// machine does not stretch.
func TestRunStopsOnDeadLink(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newBubbleServer(t)
		g := s.agent("stranded")
		var cable atomic.Pointer[pipenet.Cable] // the link's, once dialled
		c := newClient(s, g, echo)
		c.HTTPClient = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := s.client.Transport.(*http.Transport).DialContext(ctx, network, addr)
			if err == nil {
				cable.Store(pipenet.NewCable(conn))
				conn = cable.Load()
			}
			return conn, err
		}}}
		c.Heartbeat = time.Minute // the dead link goes unnoticed
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		s.connected(g)
		if got, want := s.send(g, "m1", "ping", true, "").answerText(), "ping"; got != want {
			t.Fatalf("answer: got %q, want %q", got, want)
		}

		// The close handshake gets no answer: Run gives up on it after 2 s
		// (or, if the library's own handshake read already began, after its
		// 5 s timeout).
		cable.Load().Cut()
		start := time.Now()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if took := time.Since(start); took > 6*time.Second {
				t.Fatalf("Run took %s to stop", took)
			}
		case <-time.After(testwait.Timeout):
			t.Fatal("Run did not stop")
		}
	})
}
