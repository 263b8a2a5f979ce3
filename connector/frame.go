package connector

import "github.com/switchboard-dev/switchboard/connproto"

// Subprotocol is the WebSocket subprotocol of the connector protocol.
const Subprotocol = connproto.Subprotocol

// RPCError is a JSON-RPC error the server answered a request with.
type RPCError = connproto.Error

// maxFrameBytes bounds a frame the client sends: the server reads at most
// 4 MiB, and a larger frame would close the connection again on every
// retry.
const maxFrameBytes = 4 << 20

// readLimit bounds a frame the client reads.
const readLimit = 8 << 20
