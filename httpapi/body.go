package httpapi

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"time"
)

// DefaultBodyTimeout is how long a client has to send a request's body,
// from the end of its headers, unless Config.BodyTimeout says otherwise.
const DefaultBodyTimeout = 30 * time.Second

// bodyWatch bounds the reading of a request's body and tells whether it was
// read whole.
//
// A request that declares a body gets a read deadline of BodyTimeout when
// it arrives, and its answer says "Connection: close" until the body has
// been read to its end: then the deadline is lifted (an expired read
// deadline would end a blocking call or a stream that follows) and the
// connection may be kept. A handler that answers without reading the body
// (a refusal, a probe of /healthz) leaves it unread: the rest is read and
// dropped, up to a bound and within the same deadline, and the connection
// closed after the answer (see finish). net/http would drain it with no
// deadline, which let a client that never sends its body hold a
// connection for ever.
type bodyWatch struct {
	io.ReadCloser
	w     http.ResponseWriter
	rc    *http.ResponseController
	drain int64 // how much of a body left unread finish reads and drops
	wait  bool  // the client waits for 100 Continue before it sends the body
	ended bool  // the body was read to its end
}

// WatchBodies bounds the reading of the request bodies h serves as the
// server bounds its own (Config.BodyTimeout): for the handlers served
// beside it on one listener (the console's pages), whose bodies a client
// could otherwise send as slowly as it likes.
func (s *Server) WatchBodies(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := watchBody(w, r, s.Cfg.BodyTimeout, s.Cfg.MaxBody)
		h.ServeHTTP(w, r)
		body.finish()
	})
}

// watchBody starts watching r's body, if it declares one; it returns nil
// for a request without a body (nothing to read, no deadline). maxBody is
// the largest body the server accepts: finish drops at most twice that of
// a body left unread.
func watchBody(w http.ResponseWriter, r *http.Request, timeout time.Duration, maxBody int64) *bodyWatch {
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	b := &bodyWatch{ReadCloser: r.Body, w: w, rc: http.NewResponseController(w), drain: 2 * maxBody,
		wait: strings.EqualFold(r.Header.Get("Expect"), "100-continue")}
	_ = b.rc.SetReadDeadline(time.Now().Add(timeout))
	w.Header().Set("Connection", "close")
	r.Body = b
	return b
}

// Read implements io.Reader. At the end of the body it lifts the deadline
// and lets the connection be kept.
func (b *bodyWatch) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) && !b.ended {
		b.ended = true
		_ = b.rc.SetReadDeadline(time.Time{})
		if b.w.Header().Get("Connection") == "close" {
			b.w.Header().Del("Connection")
		}
	}
	return n, err
}

// finish runs once the handler has returned, before net/http ends its
// answer, which says Connection: close. A body left unread is read and
// dropped, up to b.drain bytes and within the body's deadline, so that
// the connection closes cleanly after the answer: closing it on unread
// bytes resets it, and a client still sending its body (one refused for
// its size, its credentials, its type) then fails its write and may never
// read the answer (Go's client reports the failed write when it sees that
// first). A client that never sends its body holds the connection no
// longer than one whose body is read. A client that waits for 100
// Continue has sent nothing, and the answer tells it not to: its
// connection is closed at once.
func (b *bodyWatch) finish() {
	if b == nil || b.ended {
		return
	}
	if !b.wait {
		_, _ = io.CopyN(io.Discard, b, b.drain)
	}
	if !b.ended {
		_ = b.rc.SetReadDeadline(time.Now())
	}
}

// drainBody reads what is left of a body already decoded (a JSON value's
// trailing newline), up to limit bytes, so that the connection can be
// kept. It reports whether anything but white space was left.
func drainBody(r io.Reader, limit int64) (trailing bool) {
	buf := make([]byte, 512)
	lr := io.LimitReader(r, limit)
	for {
		n, err := lr.Read(buf)
		for _, c := range buf[:n] {
			if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
				trailing = true
			}
		}
		if err != nil {
			return trailing
		}
	}
}
