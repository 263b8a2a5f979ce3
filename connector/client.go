package connector

import (
	"context"
	"errors"
	"github.com/switchboard-dev/switchboard/connproto"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// Defaults for Client fields left at zero.
const (
	DefaultMaxConcurrent = 8
	DefaultClientName    = "switchboard-connector-go"
	// DefaultHeartbeat is the ping interval when the server's hello names
	// none.
	DefaultHeartbeat = 15 * time.Second
)

// Errors that stop Run: the server said the agent cannot connect, and
// connecting again would not change that.
var (
	// ErrUnauthorized: the agent token is not valid (mistyped, revoked or
	// rotated): HTTP 401 before the upgrade, or close code 4003.
	ErrUnauthorized = errors.New("connector: the agent token is not valid (revoked, rotated or mistyped)")
	// ErrAgentGone: the agent was deleted, its account disabled, or its
	// mode changed: HTTP 403 before the upgrade, or close code 4004.
	ErrAgentGone = errors.New("connector: the agent no longer exists, its account is disabled, or it left connector mode")
	// ErrNotConnector: the agent is not in connector mode (HTTP 409).
	ErrNotConnector = errors.New("connector: the agent is not in connector mode")
)

// ErrTaskCanceled is the cause of a work's context when the peer canceled
// its task.
var ErrTaskCanceled = errors.New("connector: the task was canceled")

// ErrClosed is returned by calls made after Run returned.
var ErrClosed = errors.New("connector: the client is not running")

// Client is the agent's end of the connector protocol. Set its fields, then
// call Run once; the fields must not change afterwards.
type Client struct {
	// URLs are the base URLs of the Switchboard deployment (http, https,
	// ws or wss); the client connects to {url}/connect and moves to the
	// next URL after each failure or lost connection.
	URLs []string
	// Token is the agent token (sba_…).
	Token string
	// Handler does the work of each message sent to the agent. nil: the
	// client takes no tasks (an agent that only holds live sessions): it
	// leaves every offer unanswered, and the work waits at the server for
	// a connection that takes it.
	Handler Handler
	// Sessions handles the live sessions other agents open with this one
	// (livesession.go). nil: they are refused.
	Sessions SessionHandler
	// Logger receives the client's logs; nil: no logs.
	Logger *slog.Logger
	// MaxConcurrent bounds the handlers running at once (default 8).
	MaxConcurrent int
	// QueueSize bounds the works acknowledged ahead of the handlers
	// (default 64). They wait in memory, in order of arrival, and the
	// server shows their tasks as submitted until a handler starts. Offers
	// beyond it are left unanswered until the queue has room again, so
	// that the work waits at the server.
	QueueSize int
	// ClientName names the agent's software in hello, for the server's
	// logs (default "switchboard-connector-go").
	ClientName string
	// Heartbeat is how often the client pings the server; a ping not
	// answered within one interval drops the connection. Zero: the
	// interval the server names in hello.
	Heartbeat time.Duration
	// HTTPClient makes the WebSocket handshake; nil: a client of its own.
	HTTPClient *http.Client
	// OnConnect, if set, is called with the agent's public address each
	// time a connection is established (hello answered), before any work
	// on it is handled. It must not block.
	OnConnect func(address string)

	initOnce sync.Once
	out      *outbox       // immutable after init
	reg      *registry     // immutable after init
	queue    *workQueue    // immutable after init
	workers  int           // immutable after init: MaxConcurrent or its default
	log      *slog.Logger  // immutable after init
	live     *liveSessions // immutable after init: the live sessions, across connections
	handlers sync.WaitGroup

	started  atomic.Bool
	runCtx   context.Context // set by Run before its first connection; works descend from it
	sessions atomic.Uint64   // numbers the connections
}

// init sets up the state shared by Run and the calls.
func (c *Client) init() {
	c.initOnce.Do(func() {
		c.out = newOutbox()
		c.live = newLiveSessions(c)
		c.reg = newRegistry()
		c.workers = c.MaxConcurrent
		if c.workers <= 0 {
			c.workers = DefaultMaxConcurrent
		}
		size := c.QueueSize
		if size <= 0 {
			size = DefaultQueueSize
		}
		c.queue = newWorkQueue(size, c.reg)
		c.log = c.Logger
		if c.log == nil {
			c.log = slog.New(slog.NewTextHandler(io.Discard, nil))
		}
	})
}

// check validates the fields Run needs.
func (c *Client) check() error {
	if len(c.URLs) == 0 {
		return errors.New("connector: no server URL")
	}
	for _, u := range c.URLs {
		if _, err := connectURL(u); err != nil {
			return err
		}
	}
	if c.Token == "" {
		return errors.New("connector: no agent token")
	}
	return nil
}

// Run connects to the server and serves the agent's work until ctx ends,
// reconnecting by itself with jittered exponential backoff (BackoffMin to
// BackoffMax). It returns nil when ctx ends, and an error wrapping
// ErrUnauthorized, ErrAgentGone or ErrNotConnector when the server says
// the agent cannot connect. Run returns after every handler it started has
// returned; calls still waiting for an answer then fail with ErrClosed.
func (c *Client) Run(ctx context.Context) error {
	if err := c.check(); err != nil {
		return err
	}
	if !c.started.CompareAndSwap(false, true) {
		return errors.New("connector: Run was called twice")
	}
	c.init()
	runCtx, cancel := context.WithCancel(ctx)
	c.runCtx = runCtx
	hc, closeIdle := c.httpClient()
	c.startWorkers()
	defer func() {
		cancel()
		c.queue.close()
		c.live.stop() // handlers waiting in Receive return
		// Calls fail before the handlers are awaited: a handler may wait
		// for an answer under a context of its own.
		c.out.close(ErrClosed)
		c.handlers.Wait()
		closeIdle()
	}()
	return c.loop(runCtx, hc)
}

// httpClient returns the client for handshakes, corking what it dials
// (cork.go), and what to call when Run ends.
func (c *Client) httpClient() (*http.Client, func()) {
	if c.HTTPClient != nil {
		return corking(c.HTTPClient)
	}
	return corking(&http.Client{})
}

// loop connects, serves, and waits before connecting again, until ctx ends
// or a connection ends for good.
func (c *Client) loop(ctx context.Context, hc *http.Client) error {
	var bo backoff
	for i := 0; ; i++ {
		url := c.URLs[i%len(c.URLs)]
		end := c.connect(ctx, hc, url)
		if ctx.Err() != nil {
			c.log.Info("connector stopped")
			return nil
		}
		if end.terminal != nil {
			c.log.Error("connector stopped: the server refused the agent", "url", url, "err", end.terminal)
			return end.terminal
		}
		if end.lasted >= StableAfter {
			bo.reset()
		}
		wait := max(bo.next(), min(end.retryAfter, BackoffMax))
		if end.code == connproto.CloseReplaced {
			wait = replacedPause()
			c.log.Warn("another connection of this agent replaced this one; is a second connector running with the same token? reconnecting after a pause",
				"url", url, "in", wait.Round(time.Second))
		} else {
			end.log(c.log, url, wait)
		}
		if !sleep(ctx, wait) {
			c.log.Info("connector stopped")
			return nil
		}
	}
}

// sleep waits for d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// sessionEnd is how one connection attempt ended.
type sessionEnd struct {
	err        error                // why: the dial error, the read error, a missed pong
	code       websocket.StatusCode // the close code the server sent, or -1
	reason     string               // the close reason the server sent
	connected  bool                 // the server answered hello
	lasted     time.Duration        // how long the session lasted after hello
	retryAfter time.Duration        // the server asked to wait this long (503)
	terminal   error                // non-nil: do not reconnect
}

// log logs why the connection ended and when the next attempt is.
func (e *sessionEnd) log(log *slog.Logger, url string, wait time.Duration) {
	in := wait.Round(10 * time.Millisecond)
	switch {
	case !e.connected:
		log.Warn("could not connect; retrying", "url", url, "err", e.err, "in", in)
	case e.code != -1:
		log.Info("disconnected by the server; reconnecting", "url", url, "code", int(e.code), "reason", e.reason, "in", in)
	default:
		log.Info("connection lost; reconnecting", "url", url, "err", e.err, "in", in)
	}
}
