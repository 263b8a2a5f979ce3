package hub

import (
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connproto"
	"github.com/switchboard-dev/switchboard/session"
)

// Live sessions between connected agents (package session) run over the
// connections the hub holds: the hub hands the session methods an agent
// sends to Deps.Sessions, and the sessions write to the agent through the
// connection's writer, in a queue of their own (frameQueue.pushSession)
// that the sessions' windows bound.

var _ session.Endpoint = (*conn)(nil)

// SessionAgent implements session.Endpoint.
func (c *conn) SessionAgent() *switchboard.Agent { return c.agent.Load() }

// SessionHolder implements session.Endpoint.
func (c *conn) SessionHolder() string { return c.holder }

// SessionWrite implements session.Endpoint: the frame waits for the
// writer.
func (c *conn) SessionWrite(frame []byte) bool {
	if c.closing.Load() || c.ctx.Err() != nil {
		return false
	}
	c.out.pushSession(frame)
	return true
}

// onSessionRequest hands a session method to the sessions.
func (c *conn) onSessionRequest(f *connproto.Frame) {
	if c.hub.Sessions == nil {
		c.replyError(f.ID, connproto.CodeMethodNotFound, "live sessions are not served here: "+truncate(f.Method, 64))
		return
	}
	c.hub.Sessions.Handle(c.ctx, c, f.Method, f.ID, f.Params)
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
	p, ok := connproto.ParseSessionFrame(data)
	if !ok {
		return false
	}
	c.hub.Sessions.Frame(c, &p)
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
