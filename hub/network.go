package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/network"
)

// Network is the coordinator network as the hub uses it (network.Service
// implements it): an agent's SendTask is sent through it.
type Network interface {
	// SendTask sends the agent's work to the agent of the handle to (the
	// hub read an address URL into it: onSendTask), or to the one
	// discovery chooses in community (any of the sender's when empty)
	// offering skill, and returns the task and its agent. With wait not
	// nil, it waits for the receiver's turn to end or wait to end. No
	// agent to take it is switchboard.ENOAGENT.
	SendTask(ctx context.Context, sender *switchboard.Agent, to, community, skill string, req *a2a.SendMessageRequest, wait context.Context) (*switchboard.Task, *switchboard.Agent, error)
}

// Bounds of SendTask.
const (
	// maxSendWaits bounds the SendTask calls of one connection that wait
	// for their receiver at once.
	maxSendWaits        = 16
	defaultSendTaskWait = 60 * time.Second
	maxSendTaskWait     = 10 * time.Minute
)

// sendWaits counts each connection's SendTask calls that wait.
type sendWaits struct {
	mu     sync.Mutex
	byConn map[*conn]int // guarded by mu
}

// take counts a wait of c, unless it has maxSendWaits already.
func (w *sendWaits) take(c *conn) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byConn == nil {
		w.byConn = make(map[*conn]int)
	}
	if w.byConn[c] >= maxSendWaits {
		return false
	}
	w.byConn[c]++
	return true
}

func (w *sendWaits) release(c *conn) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byConn[c]--; w.byConn[c] <= 0 {
		delete(w.byConn, c)
	}
}

// onSendTask sends work of this agent to another agent of the network, by
// name or by discovery (connproto.SendTaskParams): a handle, or an address
// of this deployment as the connection reached it; a URL of another is
// refused (network.Elsewhere). One that waits for the receiver answers
// from a goroutine of its own, so that the connection keeps reading
// meanwhile.
func (c *conn) onSendTask(f *connproto.Frame) {
	if c.hub.Network == nil {
		c.replyError(f.ID, connproto.CodeMethodNotFound, "method not found: "+connproto.MethodSendTask)
		return
	}
	if len(f.Params) > c.hub.cfg.MaxSendBytes {
		c.replyError(f.ID, connproto.CodeInvalidParams, fmt.Sprintf("SendTask params are %d bytes, more than the %d allowed", len(f.Params), c.hub.cfg.MaxSendBytes))
		return
	}
	var p connproto.SendTaskParams
	if err := json.Unmarshal(f.Params, &p); err != nil || p.Request == nil || p.Request.Message == nil {
		c.replyError(f.ID, connproto.CodeInvalidParams, `SendTask params must be {"to"?, "community"?, "skill"?, "request": {"message": …}}`)
		return
	}
	wait := defaultSendTaskWait
	if p.TimeoutSeconds != 0 {
		if p.TimeoutSeconds < 1 || time.Duration(p.TimeoutSeconds)*time.Second > maxSendTaskWait {
			c.replyError(f.ID, connproto.CodeInvalidParams, fmt.Sprintf("timeoutSeconds must be between 1 and %d", int(maxSendTaskWait.Seconds())))
			return
		}
		wait = time.Duration(p.TimeoutSeconds) * time.Second
	}
	agent := c.agent.Load()
	// to is a handle or an address of this deployment as the connection
	// reached it; a URL of another deployment is refused, never read as
	// the agent of its handle here.
	to, here, ok := c.handleOf(f.ID, p.To)
	if !ok {
		return
	}
	if !here {
		c.replyError(f.ID, connproto.CodeInvalidParams, switchboard.ErrorMessage(network.Elsewhere(agent, p.To)))
		return
	}
	p.To = to
	if c.hub.Limiter != nil {
		key := switchboard.Peer{ID: agent.ID, Kind: switchboard.PeerAgent}.Key() // as POST /tasks counts it
		if ok, retry, _ := c.hub.Limiter.Allow(c.ctx, key); !ok {
			c.replyError(f.ID, connproto.CodeRateLimited, fmt.Sprintf("rate limit exceeded: retry in %d s", max(1, int(math.Ceil(retry.Seconds())))))
			return
		}
	}
	if !p.Wait {
		c.sendTask(f.ID, f.TraceParent, agent, &p, nil)
		return
	}
	if !c.hub.waits.take(c) {
		c.replyError(f.ID, connproto.CodeInvalidRequest, fmt.Sprintf("%d SendTask calls of this connection wait already; send without wait and follow the task", maxSendWaits))
		return
	}
	c.hub.running.Add(1) // the connection's own count holds it above zero: Shutdown waits for this too
	go func() {
		defer c.hub.running.Done()
		defer c.hub.waits.release(c)
		ctx, cancel := context.WithTimeout(c.ctx, wait)
		defer cancel()
		c.sendTask(f.ID, f.TraceParent, agent, &p, ctx)
	}()
}

// sendTask sends p and answers the request id, in a span of the trace
// traceparent names (hub/trace.go).
func (c *conn) sendTask(id json.RawMessage, traceparent string, agent *switchboard.Agent, p *connproto.SendTaskParams, wait context.Context) {
	ctx, span := c.startSend(traceparent)
	defer endSpan(span)
	t, target, err := c.hub.Network.SendTask(ctx, agent, p.To, p.Community, p.Skill, p.Request, wait)
	switch {
	case t != nil:
		c.reply(id, connproto.SendTaskResult{Task: &t.A2A, Agent: target.Handle})
	case switchboard.ErrorCode(err) == switchboard.ENOAGENT:
		if len(id) == 0 {
			id = json.RawMessage("null")
		}
		c.send(connproto.Failure{JSONRPC: "2.0", ID: id, Error: connproto.NoAgentFound(switchboard.ErrorMessage(err))})
	case switchboard.ErrorCode(err) == switchboard.EFORBIDDEN:
		c.replyError(id, connproto.CodeForbidden, switchboard.ErrorMessage(err))
	default:
		c.replyErr(id, err)
	}
}
