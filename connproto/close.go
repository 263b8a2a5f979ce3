package connproto

import "github.com/coder/websocket"

// WebSocket close codes the server uses, and what a connector should do on
// each (docs/connector-protocol.md):
const (
	// CloseNormal: the connection ended normally. Reconnect.
	CloseNormal = websocket.StatusNormalClosure
	// CloseRestart: the server is restarting or shutting down. Reconnect
	// with backoff (another instance may take the connection).
	CloseRestart = websocket.StatusServiceRestart
	// CloseProtocol: the agent broke the protocol (no hello in time, a
	// binary frame; a text frame that is not JSON-RPC is answered with
	// -32700 instead). Reconnect with backoff after fixing.
	CloseProtocol websocket.StatusCode = 4000
	// CloseReplaced: a newer connection of the same agent took over.
	// Reconnect only after a long pause: two connectors for one agent
	// replace each other.
	CloseReplaced websocket.StatusCode = 4001
	// CloseUnauthorized: the agent token was revoked or rotated. Terminal:
	// do not reconnect with the same token.
	CloseUnauthorized websocket.StatusCode = 4003
	// CloseGone: the agent was deleted, disabled or is no longer in
	// connector mode. Terminal.
	CloseGone websocket.StatusCode = 4004
	// CloseSlow: the agent did not read fast enough and its queue filled.
	// Reconnect. (The server drops such a peer without a handshake: it
	// usually sees a read error, not this code.)
	CloseSlow websocket.StatusCode = 4008
	// CloseHeartbeat: the agent did not answer a ping in time. Reconnect.
	// (Dropped without a handshake, as CloseSlow.)
	CloseHeartbeat websocket.StatusCode = 4009
)
