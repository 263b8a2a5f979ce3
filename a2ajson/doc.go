// Package a2ajson writes and reads the JSON of a2a-go's wire types (tasks,
// messages, events, send requests) in one pass.
//
// The SDK's types marshal themselves by marshalling wrappers (a part, a
// list of parts, a stream response), and encoding/json checks and compacts
// the bytes each such method returns once more at every level above it: a
// message's text is scanned four or five times to be written once. They
// unmarshal the same way, each level calling json.Unmarshal again on its
// own bytes: about ten passes to read one message. The server writes and
// reads every task, event, answer and offer, so those passes were a sixth
// of its time.
//
// Writing (encode.go) produces the same bytes as json.Marshal (HTML
// characters escaped), which the tests and a fuzz target check against the
// SDK itself; where json.Marshal would fail, so does this package, with
// json.Marshal's error. Values of no fixed shape (metadata, data parts,
// send configurations) are left to encoding/json, which writes them in one
// pass.
//
// Reading (decode.go) decodes into plain structs of the SDK's shape and
// then applies the SDK's own rules; whatever the SDK would refuse is read
// again by json.Unmarshal, so an error is always the SDK's, word for word.
// A fuzz target compares the two on arbitrary input. The plain structs are
// filled by a scanner of their own in one pass (scan.go) when the JSON is
// of the plainest form, as agents write it, and by json.Unmarshal
// otherwise; a second fuzz target holds the scanner to json.Unmarshal.
package a2ajson
