// Package hub holds the WebSocket connections of connector agents: the
// agent dials out to the server (so it works behind NAT, on a laptop), says
// hello, receives the work queued for it as JSON-RPC requests and answers
// on the same socket. docs/connector-protocol.md describes every frame.
//
// The hub owns no work: every task and delivery lives in the store. A
// connection claims queued deliveries when a hint arrives on the bus (the
// agent's work subject), when the agent acknowledges an offer, and on a
// slow poll, and rereads the agent, its session and its token on a hint on
// the agent's change subject; offers it held and did not get acknowledged go back to the queue
// when it closes, to be offered on the next connection.
package hub
