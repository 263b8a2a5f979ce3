// Package pairing lets a peer obtain its own peer token of an agent through
// the OAuth 2.0 Device Authorization Grant (RFC 8628): the peer asks at the
// agent's address, a human (or, in agent mode, the agent) approves the
// code it shows, and the peer's poll redeems an ordinary peer token,
// issued by package peers under a label (docs/pairing.md).
//
// Every request lives in the store (switchboard.PairingStore), so any
// instance answers any poll.
package pairing
