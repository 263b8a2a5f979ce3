// Package a2ajson writes the JSON of a2a-go's wire types (tasks, messages,
// events, send requests) in one pass, byte for byte as encoding/json writes
// them.
//
// The SDK's types marshal themselves by marshalling wrappers (a part, a
// list of parts, a stream response), and encoding/json checks and compacts
// the bytes each such method returns once more at every level above it: a
// message's text is scanned four or five times to be written once. The
// server writes every task it stores, every event, every answer and every
// offer this way, so those passes were a sixth of its time. Here each value
// is written once; values of no fixed shape (metadata, data parts, send
// configurations) are left to encoding/json, which writes them in one pass.
//
// The output is the same bytes as json.Marshal's (HTML characters escaped),
// which the tests and the fuzz target check against the SDK itself; where
// json.Marshal would fail, so does this package, with json.Marshal's error.
package a2ajson
