package a2arpc

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/switchboard-dev/switchboard/httpapi"
)

// SSE writes one text/event-stream response. Each event carries the
// task event's sequence number as its id, so a client that reconnects with
// Last-Event-ID resumes exactly where it stopped.
type SSE struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
}

// NewSSE returns the writer of the stream answered on w.
func NewSSE(w http.ResponseWriter) *SSE {
	return &SSE{w: w, rc: http.NewResponseController(w)}
}

// Start sends the response headers once. The request body has been read;
// its read deadline is lifted, since an expired one would end the stream.
func (sw *SSE) Start() error {
	if sw.started {
		return nil
	}
	sw.started = true
	_ = sw.rc.SetReadDeadline(time.Time{})
	h := sw.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no") // let nginx pass events at once
	sw.w.WriteHeader(http.StatusOK)
	return sw.rc.Flush()
}

// Event writes one event: an id line when id >= 0, then the data line.
// JSON without indentation never holds a raw newline, so one data line is
// always enough.
func (sw *SSE) Event(id int64, data []byte) error {
	if err := sw.Start(); err != nil {
		return err
	}
	buf := make([]byte, 0, len(data)+32)
	if id >= 0 {
		buf = append(buf, "id: "...)
		buf = strconv.AppendInt(buf, id, 10)
		buf = append(buf, '\n')
	}
	buf = append(buf, "data: "...)
	buf = append(buf, data...)
	buf = append(buf, '\n', '\n')
	return sw.write(buf)
}

// write writes and flushes, giving up on a client that does not read.
func (sw *SSE) write(b []byte) error {
	_ = sw.rc.SetWriteDeadline(time.Now().Add(httpapi.WriteTimeout))
	if _, err := sw.w.Write(b); err != nil {
		return err
	}
	return sw.rc.Flush()
}

// KeepAlive writes a comment line that clients ignore, so that proxies and
// clients do not close an idle stream.
func (sw *SSE) KeepAlive() error {
	return sw.write([]byte(": keep-alive\n\n"))
}

// RPCEvent writes a JSON-RPC response carrying result as one event.
func (sw *SSE) RPCEvent(id int64, reqID json.RawMessage, result any) error {
	data, err := EncodeResult(reqID, result)
	if err != nil {
		return fmt.Errorf("encode stream event: %w", err)
	}
	return sw.Event(id, data)
}

// RPCError writes a JSON-RPC error as one event: once a stream method is
// accepted, its errors travel inside the stream, as SSE clients expect.
func (sw *SSE) RPCError(reqID json.RawMessage, e *Error) error {
	data, err := json.Marshal(Failure{JSONRPC: "2.0", ID: reqID, Error: e})
	if err != nil {
		return fmt.Errorf("encode stream error: %w", err)
	}
	return sw.Event(-1, data)
}
