package connector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/switchboard-dev/switchboard/connproto"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/coder/websocket"
)

// Timing of one connection.
const (
	helloTimeout = 15 * time.Second // to say hello and get the answer
	writeTimeout = 10 * time.Second // to write one frame
	answerQueue  = 256              // answers waiting for the writer
	closeWait    = 2 * time.Second  // for the server to answer the close handshake
)

// session is one connection to the server. Four goroutines serve it: the
// read loop, the write loop (which owns every frame written), the
// heartbeat loop (Conn.Ping blocks until the pong, so it gets its own
// goroutine rather than stalling the writer for a round trip, or for a
// whole interval on a dead link), and the one that started them, which
// closes the socket when any of them ends.
type session struct {
	c        *Client
	id       uint64          // immutable: numbers the connection, for the outbox
	ws       *websocket.Conn // immutable
	cork     *corkConn       // immutable: the connection under ws, when the connector dialed it (cork.go); or nil
	heard    *connproto.LastHeard
	log      *slog.Logger    // immutable
	interval time.Duration   // immutable after hello: the ping interval
	answers  chan []byte     // the read loop's answers, for the write loop
	ctx      context.Context // immutable after serve starts: ends with the session
	// stopRead ends the read loop's current read, which closes the
	// connection: the one way to cut short a close handshake that the
	// server does not answer.
	stopRead context.CancelFunc
	// batches is set when the server reads session batches
	// (connproto.HelloResult.SessionBatches): the write loop then joins
	// the session notes waiting in a row (writeAnswer).
	batches bool // immutable after hello
	// batch and notes are the write loop's, for a batch it writes;
	// readNotes the read loop's, for a batch it reads.
	batch     []byte
	notes     [][]byte
	readNotes []connproto.SessionNote
}

// connect runs one connection: dial, hello, serve until it ends.
func (c *Client) connect(ctx context.Context, hc *http.Client, url string) sessionEnd {
	heard := new(connproto.LastHeard)
	ws, cork, refusal := c.dial(ctx, hc, url, heard)
	if refusal != nil {
		return *refusal
	}
	s := &session{c: c, id: c.sessions.Add(1), ws: ws, cork: cork, heard: heard, log: c.log.With("url", url), answers: make(chan []byte, answerQueue)}
	hello, early, err := s.sayHello(ctx)
	if err != nil {
		_ = ws.CloseNow()
		code, reason := closeOf(err)
		return sessionEnd{err: fmt.Errorf("hello: %w", err), code: code, reason: reason, terminal: closeTerminal(code, reason)}
	}
	heard.Now() // the answer to hello
	s.batches = hello.SessionBatches
	s.interval = c.Heartbeat
	if s.interval <= 0 {
		s.interval = time.Duration(hello.HeartbeatMillis) * time.Millisecond
	}
	if s.interval <= 0 { // a server that names the interval in seconds only
		s.interval = time.Duration(hello.HeartbeatSeconds) * time.Second
	}
	if s.interval <= 0 {
		s.interval = DefaultHeartbeat
	}
	s.log.Info("connected", "agent", hello.Agent.Handle, "address", hello.Agent.Address, "heartbeat", s.interval)
	if c.OnConnect != nil {
		c.OnConnect(hello.Agent.Address)
	}
	start := time.Now()
	end := s.serve(ctx, early)
	end.connected, end.lasted = true, time.Since(start)
	return end
}

// closeOf returns the close code and reason in err, or -1.
func closeOf(err error) (websocket.StatusCode, string) {
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return ce.Code, ce.Reason
	}
	return -1, ""
}

// sayHello starts the session: it tells the server which tasks the client
// still holds and waits for the answer. It returns the frames that arrived
// before the answer, for the read loop: the server may write its first
// offers ahead of the answer to hello.
func (s *session) sayHello(ctx context.Context) (*connproto.HelloResult, [][]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, helloTimeout)
	defer cancel()
	name := s.c.ClientName
	if name == "" {
		name = DefaultClientName
	}
	b, err := connproto.Encode(connproto.Request{JSONRPC: "2.0", ID: connproto.MethodHello, Method: connproto.MethodHello, Params: connproto.HelloParams{Holding: s.holding(), Client: name, SessionBatches: true}})
	if err != nil {
		return nil, nil, err
	}
	if err := s.ws.Write(ctx, websocket.MessageText, b); err != nil {
		return nil, nil, err
	}
	var early [][]byte
	for {
		typ, data, err := s.ws.Read(ctx)
		if err != nil {
			return nil, nil, err
		}
		var f connproto.Frame
		if typ != websocket.MessageText || json.Unmarshal(data, &f) != nil || !f.IsResponse() || string(f.ID) != `"`+connproto.MethodHello+`"` {
			early = append(early, data)
			continue
		}
		if f.Error != nil {
			return nil, nil, f.Error
		}
		var h connproto.HelloResult
		if err := json.Unmarshal(f.Result, &h); err != nil {
			return nil, nil, fmt.Errorf("decode the answer to hello: %w", err)
		}
		return &h, early, nil
	}
}

// holding returns the tasks the client still works on or reports about.
func (s *session) holding() []string {
	out := []string{}
	seen := make(map[a2a.TaskID]bool)
	for _, id := range append(s.c.reg.holding(), s.c.out.tasks()...) {
		if !seen[id] {
			seen[id] = true
			out = append(out, string(id))
		}
	}
	return out
}

// serve runs the session's loops until one of them ends or ctx ends, closes
// the socket, and returns how the session ended. The read loop starts with
// the frames that arrived before hello was answered.
func (s *session) serve(parent context.Context, early [][]byte) sessionEnd {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	s.ctx = ctx
	readCtx, stopRead := context.WithCancel(context.Background())
	defer stopRead()
	s.stopRead = stopRead
	var wg sync.WaitGroup
	var readErr error
	wg.Add(3)
	go func() { defer wg.Done(); readErr = s.readLoop(readCtx, early); cancel(readErr) }()
	writeDone := make(chan struct{})
	go func() { defer wg.Done(); defer close(writeDone); cancel(s.writeLoop(ctx)) }()
	go func() { defer wg.Done(); cancel(s.heartbeatLoop(ctx)) }()
	s.c.live.connected(s) // live sessions resume on this connection
	<-ctx.Done()
	if parent.Err() != nil {
		<-writeDone          // nothing else writes now
		s.c.live.stopping(s) // what waits to be written, then the sessions' closes
		s.closeGracefully()
	} else {
		_ = s.ws.CloseNow()
	}
	wg.Wait()
	s.c.live.disconnected(s)
	return s.ended(readErr, context.Cause(ctx))
}

// closeGracefully tells the server the agent is stopping (close code
// 1000), and drops the connection if the server does not answer the close
// handshake within closeWait. (If the handshake's own read has already
// begun, which happens when a server ping is being answered at that very
// moment, only the library's 5 s handshake timeout ends it.)
func (s *session) closeGracefully() {
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		_ = s.ws.Close(websocket.StatusNormalClosure, "agent stopping")
	}()
	select {
	case <-closed:
	case <-time.After(closeWait):
		s.stopRead()
		<-closed
	}
}

// ended describes how the session ended: the close code comes from the
// read loop, which receives the server's close frame.
func (s *session) ended(readErr, cause error) sessionEnd {
	code, reason := closeOf(readErr)
	end := sessionEnd{err: readErr, code: code, reason: reason, terminal: closeTerminal(code, reason)}
	if errors.Is(cause, errNoPong) {
		end.err = cause
	}
	return end
}

// readLoop handles the early frames, then reads frames until the
// connection closes or ctx ends. It reads without a deadline: the
// heartbeat finds a dead link, and closing ends the read.
func (s *session) readLoop(ctx context.Context, early [][]byte) error {
	for _, data := range early {
		s.onFrame(data)
	}
	var buf bytes.Buffer // each message is read into it, and handled before the next: onFrame keeps none of it
	for {
		typ, r, err := s.ws.Reader(ctx)
		if err != nil {
			return err
		}
		buf.Reset()
		if _, err := buf.ReadFrom(r); err != nil {
			return err
		}
		s.heard.Now()
		if typ != websocket.MessageText {
			s.log.Debug("ignoring a binary frame")
			continue
		}
		s.onFrame(buf.Bytes())
		if buf.Cap() > maxKeptReadBuf {
			buf = bytes.Buffer{} // a rare large message: not kept for the connection's life
		}
	}
}

// maxKeptReadBuf bounds the buffer a connection keeps to read messages in.
const maxKeptReadBuf = 128 << 10

// writeLoop owns every frame the session writes: the answers to the
// server's requests, then the calls not yet written on this connection
// (which, at the start, are the ones a lost connection left unanswered).
// Answers go first, so the acknowledgement of a task reaches the server
// before any report about it.
func (s *session) writeLoop(ctx context.Context) error {
	for {
		if ctx.Err() != nil {
			return nil // what waits is the stopping client's to write (liveSessions.stopping)
		}
		if err := s.flush(ctx); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case b := <-s.answers:
			if err := s.corked(func() error { return s.writeAnswer(ctx, b) }); err != nil {
				return err
			}
		case <-s.c.out.wake:
		}
	}
}

// corked runs write with the connection corked (cork.go): what it writes
// leaves in one system call when it returns.
func (s *session) corked(write func() error) error {
	s.cork.cork(time.Now().Add(writeTimeout))
	err := write()
	if uerr := s.cork.uncork(); err == nil {
		err = uerr
	}
	return err
}

// flush writes the waiting answers, then the unsent calls, corked.
func (s *session) flush(ctx context.Context) error {
	return s.corked(func() error { return s.flushCorked(ctx) })
}

// flushCorked is flush's work.
func (s *session) flushCorked(ctx context.Context) error {
	for drained := false; !drained; {
		select {
		case b := <-s.answers:
			if err := s.writeAnswer(ctx, b); err != nil {
				return err
			}
		default:
			drained = true
		}
	}
	for _, cl := range s.c.out.unsent(s.id) {
		if err := s.write(ctx, cl.frame); err != nil {
			return err
		}
	}
	return nil
}

// writeAnswer writes b, taken from s.answers. When b is a session note
// (connproto.IsSessionNote) and the server reads batches, the session
// notes waiting right after it go with it in one batch, as many as fit in
// connproto.MaxSessionBatchBytes; a frame taken that cannot join is
// written after the batch.
func (s *session) writeAnswer(ctx context.Context, b []byte) error {
	if !s.batches || !connproto.IsSessionNote(b) {
		return s.write(ctx, b)
	}
	notes, size := append(s.notes[:0], b), len(b)+2
	var next []byte
	for next == nil {
		select {
		case n := <-s.answers:
			if connproto.IsSessionNote(n) && size+len(n)+1 <= connproto.MaxSessionBatchBytes {
				notes, size = append(notes, n), size+len(n)+1
			} else {
				next = n
			}
			continue
		default:
		}
		break
	}
	out := b
	if len(notes) > 1 {
		s.batch = connproto.AppendSessionBatch(s.batch[:0], notes)
		out = s.batch
	}
	clear(notes)
	s.notes = notes[:0]
	if err := s.write(ctx, out); err != nil {
		return err
	}
	if next != nil {
		return s.writeAnswer(ctx, next)
	}
	return nil
}

// write writes one frame within writeTimeout. A frame taken from a queue
// is written whole even when ctx ends meanwhile: a closing socket ends the
// write, a stopping client does not lose it. Corked, the socket's deadline
// bounds the write (corkConn.cork), and the library's context needs none,
// which spares a timer and a wake-up registered per frame.
func (s *session) write(ctx context.Context, b []byte) error {
	if s.cork == nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
		defer cancel()
		return s.ws.Write(ctx, websocket.MessageText, b)
	}
	s.cork.cork(time.Now().Add(writeTimeout)) // a message longer than the library's buffer leaves in one write
	err := s.ws.Write(context.Background(), websocket.MessageText, b)
	if uerr := s.cork.uncork(); err == nil {
		err = uerr
	}
	return err
}

// heartbeatLoop pings the server when it has not been heard from for
// connproto.ConnectorPingAfter intervals (the server's own pings, every
// interval, keep an idle connection from needing ours), and ends the session
// when a ping is not answered within one interval: a half-open TCP
// connection would otherwise look alive forever.
func (s *session) heartbeatLoop(ctx context.Context) error {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	quiet := time.Duration(float64(s.interval) * connproto.ConnectorPingAfter)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if s.heard.Within(quiet) {
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, s.interval)
		err := s.ws.Ping(pctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			s.log.Info("the server did not answer a ping", "err", err)
			return errNoPong
		}
	}
}
