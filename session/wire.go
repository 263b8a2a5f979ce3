package session

import (
	"encoding/json"
	"strconv"

	"github.com/switchboard-dev/switchboard/connproto"
)

// reply answers the agent's request id with result; a notification (no
// id) is not answered.
func reply(ep Endpoint, id json.RawMessage, result any) {
	if len(id) == 0 {
		return
	}
	if b, err := connproto.Encode(connproto.Result{JSONRPC: "2.0", ID: id, Result: result}); err == nil {
		ep.SessionWrite(b)
	}
}

// replyError answers the agent's request id with an error.
func replyError(ep Endpoint, id json.RawMessage, code int, message string) {
	if len(id) == 0 {
		return
	}
	if b, err := connproto.Encode(connproto.Failure{JSONRPC: "2.0", ID: id, Error: connproto.Error{Code: code, Message: message}}); err == nil {
		ep.SessionWrite(b)
	}
}

// notify sends the agent a notification.
func notify(ep Endpoint, method string, params any) bool {
	b, err := connproto.Encode(connproto.Notification{JSONRPC: "2.0", Method: method, Params: params})
	return err == nil && ep.SessionWrite(b)
}

// request sends the agent a request of the server's.
func request(ep Endpoint, id, method string, params json.RawMessage) bool {
	b, err := connproto.Encode(connproto.Request{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	return err == nil && ep.SessionWrite(b)
}

// appendFrame appends the SessionFrame notification of one frame, as the
// receiving agent reads it, to b. field is "text" or "data", raw its JSON
// as the sending agent wrote it (the server does not decode it). The
// session id is one of ours (an id: letters, digits and dashes).
func appendFrame(b []byte, sessionID string, seq uint64, field string, raw []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0","method":"`+connproto.MethodSessionFrame+`","params":{"sessionId":"`...)
	b = append(b, sessionID...)
	b = append(b, `","seq":`...)
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, `,"`...)
	b = append(b, field...)
	b = append(b, `":`...)
	b = append(b, raw...)
	return append(b, "}}"...)
}

// frameBytes is the size of appendFrame's output, for its buffer.
func frameBytes(sessionID, field string, raw []byte) int {
	return 96 + len(sessionID) + len(field) + len(raw)
}
