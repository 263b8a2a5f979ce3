// Package clientaddr finds the address a request came from: the
// connection's peer, or, when that peer is a trusted proxy, the client the
// proxy forwarded for (X-Forwarded-For). Every per-address limit and every
// page that shows a requester's address reads it here, so that behind a
// proxy each client counts as itself and, without one, a header a client
// wrote counts for nothing. Key turns an address into what the limits
// count: an IPv6 address's /64.
package clientaddr
