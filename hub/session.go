package hub

import (
	"encoding/json"
	"strings"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/publicurl"
	"github.com/switchboard-dev/switchboard/session"
)

// Live sessions between connected agents (package session) run over the
// connections the hub holds: the hub hands the session methods an agent
// sends to Deps.Sessions, and the sessions write to the agent through the
// connection's writer, in a queue of their own (frameQueue.pushSession)
// that the sessions' windows bound, and Service.QueueBound besides.

var _ session.Endpoint = (*conn)(nil)

// SessionAgent implements session.Endpoint.
func (c *conn) SessionAgent() *switchboard.Agent { return c.agent.Load() }

// SessionHolder implements session.Endpoint.
func (c *conn) SessionHolder() string { return c.holder }

// SessionWrite implements session.Endpoint: the frame waits for the
// writer, unless the sessions' frames waiting already cost their bound
// (session.Service.QueueBound): the agent is then closed as too slow.
func (c *conn) SessionWrite(frame []byte) bool {
	if c.closing.Load() || c.ctx.Err() != nil {
		return false
	}
	if !c.out.pushSession(frame) {
		c.log.Warn("agent too slow: its sessions' queue is full")
		c.close(connproto.CloseSlow, "too slow: the queue of session frames is full")
		return false
	}
	return true
}

// onSessionRequest hands a session method to the sessions; a SessionOpen
// with its to read first (sessionOpenParams).
func (c *conn) onSessionRequest(f *connproto.Frame) {
	if c.hub.Sessions == nil {
		c.replyError(f.ID, connproto.CodeMethodNotFound, "live sessions are not served here: "+switchboard.Truncate(f.Method, 64))
		return
	}
	params := f.Params
	if f.Method == connproto.MethodSessionOpen {
		var ok bool
		if params, ok = c.sessionOpenParams(f); !ok {
			return
		}
	}
	c.hub.Sessions.Handle(c.ctx, c, f.Method, f.ID, params)
}

// sessionOpenParams returns the params of a SessionOpen with their to, a
// handle or an address of this deployment as the connection reached it,
// read into its handle (publicurl.HandleAt): the sessions take to as a
// handle. A URL of another deployment is answered here (ok false): no
// agent there is reached through this deployment. Params it cannot read
// go on as they are, for the sessions to answer.
func (c *conn) sessionOpenParams(f *connproto.Frame) (params json.RawMessage, ok bool) {
	var p connproto.SessionOpenParams
	if json.Unmarshal(f.Params, &p) != nil || strings.TrimSpace(p.To) == "" {
		return f.Params, true
	}
	handle, here, found := c.handleOf(f.ID, p.To)
	if !found {
		return nil, false
	}
	if !here {
		if len(f.ID) > 0 {
			c.replyError(f.ID, connproto.CodeSessionPeerNotFound,
				switchboard.ErrorMessage(publicurl.NotAddress(p.To, "live sessions are held only with agents connected here")))
		}
		return nil, false
	}
	if handle == p.To {
		return f.Params, true
	}
	// The metadata goes on byte for byte: the sessions bound its size as
	// the agent sent it.
	to, err := json.Marshal(handle)
	if err != nil {
		return f.Params, true // a string always marshals
	}
	b := append([]byte(`{"to":`), to...)
	if p.Metadata != nil {
		b = append(append(b, `,"metadata":`...), p.Metadata...)
	}
	return append(b, '}'), true
}

// onSessionFrame hands a SessionFrame notification in its usual form
// (connproto.ParseSessionFrame) to the sessions and reports true; for
// anything else it reports false, and the frame is read as any other. The
// work a frame brings is shallow (no store), so it runs on the reader's
// stack, and the frames of a session are most of what its connection
// carries.
func (c *conn) onSessionFrame(data []byte) bool {
	if c.hub.Sessions == nil || !c.helloDone() {
		return false
	}
	if connproto.IsBatch(data) {
		return c.onSessionBatch(data)
	}
	p, ok := connproto.ParseSessionFrame(data)
	if !ok {
		return false
	}
	c.hub.Sessions.Frame(c, &p)
	return true
}

// onSessionBatch hands the notifications of a session batch
// (connproto.ParseSessionBatch) to the sessions, in order, and reports
// true. A batch it cannot read in one pass it reads with encoding/json,
// each notification as if it came alone; it reports false for anything
// else, which is then read as any frame (and refused).
func (c *conn) onSessionBatch(data []byte) bool {
	notes, ok := connproto.ParseSessionBatch(data, nil)
	if !ok {
		var list []json.RawMessage
		if json.Unmarshal(data, &list) != nil || len(list) == 0 {
			return false
		}
		for _, m := range list {
			if len(m) == 0 || m[0] != '{' {
				c.replyError(nil, connproto.CodeInvalidRequest, "a batch holds JSON-RPC notifications")
				continue
			}
			if !c.onSessionFrame(m) {
				onFreshStack(func() { c.onFrame(m) })
			}
		}
		return true
	}
	for i := range notes {
		n := &notes[i]
		if n.Ack {
			c.hub.Sessions.Ack(c, &connproto.SessionAckParams{SessionID: n.Params.SessionID, Seq: n.Params.Seq})
		} else {
			c.hub.Sessions.Frame(c, &n.Params)
		}
	}
	return true
}

// onSessionAnswer hands the agent's answer to a session request of the
// server's to the sessions, and reports whether it was one.
func (c *conn) onSessionAnswer(id string, f *connproto.Frame) bool {
	return c.hub.Sessions != nil && c.hub.Sessions.Answer(c, id, f.Result, f.Error)
}

// sessionsConnect tells the sessions that the connection said hello.
func (c *conn) sessionsConnect() {
	if c.hub.Sessions != nil {
		c.hub.Sessions.Connect(c)
	}
}

// sessionsDisconnect tells the sessions that the connection ended.
func (c *conn) sessionsDisconnect() {
	if c.hub.Sessions != nil {
		c.hub.Sessions.Disconnect(c)
	}
}
