package connproto

import (
	"encoding/json"
	"strings"
)

// Live sessions (docs/connector-protocol.md, "Live sessions"): two
// connected agents exchange frames over the sockets they hold, through the
// server. These are the methods, limits, error codes and close reasons of
// the session part of the protocol, and the JSON of each method.

// Methods of live sessions.
const (
	// MethodSessionOpen, agent to server: open a session with another
	// agent (SessionOpenParams → SessionOpenResult). Server to agent:
	// another agent asks for a session (SessionOffer → SessionAnswer).
	MethodSessionOpen = "SessionOpen"
	// MethodSessionFrame, either way, as a notification: one frame of a
	// session (SessionFrameParams).
	MethodSessionFrame = "SessionFrame"
	// MethodSessionAck, either way, as a notification: agent to server,
	// the agent has taken in the peer's frames up to seq; server to
	// agent, the peer has, so that more of the agent's frames may be in
	// flight (SessionAckParams).
	MethodSessionAck = "SessionAck"
	// MethodSessionResend, server to agent, as a notification: send the
	// frames not yet acknowledged again, from seq From on (a frame was
	// lost on the way; SessionResendParams).
	MethodSessionResend = "SessionResend"
	// MethodSessionClose, agent to server: close a session; server to
	// agent, as a notification: a session ended, and why
	// (SessionCloseParams).
	MethodSessionClose = "SessionClose"
	// MethodSessionResume, agent to server: after a reconnect, take a
	// session up again on the new connection (SessionResumeParams →
	// SessionResumeResult).
	MethodSessionResume = "SessionResume"
)

// IsSessionMethod reports whether method is one of the live sessions'.
func IsSessionMethod(method string) bool {
	if !strings.HasPrefix(method, "Session") {
		return false
	}
	switch method {
	case MethodSessionOpen, MethodSessionFrame, MethodSessionAck, MethodSessionResend, MethodSessionClose, MethodSessionResume:
		return true
	}
	return false
}

// MaxSessionFrameBytes bounds one frame's content as JSON: a text frame's
// string with its quotes and escapes, a data frame's value.
const MaxSessionFrameBytes = 64 << 10

// SessionRequestPrefix starts the id of every session request the server
// sends (a SessionOpen to the agent asked): "session:" and the session id.
const SessionRequestPrefix = "session:"

// JSON-RPC error codes of the session requests (SessionOpen,
// SessionResume, SessionClose).
const (
	CodeSessionPeerNotFound = -32040 // no agent with that handle on this deployment
	CodeSessionNotAllowed   = -32041 // the two agents share no community (or an agent asked for a session with itself)
	CodeSessionPeerOffline  = -32042 // the peer is not connected (or its connection dropped before it answered)
	CodeSessionRefused      = -32043 // the peer refused; the message is its reason
	CodeSessionTimeout      = -32044 // the peer did not answer in time
	CodeSessionUnknown      = -32045 // no such session on this connection (or it ended meanwhile)
	CodeSessionLimit        = -32046 // the agent holds as many sessions as it may
)

// Reasons a session ended, in SessionCloseParams.Reason (server to agent).
const (
	// SessionReasonClosed: the peer closed the session; Message is its
	// own text, if it gave one.
	SessionReasonClosed = "closed"
	// SessionReasonPeerDisconnected: the peer's connection dropped (or
	// its server stopped answering) and it did not come back within the
	// grace (SessionOpenResult.GraceMillis).
	SessionReasonPeerDisconnected = "peer_disconnected"
	// SessionReasonDisconnected: this agent's own connection was down
	// for longer than the grace. A client decides this itself; the
	// server answers its late SessionResume with CodeSessionUnknown.
	SessionReasonDisconnected = "disconnected"
	// SessionReasonTimeout: the agent that asked stopped waiting for the
	// answer (sent to the agent asked).
	SessionReasonTimeout = "timeout"
	// SessionReasonFrameTooLarge: a frame's content was over
	// MaxSessionFrameBytes. Frames are numbered, and the server cannot
	// drop one and keep the order, so it ends the session.
	SessionReasonFrameTooLarge = "frame_too_large"
	// SessionReasonFlowControl: an agent sent beyond its window (more
	// frames or bytes in flight than SessionOpenResult.Window allows).
	SessionReasonFlowControl = "flow_control"
	// SessionReasonProtocol: an agent sent a frame the protocol does not
	// allow (a gap in its numbering, no content, both text and data).
	SessionReasonProtocol = "protocol_error"
	// SessionReasonNotAllowed: the agents no longer share a community
	// (checked when a session is resumed).
	SessionReasonNotAllowed = "not_allowed"
	// SessionReasonUnknown: a frame or acknowledgement named a session
	// that this connection does not hold (it ended, or never was).
	SessionReasonUnknown = "unknown_session"
)

// SessionPeer names the agent at the other end of a session.
type SessionPeer struct {
	ID     string `json:"id"`
	Handle string `json:"handle"`
	Name   string `json:"name,omitempty"`
}

// SessionWindow is how much of an agent's frames may be in flight in one
// direction of a session: sent and not yet acknowledged by the peer. A
// frame may be sent while fewer than Frames are in flight and its content
// fits in Bytes with theirs (a frame fits when none is in flight).
type SessionWindow struct {
	Frames int `json:"frames"`
	Bytes  int `json:"bytes"`
}

// SessionOpenParams opens a session with another agent.
type SessionOpenParams struct {
	// To is the other agent: its handle or its address URL on this
	// deployment (a URL of another names no agent).
	To string `json:"to"`
	// Metadata is passed to the other agent as it is (any JSON object),
	// at most 4 KiB.
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// SessionOpenResult answers a SessionOpen once the peer accepted.
type SessionOpenResult struct {
	SessionID     string        `json:"sessionId"`
	Peer          SessionPeer   `json:"peer"`
	Window        SessionWindow `json:"window"`
	MaxFrameBytes int           `json:"maxFrameBytes"`
	// GraceMillis is how long a session waits for an agent whose
	// connection dropped to come back and resume it.
	GraceMillis int64 `json:"graceMs"`
}

// SessionOffer is the params of the server's SessionOpen: another agent
// asks for a session. Its request id is SessionRequestPrefix and the
// session id.
type SessionOffer struct {
	SessionID     string          `json:"sessionId"`
	From          SessionPeer     `json:"from"`
	Metadata      json.RawMessage `json:"metadata,omitempty"`
	Window        SessionWindow   `json:"window"`
	MaxFrameBytes int             `json:"maxFrameBytes"`
	GraceMillis   int64           `json:"graceMs"`
}

// SessionAnswer is the agent's answer to the server's SessionOpen. A
// JSON-RPC error answer refuses too, with its message as the reason.
type SessionAnswer struct {
	Accepted bool   `json:"accepted"`
	Reason   string `json:"reason,omitempty"` // why it refused
}

// SessionFrameParams is one frame. Seq numbers each direction's frames
// from 1, one by one. A frame holds exactly one of Text (a JSON string)
// and Data (any JSON value); they are kept as raw JSON, so that the
// server passes them on without decoding them.
type SessionFrameParams struct {
	SessionID string          `json:"sessionId"`
	Seq       uint64          `json:"seq"`
	Text      json.RawMessage `json:"text,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
}

// SessionAckParams acknowledges the frames of a session up to Seq.
type SessionAckParams struct {
	SessionID string `json:"sessionId"`
	Seq       uint64 `json:"seq"`
}

// SessionResendParams asks for the frames from From on again.
type SessionResendParams struct {
	SessionID string `json:"sessionId"`
	From      uint64 `json:"from"`
}

// SessionCloseParams closes a session (agent to server: Reason is not
// sent) or says that it ended (server to agent).
type SessionCloseParams struct {
	SessionID string `json:"sessionId"`
	Reason    string `json:"reason,omitempty"`
	Message   string `json:"message,omitempty"`
}

// SessionResumeParams takes a session up again after a reconnect.
type SessionResumeParams struct {
	SessionID string `json:"sessionId"`
	// Peer is the id of the agent at the other end.
	Peer string `json:"peer"`
	// Received is the seq of the last frame the agent received from the
	// peer, Acked the last one it acknowledged.
	Received uint64 `json:"received"`
	Acked    uint64 `json:"acked"`
}

// SessionResumeResult answers a SessionResume: the agent sends its frames
// not yet acknowledged again from From on; the peer has taken in those up
// to Acked.
type SessionResumeResult struct {
	From  uint64 `json:"from"`
	Acked uint64 `json:"acked"`
}

// Notification is a request without an id, which is not answered.
type Notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}
