package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-dev/switchboard/a2ajson"
	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/network"
	"github.com/switchboard-dev/switchboard/publicurl"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/coder/websocket"
	"github.com/switchboard-dev/switchboard"
)

// conn is one agent's WebSocket connection. Once the request was upgraded,
// a goroutine of its own runs the read loop, and the writer (writer.go)
// owns every write (answers, offers, pings) on goroutines started as work
// comes. Whichever ends first closes the connection, which ends the other.
type conn struct {
	hub       *Hub
	ws        *websocket.Conn
	cork      *corkConn // immutable: under ws's writer (nil: writes are not corked)
	agentID   string    // immutable
	holder    string    // immutable: names this connection on the offers it holds
	tokenHash string    // immutable: the agent token it authenticated with
	base      string    // immutable: the deployment's base URL, as the upgrade request reached it (Deps.URLs)
	address   string    // immutable: the agent's address on base (publicurl.AddressAt)
	log       *slog.Logger

	agent atomic.Pointer[switchboard.Agent] // refreshed by the writer when the agent changes
	heard *connproto.LastHeard              // when the agent last sent a frame or a ping

	out   *frameQueue   // answers for the writer to send; the reader queues without blocking
	ready chan struct{} // closed once the agent said hello
	hello sync.Once
	w     writer

	mu       sync.Mutex
	inflight map[string]*switchboard.Delivery // guarded by mu: offers sent and not yet answered, by delivery id
	reserved int                              // guarded by mu: room taken for offers about to be sent (a claim running, direct.go)
	held     map[a2a.TaskID]*heldAnswer       // guarded by mu: answers held back (held.go); nil until one is
	// heldWrites counts the held answers not yet written.
	heldWrites sync.WaitGroup
	// replaced is the connection of the agent this one replaced, until
	// this one's hello has had it write its held answers.
	replaced atomic.Pointer[conn]

	ctx       context.Context // immutable: ends when the connection closes
	cancel    context.CancelFunc
	closeOnce sync.Once
	closing   atomic.Bool // set when closing starts: no more offers
	// claimOnAnswer says whether the agent's answer to an offer should make
	// the writer claim again (see offer); work queued later is announced
	// on the agent's subject, which makes it claim anyway.
	claimOnAnswer atomic.Bool
}

// newConn returns the connection of agent, which reached the deployment at
// the base URL base.
func newConn(h *Hub, ws *websocket.Conn, agent *switchboard.Agent, tokenHash, base string, heard *connproto.LastHeard) *conn {
	id := switchboard.NewID()
	c := &conn{
		hub: h, ws: ws, agentID: agent.ID, tokenHash: tokenHash, base: base, address: publicurl.AddressAt(base, agent), heard: heard,
		holder:   "conn/" + h.InstanceID + "/" + id,
		log:      h.Logger.With("agent_id", agent.ID, "conn_id", id),
		ready:    make(chan struct{}),
		inflight: make(map[string]*switchboard.Delivery),
	}
	c.out = newFrameQueue(h.cfg.QueueSize, func() { c.wake(evAnswers) })
	if h.Sessions != nil {
		c.out.sessionMax = h.Sessions.QueueBound()
	}
	c.agent.Store(agent)
	c.claimOnAnswer.Store(true)
	return c
}

// serve runs the connection until it closes, then gives back the offers it
// held. It returns after the reader and the writer have ended.
func (c *conn) serve(parent context.Context) {
	c.ctx, c.cancel = context.WithCancel(context.WithoutCancel(parent))
	defer c.cancel()
	c.startWriter()
	old, ok := c.hub.register(c)
	if !ok {
		c.close(connproto.CloseRestart, "server restarting")
		return
	}
	if old != nil {
		old.close(connproto.CloseReplaced, "replaced by a newer connection of this agent")
		c.replaced.Store(old) // its held answers are written before this one's hello
	}
	work, err := c.hub.Bus.WatchFunc(c.ctx, switchboard.AgentSubject(c.agentID), c.onWork)
	var change switchboard.Watch
	if err == nil {
		if change, err = c.hub.Bus.WatchFunc(c.ctx, switchboard.AgentChangeSubject(c.agentID), c.onChange); err != nil {
			work.Close()
		}
	}
	if err != nil {
		c.log.Error("watch agent subjects", "err", err)
		c.close(connproto.CloseRestart, "server unavailable")
		c.hub.unregister(c)
		return
	}
	c.log.Info("agent connected")

	helloTimer := time.AfterFunc(c.hub.cfg.HelloTimeout, func() {
		select {
		case <-c.ready:
		default:
			c.close(connproto.CloseProtocol, "no hello within "+c.hub.cfg.HelloTimeout.String())
		}
	})
	c.end(c.readLoop())
	<-c.w.done // the connection's context ended with the reader: the writer ends
	c.sessionsDisconnect()
	helloTimer.Stop()
	work.Close()
	change.Close()
	c.hub.unregister(c)

	c.flushHeld() // before the offers are released: these were answered
	if err := c.hub.disconnect(c.holder); err != nil {
		c.log.Error("release offers of a closed connection", "err", err)
	}
	c.hub.notifyConsoles(c)
	c.log.Info("agent disconnected")
}

// closeErr is an error that closes the connection with a code.
type closeErr struct {
	code   websocket.StatusCode
	reason string
}

func (e *closeErr) Error() string { return e.reason }

// end closes the connection after one of its loops ended with err.
func (c *conn) end(err error) {
	var ce *closeErr
	switch {
	case errors.As(err, &ce) && (ce.code == connproto.CloseHeartbeat || ce.code == connproto.CloseSlow):
		c.log.Info("dropping the connection", "reason", ce.reason)
		c.closeNow(ce.code) // the peer does not read: no handshake
	case errors.As(err, &ce):
		c.close(ce.code, ce.reason)
	case err == nil:
		c.close(connproto.CloseNormal, "")
	default:
		if c.ctx.Err() == nil && websocket.CloseStatus(err) == -1 && !errors.Is(err, context.Canceled) {
			c.log.Debug("connection ended", "err", err)
		}
		c.closeNow(0)
	}
}

// close closes the connection with a code the agent can act on. The
// connection stops being a delivery target and stops taking offers at
// once; the close handshake then ends the reader, and only then is the
// writer stopped (stopping it first could cut a write short and lose the
// close frame). A peer that does not answer the handshake is dropped when
// the WebSocket library gives up on it (5 s). It is safe to call from any
// goroutine, more than once.
func (c *conn) close(code websocket.StatusCode, reason string) {
	c.closeOnce.Do(func() {
		c.hub.met.byReason[closeReason(code)].Inc()
		c.closing.Store(true)
		c.hub.unregister(c)
		go func() {
			_ = c.ws.Close(code, reason)
			c.cancel()
		}()
	})
}

// closeNow drops the connection without a handshake. code is why, for the
// close counter: the code the agent would have been told, or 0 when the
// agent or the network ended the connection.
func (c *conn) closeNow(code websocket.StatusCode) {
	c.closeOnce.Do(func() {
		c.hub.met.byReason[closeReason(code)].Inc()
		c.closing.Store(true)
		c.hub.unregister(c)
		c.cancel()
		_ = c.ws.CloseNow()
	})
}

// send queues an answer for the writer. An agent whose queue is full is
// too slow and is disconnected.
func (c *conn) send(v any) {
	b, err := connproto.Encode(v)
	if err != nil {
		c.log.Error("encode frame", "err", err)
		return
	}
	if !c.out.push(b) {
		c.log.Warn("agent too slow: its queue is full")
		c.close(connproto.CloseSlow, "too slow: the queue of answers is full")
	}
}

func (c *conn) reply(id json.RawMessage, v any) {
	if len(id) > 0 {
		c.send(connproto.Result{JSONRPC: "2.0", ID: id, Result: v})
	}
}

func (c *conn) replyError(id json.RawMessage, code int, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	c.send(connproto.Failure{JSONRPC: "2.0", ID: id, Error: connproto.Error{Code: code, Message: msg}})
}

// readLoop reads frames until the connection fails or closes. It reads
// without a deadline: heartbeats find a dead peer, and close ends the read.
func (c *conn) readLoop() error {
	for {
		typ, r, err := c.ws.Reader(context.Background())
		if err != nil {
			return err
		}
		if typ != websocket.MessageText {
			return &closeErr{connproto.CloseProtocol, "frames must be text (JSON-RPC)"}
		}
		buf := getReadBuf()
		if _, err := buf.ReadFrom(r); err != nil {
			putReadBuf(buf)
			return err
		}
		c.heard.Now()
		data := buf.Bytes()
		if c.onSessionFrame(data) {
			putReadBuf(buf) // the sessions copied what they pass on
			continue        // a live session's frame: read in one pass, on the reader's stack (hub/session.go)
		}
		data = bytes.Clone(data)
		putReadBuf(buf)
		onFreshStack(func() { c.onFrame(data) })
	}
}

// onFrame handles one frame from the agent.
func (c *conn) onFrame(data []byte) {
	var f connproto.Frame
	if err := json.Unmarshal(data, &f); err != nil || f.JSONRPC != "2.0" {
		c.replyError(nil, connproto.CodeParse, "not a JSON-RPC 2.0 object")
		return
	}
	if f.IsResponse() {
		c.onResponse(&f)
		return
	}
	if f.Method == "" {
		c.replyError(f.ID, connproto.CodeInvalidRequest, "a request needs a method")
		return
	}
	c.onRequest(&f)
}

// onRequest handles a request or notification from the agent.
func (c *conn) onRequest(f *connproto.Frame) {
	helloDone := c.helloDone()
	switch {
	case f.Method == connproto.MethodPing:
		c.reply(f.ID, "pong")
	case f.Method == connproto.MethodHello:
		c.onHello(f)
	case !helloDone:
		c.replyError(f.ID, connproto.CodeInvalidRequest, "say hello first")
	case f.Method == connproto.MethodTaskUpdate:
		c.onTaskUpdate(f)
	case f.Method == connproto.MethodGetTask:
		c.onGetTask(f)
	case f.Method == connproto.MethodSendMessage:
		c.onSendMessage(f)
	case f.Method == connproto.MethodSendTask:
		c.onSendTask(f)
	case f.Method == connproto.MethodPublishCard:
		c.onPublishCard(f)
	case connproto.IsSessionMethod(f.Method):
		c.onSessionRequest(f)
	default:
		c.replyError(f.ID, connproto.CodeMethodNotFound, "method not found: "+switchboard.Truncate(f.Method, 64))
	}
}

func (c *conn) onHello(f *connproto.Frame) {
	select {
	case <-c.ready:
		c.replyError(f.ID, connproto.CodeInvalidRequest, "this connection already said hello")
		return
	default:
	}
	var p connproto.HelloParams
	if len(f.Params) > 0 && json.Unmarshal(f.Params, &p) != nil {
		c.replyError(f.ID, connproto.CodeInvalidParams, "hello params must be {\"holding\": [task ids]}")
		return
	}
	holding := make([]a2a.TaskID, 0, len(p.Holding))
	for _, id := range p.Holding {
		holding = append(holding, a2a.TaskID(id))
	}
	if old := c.replaced.Swap(nil); old != nil {
		old.writeHeldNow() // what it answered stays acknowledged; the rest is requeued below
	}
	agent := c.agent.Load()
	now := time.Now()
	session := &switchboard.AgentSession{AgentID: agent.ID, Holder: c.holder, InstanceID: c.hub.InstanceID,
		Client: switchboard.Truncate(p.Client, 64), ConnectedAt: now, ExpiresAt: now.Add(c.hub.sessionTTL())}
	if err := c.hub.Service.ConnectAgent(c.ctx, agent, session, holding); err != nil {
		c.log.Error("start agent session", "err", err)
		c.replyError(f.ID, connproto.CodeInternal, "internal error")
		return
	}
	var res connproto.HelloResult
	res.Agent.ID, res.Agent.Handle, res.Agent.Name, res.Agent.Address = agent.ID, agent.Handle, agent.Name, c.address
	hb := c.hub.cfg.HeartbeatInterval
	res.HeartbeatSeconds = max(1, int((hb+time.Second-1)/time.Second))
	res.HeartbeatMillis = hb.Milliseconds()
	res.AckTimeoutMillis = c.hub.cfg.AckTimeout.Milliseconds()
	res.Server = "switchboard"
	res.SessionBatches = c.hub.Sessions != nil
	c.sessionsConnect() // its frames wait until the answer is queued (frameQueue.openSessions)
	c.reply(f.ID, res)
	c.hello.Do(func() {
		close(c.ready)
		c.out.openSessions(p.SessionBatches)
		c.wake(evHello)
	})
	if p.Client != "" {
		c.log.Info("agent said hello", "client", switchboard.Truncate(p.Client, 64), "holding", len(holding))
	}
}

// onResponse handles the agent's answer to an offer.
func (c *conn) onResponse(f *connproto.Frame) {
	var id string
	if json.Unmarshal(f.ID, &id) != nil || c.onSessionAnswer(id, f) {
		return
	}
	c.mu.Lock()
	d := c.inflight[id]
	delete(c.inflight, id)
	c.mu.Unlock()
	if d == nil {
		c.log.Debug("answer to an offer this connection does not hold", "id", switchboard.Truncate(id, 64))
		return
	}
	agent := c.agent.Load()
	ctx, span := c.startAnswer(d.TraceParent, string(d.TaskID))
	defer endSpan(span)
	var err error
	switch {
	case f.Error != nil:
		err = c.hub.Service.RejectOffer(ctx, agent, d, "the agent refused the task: "+switchboard.Truncate(f.Error.Message, 500), false)
	case d.Kind == switchboard.DeliverCancel:
		err = c.hub.Service.AckOffer(ctx, agent, d, nil)
	default:
		answer, perr := parseAnswer(f.Result)
		if perr != nil {
			err = c.hub.Service.RejectOffer(ctx, agent, d, "the agent sent an invalid response: "+perr.Error(), true)
		} else if bareWorking(d, answer) {
			c.hold(d, answer)
		} else {
			err = c.hub.Service.AckOffer(ctx, agent, d, answer)
		}
	}
	if err != nil && c.ctx.Err() == nil {
		c.log.Error("record the agent's answer", "delivery_id", d.ID, "err", err)
	}
	if c.claimOnAnswer.Load() {
		c.wake(evMore) // the window opened for work it held back
	}
}

// parseAnswer decodes the result of a SendMessage the agent answered: a
// SendMessageResponse, that is {"task": …} or {"message": …}. A status or
// artifact update is taken as well.
func parseAnswer(raw json.RawMessage) (a2a.Event, error) {
	var sr a2a.StreamResponse
	if err := a2ajson.UnmarshalStreamResponse(raw, &sr); err != nil {
		return nil, errors.New("expected {\"task\": …} or {\"message\": …}")
	}
	return sr.Event, nil
}

// onTaskUpdate records an event the agent sends about one of its tasks.
func (c *conn) onTaskUpdate(f *connproto.Frame) {
	var sr a2a.StreamResponse
	if err := a2ajson.UnmarshalStreamResponse(f.Params, &sr); err != nil || sr.Event == nil {
		c.replyError(f.ID, connproto.CodeInvalidParams, "TaskUpdate params must be an A2A StreamResponse: {statusUpdate|artifactUpdate|task|message}")
		return
	}
	id := sr.Event.TaskInfo().TaskID
	if id == "" {
		c.replyError(f.ID, connproto.CodeInvalidParams, "the event names no taskId")
		return
	}
	ctx, span := c.startAnswer(f.TraceParent, string(id))
	defer endSpan(span)
	t, err := c.applyAgentEvent(ctx, id, sr.Event)
	if err != nil {
		c.replyErr(f.ID, err)
		return
	}
	if t.State().Terminal() {
		c.dropTaskOffers(string(t.ID()))
		if c.claimOnAnswer.Load() {
			c.wake(evMore) // the window opened for work it held back
		}
	}
	c.reply(f.ID, connproto.TaskUpdateResult{TaskID: string(t.ID()), State: string(t.State()), Seq: t.Seq})
}

// onGetTask answers with one of the agent's own tasks.
func (c *conn) onGetTask(f *connproto.Frame) {
	var p a2a.GetTaskRequest
	if err := json.Unmarshal(f.Params, &p); err != nil || p.ID == "" {
		c.replyError(f.ID, connproto.CodeInvalidParams, "GetTask params must be {\"id\": …}")
		return
	}
	t, err := c.hub.Service.AgentTask(c.ctx, c.agent.Load(), p.ID)
	if err != nil {
		c.replyErr(f.ID, err)
		return
	}
	c.reply(f.ID, switchboard.TrimTask(&t.A2A, p.HistoryLength, true))
}

// onSendMessage sends a message from this agent to another agent of the
// deployment, as the peer its token names. An agent may send while it does
// not accept tasks. to is a handle or an address of this deployment as the
// connection reached it (publicurl.HandleAt); a URL of another deployment
// is refused.
func (c *conn) onSendMessage(f *connproto.Frame) {
	if len(f.Params) > c.hub.cfg.MaxSendBytes {
		c.replyError(f.ID, connproto.CodeInvalidParams, fmt.Sprintf("SendMessage params are %d bytes, more than the %d allowed", len(f.Params), c.hub.cfg.MaxSendBytes))
		return
	}
	var p connproto.SendParams
	if err := json.Unmarshal(f.Params, &p); err != nil || p.Request == nil || p.To == "" || p.Token == "" {
		c.replyError(f.ID, connproto.CodeInvalidParams, "SendMessage params must be {\"to\", \"token\", \"request\"}")
		return
	}
	handle, here, ok := c.handleOf(f.ID, p.To)
	if !ok {
		return
	}
	if !here {
		c.replyError(f.ID, connproto.CodeInvalidParams, switchboard.ErrorMessage(network.Elsewhere(c.agent.Load(), p.To)))
		return
	}
	target, err := c.hub.Agents.FindAgentByHandle(c.ctx, handle)
	if err != nil || target.AccountDisabled {
		c.replyError(f.ID, connproto.CodeInvalidParams, "no agent at "+switchboard.Truncate(p.To, 200)+" on this deployment")
		return
	}
	tok, err := c.hub.Tokens.FindTokenByHash(c.ctx, switchboard.HashToken(p.Token))
	if err != nil || tok.Kind != switchboard.TokenPeer || tok.AgentID != target.ID {
		c.replyError(f.ID, connproto.CodeUnauthorized, "the token is not a valid peer token of "+target.Handle)
		return
	}
	peer := switchboard.Peer{AgentID: target.ID, ID: tok.PeerID, Label: tok.Label}
	if c.hub.Limiter != nil {
		// A limiter that cannot count lets the request through (it logs
		// and counts that itself).
		if ok, retry, _ := c.hub.Limiter.Allow(c.ctx, peer.Key()); !ok {
			c.replyError(f.ID, connproto.CodeRateLimited, fmt.Sprintf("rate limit exceeded: retry in %d s", max(1, int(math.Ceil(retry.Seconds())))))
			return
		}
	}
	t, _, err := c.hub.Service.SendMessage(c.ctx, target, peer, p.Request, switchboard.ProtocolV1)
	if err != nil {
		c.replyErr(f.ID, err)
		return
	}
	c.reply(f.ID, a2a.StreamResponse{Event: &t.A2A})
}

// replyErr answers with the JSON-RPC code of a service error.
func (c *conn) replyErr(id json.RawMessage, err error) {
	switch switchboard.ErrorCode(err) {
	case switchboard.ENOTFOUND:
		c.replyError(id, connproto.CodeTaskNotFound, switchboard.ErrorMessage(err))
	case switchboard.EINVALIDAGENTRESPONSE:
		c.replyError(id, connproto.CodeInvalidAgentResponse, switchboard.ErrorMessage(err))
	case switchboard.EINVALID, switchboard.ECONFLICT:
		c.replyError(id, connproto.CodeInvalidParams, switchboard.ErrorMessage(err))
	case switchboard.EUNSUPPORTED:
		c.replyError(id, -32004, switchboard.ErrorMessage(err))
	case switchboard.EQUOTA:
		c.replyError(id, connproto.CodeQuotaExceeded, switchboard.ErrorMessage(err))
	case switchboard.EUNAVAILABLE:
		c.log.Error("agent request refused: the store cannot write", "err", err)
		c.replyError(id, connproto.CodeUnavailable, switchboard.ErrorMessage(err))
	case switchboard.EINTERNAL:
		if c.ctx.Err() == nil {
			c.log.Error("agent request", "err", err)
		}
		c.replyError(id, connproto.CodeInternal, "internal error")
	default:
		c.replyError(id, connproto.CodeInvalidParams, switchboard.ErrorMessage(err))
	}
}
