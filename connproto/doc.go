// Package connproto is the wire of the connector protocol
// (docs/connector-protocol.md): the frames, methods, close codes and error
// codes that the hub (the server side) and package connector (the client
// side) exchange over one WebSocket. Both sides use these types, so they
// cannot drift apart; a connector written in another language follows the
// document instead.
package connproto
