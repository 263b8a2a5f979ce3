package a2aedge

// The benchmarks of this package's hot paths that measure unexported steps
// of serveRPC (decoding, encoding, the token check, cards) live inside the
// package; the round trip over HTTP is in a2a_bench_test.go.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/a2arpc"
)

// benchText is the text the benchmarks send: 1 KiB, a short request
// between agents.
var benchText = strings.Repeat("The quick brown fox jumps over the lazy dog. ", 23)[:1024]

// benchVersion is one A2A version's send method, as serveRPC runs it.
type benchVersion struct {
	name    string
	method  string
	version switchboard.ProtocolVersion
	// message returns the message params in this version's shape.
	message func(id, text string) map[string]any
	// decode decodes the params of a call into the 1.0 request, as the
	// method does before it calls the task service.
	decode func(c *rpcCall) (*a2a.SendMessageRequest, error)
	// result returns the method's answer for the task it created.
	result func(t *switchboard.Task, p *a2a.SendMessageRequest) any
}

// benchVersions are the send methods of both versions. decode and result
// repeat the first and last lines of v1SendMessage and v03SendMessage,
// which between them only call the task service.
var benchVersions = []benchVersion{
	{
		name: "1.0", method: "SendMessage", version: switchboard.ProtocolV1,
		message: func(id, text string) map[string]any {
			return map[string]any{"messageId": id, "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
		},
		decode: func(c *rpcCall) (*a2a.SendMessageRequest, error) {
			var p a2a.SendMessageRequest
			if err := decodeParams(c, &p); err != nil {
				return nil, err
			}
			return &p, nil
		},
		result: func(t *switchboard.Task, p *a2a.SendMessageRequest) any {
			return a2a.StreamResponse{Event: switchboard.TrimTask(&t.A2A, sendHistoryLength(p), true)}
		},
	},
	{
		name: "0.3", method: "message/send", version: switchboard.ProtocolV03,
		message: func(id, text string) map[string]any {
			return map[string]any{"kind": "message", "messageId": id, "role": "user",
				"parts": []any{map[string]any{"kind": "text", "text": text}}}
		},
		decode: decodeSendV03,
		result: func(t *switchboard.Task, p *a2a.SendMessageRequest) any {
			return a2av0.FromV1Task(switchboard.TrimTask(&t.A2A, sendHistoryLength(p), true))
		},
	},
}

// body returns a whole JSON-RPC request of the version's send method with
// a 1 KiB text message.
func (v benchVersion) body(tb testing.TB, messageID string) []byte {
	tb.Helper()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "req-1", "method": v.method,
		"params": map[string]any{"message": v.message(messageID, benchText)}})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// decodeSend runs the steps of serveRPC from the body to the request the
// task service takes.
func (v benchVersion) decodeSend(body []byte) (*a2arpc.Request, *a2a.SendMessageRequest, error) {
	req, rerr := a2arpc.DecodeEnvelope(body)
	if rerr != nil {
		return nil, nil, switchboard.Errorf(switchboard.EINVALID, "%s", rerr.Message)
	}
	if rerr := a2arpc.CheckParams(req); rerr != nil {
		return nil, nil, switchboard.Errorf(switchboard.EINVALID, "%s", rerr.Message)
	}
	p, err := v.decode(&rpcCall{req: req, version: v.version, lastEventID: -1})
	return req, p, err
}

// BenchmarkDecodeSendMessage measures what the server does with the body
// of a send before the task service sees it: the JSON-RPC envelope, the
// params check and the params decoded into the 1.0 request (for 0.3, into
// the 0.3 types and converted).
func BenchmarkDecodeSendMessage(b *testing.B) {
	for _, v := range benchVersions {
		b.Run(v.name, func(b *testing.B) {
			body := v.body(b, switchboard.NewID())
			b.ReportAllocs()
			for b.Loop() {
				_, p, err := v.decodeSend(body)
				if err != nil {
					b.Fatal(err)
				}
				if len(p.Message.Parts) != 1 {
					b.Fatalf("decoded %d parts", len(p.Message.Parts))
				}
			}
		})
	}
}

// BenchmarkEncodeSendResult measures the answer to a send: the task just
// created (submitted, its history the 1 KiB message) trimmed, converted to
// the caller's version and written as the JSON-RPC result.
func BenchmarkEncodeSendResult(b *testing.B) {
	for _, v := range benchVersions {
		b.Run(v.name, func(b *testing.B) {
			req, p, err := v.decodeSend(v.body(b, switchboard.NewID()))
			if err != nil {
				b.Fatal(err)
			}
			t := benchCreatedTask(p, v.version)
			w := &discardResponse{header: http.Header{}, keep: true}
			a2arpc.WriteResult(w, req.ID, v.result(t, p))
			if !bytes.Contains(w.body.Bytes(), []byte(benchText)) || !bytes.Contains(w.body.Bytes(), []byte(t.A2A.ID)) {
				b.Fatalf("the answer lacks the task: %s", w.body.Bytes())
			}
			w.keep = false
			b.ReportAllocs()
			for b.Loop() {
				w.reset()
				a2arpc.WriteResult(w, req.ID, v.result(t, p))
			}
		})
	}
}

// benchCreatedTask returns the task that relay.Service.SendMessage creates
// for a new message.
func benchCreatedTask(p *a2a.SendMessageRequest, proto switchboard.ProtocolVersion) *switchboard.Task {
	now := time.Now().UTC()
	msg := *p.Message
	msg.TaskID, msg.ContextID = a2a.TaskID(switchboard.NewID()), switchboard.NewID()
	return &switchboard.Task{
		A2A: a2a.Task{
			ID: msg.TaskID, ContextID: msg.ContextID,
			Status:  a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &now},
			History: []*a2a.Message{&msg},
		},
		AgentID: switchboard.NewID(), PeerID: switchboard.NewID(), PeerLabel: "bench",
		Protocol: proto, Seq: 1, CreatedAt: now, UpdatedAt: now,
	}
}

// discardResponse is an http.ResponseWriter that throws the body away
// (unless keep is set), so that a benchmark measures the encoding and not
// a growing buffer.
type discardResponse struct {
	header http.Header
	status int
	n      int
	keep   bool
	body   bytes.Buffer
}

// Header implements http.ResponseWriter.
func (w *discardResponse) Header() http.Header { return w.header }

// WriteHeader implements http.ResponseWriter.
func (w *discardResponse) WriteHeader(status int) { w.status = status }

// Write implements http.ResponseWriter.
func (w *discardResponse) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.n += len(p)
	if w.keep {
		w.body.Write(p)
	}
	return len(p), nil
}

// reset prepares the writer for the next response.
func (w *discardResponse) reset() {
	clear(w.header)
	w.status, w.n = 0, 0
	w.body.Reset()
}
