package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// A JSON-RPC batch (MCP 2025-03-26, the version of a request without an
// MCP-Protocol-Version header) carries many calls in one request. Each of
// its messages counts against the grant's rate limit, as a request of its
// own would: limit counted the first before the body was read, limitBatch
// counts the others, in order, and the messages past the limit never reach
// the SDK; a call among them is answered with the rate-limit error under
// its id, a notification is dropped (it has no answer).

// overLimit is the part of a batch past the rate limit: the answers of
// its calls and when the window that refused them ends.
type overLimit struct {
	answers []json.RawMessage
	retry   time.Duration
}

// limitBatch reads the request's body and, when it is a batch of more
// than one message, counts the messages after the first against the
// token's limit, stopping at the first refused (so that a batch costs at
// most as many counts as the limit allows, and one more). It leaves in
// r.Body the messages within the limit, as a batch, and returns the
// answers of the rest (nil when every message is within the limit). ok
// false: it answered already (a body over MaxBody is 413).
func (s *Server) limitBatch(w http.ResponseWriter, r *http.Request, key string) (over *overLimit, ok bool) {
	if s.Limiter == nil {
		return nil, true
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
			return nil, false
		}
		http.Error(w, "failed to read body", http.StatusBadRequest)
		return nil, false
	}
	setBody(r, body)
	msgs := batchOf(body)
	within := 1
	var retry time.Duration
	for within < len(msgs) {
		ok, after, err := s.Limiter.Allow(r.Context(), key)
		if err != nil {
			// The limiter cannot count (it fails open and logged it):
			// the rest goes through, without a count each.
			within = len(msgs)
			break
		}
		if !ok {
			retry = after
			break
		}
		within++
	}
	if within >= len(msgs) {
		return nil, true
	}
	cut, err := json.Marshal(msgs[:within])
	if err != nil { // not reached: the messages were read as JSON
		s.Logger.Error("mcp: cut a batch", "err", err)
		writeRPCError(w, http.StatusInternalServerError, codeInternal, "internal error", nil)
		return nil, false
	}
	setBody(r, cut)
	over = &overLimit{retry: retry}
	msg := rateLimitMessage(retryAfter(retry))
	for _, m := range msgs[within:] {
		if id, call := callID(m); call {
			over.answers = append(over.answers, rpcError(id, codeRateLimited, msg))
		}
	}
	return over, true
}

// setBody makes body the request's body.
func setBody(r *http.Request, body []byte) {
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
}

// batchOf returns the messages of a batch body, nil for a body that is no
// JSON array (one message, or malformed: the SDK answers it).
func batchOf(body []byte) []json.RawMessage {
	body = bytes.TrimLeft(body, " \t\r\n")
	if len(body) == 0 || body[0] != '[' {
		return nil
	}
	var msgs []json.RawMessage
	if json.Unmarshal(body, &msgs) != nil {
		return nil
	}
	return msgs
}

// callID returns the id of a batch's message and whether it expects an
// answer: anything but a notification (a method without an id). A
// message that does not decode is answered, with a null id.
func callID(m json.RawMessage) (json.RawMessage, bool) {
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(m, &head) != nil {
		return json.RawMessage("null"), true
	}
	if len(head.ID) == 0 || string(head.ID) == "null" {
		if head.Method != "" {
			return nil, false
		}
		return json.RawMessage("null"), true
	}
	return head.ID, true
}

// rpcError is a JSON-RPC error answer to the call id.
func rpcError(id json.RawMessage, code int, msg string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	return b
}

// serveOverLimit hands the part of a batch within the limit to next and
// answers with next's answers and those of the calls past the limit, in
// one array. An answer of next that is no array of answers (an error of
// the whole request) is passed on as it is.
func serveOverLimit(w http.ResponseWriter, r *http.Request, next http.Handler, over *overLimit) {
	rec := &recorder{header: make(http.Header)}
	next.ServeHTTP(rec, r)
	var answers []json.RawMessage
	switch {
	case rec.status == http.StatusAccepted:
		// Only notifications were within the limit.
	case rec.status == http.StatusOK && json.Unmarshal(rec.body.Bytes(), &answers) == nil:
	default:
		rec.copyTo(w)
		return
	}
	body, err := json.Marshal(append(answers, over.answers...))
	if err != nil || len(over.answers) == 0 {
		rec.copyTo(w)
		return
	}
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Header().Set("Retry-After", strconv.Itoa(retryAfter(over.retry)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// recorder keeps what a handler writes, to be sent on later.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (rec *recorder) Header() http.Header { return rec.header }

func (rec *recorder) WriteHeader(status int) {
	if rec.status == 0 {
		rec.status = status
	}
}

func (rec *recorder) Write(p []byte) (int, error) {
	rec.WriteHeader(http.StatusOK)
	return rec.body.Write(p)
}

// copyTo writes what was recorded to w.
func (rec *recorder) copyTo(w http.ResponseWriter) {
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	w.WriteHeader(rec.status)
	_, _ = w.Write(rec.body.Bytes())
}
