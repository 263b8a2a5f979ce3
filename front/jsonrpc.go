package front

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/errordetails"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/a2ajson"
)

// The SDK's JSON-RPC transport writes a send request and reads its answer
// through the SDK types' own JSON methods, which scan a message's text a
// dozen times; at a busy front that was a fifth of the server's time.
// jsonrpcTransport makes the calls every forwarded message makes,
// SendMessage or SendStreamingMessage and GetTask, with package a2ajson,
// which writes and reads the same JSON in one pass, and leaves every other
// call to the SDK's.
// What it sends and what it returns are the SDK transport's: the same
// request and headers, the same results, and errors of the same A2A error
// and message, but without their details (a fuzz target compares the two
// transports on arbitrary answers); and where the SDK bounds a stream's
// lines, it bounds its events, at DefaultMaxBody (sseData).

// jsonrpcTransport is the transport of an upstream's JSON-RPC 1.0
// interface.
type jsonrpcTransport struct {
	a2aclient.Transport // the SDK's, for the other calls
	url                 string
	client              *http.Client
}

// withJSONRPCTransport is the client option that speaks JSON-RPC 1.0
// through jsonrpcTransport, with client.
func withJSONRPCTransport(client *http.Client) a2aclient.FactoryOption {
	return a2aclient.WithTransport(a2a.TransportProtocolJSONRPC,
		a2aclient.TransportFactoryFn(func(_ context.Context, _ *a2a.AgentCard, iface *a2a.AgentInterface) (a2aclient.Transport, error) {
			return newJSONRPCTransport(iface.URL, client), nil
		}))
}

func newJSONRPCTransport(url string, client *http.Client) *jsonrpcTransport {
	return &jsonrpcTransport{Transport: a2aclient.NewJSONRPCTransport(url, client), url: url, client: client}
}

// SendMessage implements a2aclient.Transport.
func (t *jsonrpcTransport) SendMessage(ctx context.Context, params a2aclient.ServiceParams, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	body, err := rpcRequest("SendMessage", func(dst []byte) ([]byte, error) { return a2ajson.AppendSendMessageRequest(dst, req) })
	if err != nil {
		return nil, fmt.Errorf("failed to create HTTP request: failed to marshal request: %w", err)
	}
	resp, err := t.post(ctx, params, body, "")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	buf := answerBufs.Get().(*bytes.Buffer)
	defer putAnswerBuf(buf)
	buf.Reset()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return nil, fmt.Errorf("failed to decode response: %w", err)
	}
	var sr a2a.StreamResponse
	rpcErr, ok := a2ajson.UnmarshalStreamAnswer(buf.Bytes(), &sr)
	if ok && rpcErr != nil {
		var e rpcError
		if json.Unmarshal(rpcErr, &e) == nil {
			return nil, e.err()
		}
	}
	if !ok || rpcErr != nil { // what one pass cannot decide, the way the SDK's shape is read
		result, err := decodeAnswer(bytes.NewReader(buf.Bytes()))
		if err != nil {
			return nil, err
		}
		if err := a2ajson.UnmarshalStreamResponse(result, &sr); err != nil {
			return nil, fmt.Errorf("result violates A2A spec - could not determine type: %w; data: %s", err, string(result))
		}
	}
	switch e := sr.Event.(type) {
	case *a2a.Task:
		return e, nil
	case *a2a.Message:
		return e, nil
	default:
		var raw []byte
		if result, err := decodeAnswer(bytes.NewReader(buf.Bytes())); err == nil {
			raw = result
		}
		return nil, fmt.Errorf("result violates A2A spec - expected Task or Message, got %T: %s", sr.Event, string(raw))
	}
}

// answerBufs holds the buffers answers are read into.
var answerBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putAnswerBuf gives buf back to answerBufs unless an answer made it
// large.
func putAnswerBuf(buf *bytes.Buffer) {
	if buf.Cap() <= 64<<10 {
		answerBufs.Put(buf)
	}
}

// GetTask implements a2aclient.Transport.
func (t *jsonrpcTransport) GetTask(ctx context.Context, params a2aclient.ServiceParams, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	body, err := rpcRequest("GetTask", func(dst []byte) ([]byte, error) { return a2ajson.Append(dst, req) })
	if err != nil {
		return nil, fmt.Errorf("failed to create HTTP request: failed to marshal request: %w", err)
	}
	result, err := t.call(ctx, params, body)
	if err != nil {
		return nil, err
	}
	var task a2a.Task
	if err := a2ajson.UnmarshalTask(result, &task); err != nil {
		return nil, fmt.Errorf("failed to unmarshal task: %w", err)
	}
	return &task, nil
}

// rpcAnswer is a JSON-RPC answer, of the shape the SDK reads (so that
// what it refuses is refused here too); its result is decoded by the
// caller.
type rpcAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      string          `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcError       `json:"error"`
}

// rpcError is a JSON-RPC error object. Its data (the error's details) is
// read but not kept: a front tells its peers only that the upstream
// failed.
type rpcError struct {
	Code    int                   `json:"code"`
	Message string                `json:"message"`
	Data    []*errordetails.Typed `json:"data"`
}

// SendStreamingMessage implements a2aclient.Transport.
func (t *jsonrpcTransport) SendStreamingMessage(ctx context.Context, params a2aclient.ServiceParams, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		body, err := rpcRequest("SendStreamingMessage", func(dst []byte) ([]byte, error) { return a2ajson.AppendSendMessageRequest(dst, req) })
		if err != nil {
			yield(nil, fmt.Errorf("failed to create HTTP request: failed to marshal request: %w", err))
			return
		}
		resp, err := t.post(ctx, params, body, "text/event-stream")
		if err != nil {
			yield(nil, err)
			return
		}
		defer resp.Body.Close()
		for data, err := range sseData(resp.Body, DefaultMaxBody) {
			if err != nil {
				yield(nil, err)
				return
			}
			var a rpcAnswer
			if err := json.Unmarshal(data, &a); err != nil {
				yield(nil, fmt.Errorf("failed to parse SSE data: %w", err))
				return
			}
			if a.Error != nil {
				yield(nil, a.Error.err())
				return
			}
			var sr a2a.StreamResponse
			if err := a2ajson.UnmarshalStreamResponse(a.Result, &sr); err != nil {
				yield(nil, fmt.Errorf("result violates A2A spec - could not determine type: %w", err))
				return
			}
			if !yield(sr.Event, nil) {
				return
			}
		}
	}
}

// call posts the JSON-RPC request body and returns the answer's result.
func (t *jsonrpcTransport) call(ctx context.Context, params a2aclient.ServiceParams, body []byte) (json.RawMessage, error) {
	resp, err := t.post(ctx, params, body, "")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return decodeAnswer(resp.Body)
}

// rpcRequest returns the JSON-RPC request of method with the params
// appendParams appends, written in one buffer.
func rpcRequest(method string, appendParams func(dst []byte) ([]byte, error)) ([]byte, error) {
	body := make([]byte, 0, 2<<10)
	body = append(body, `{"jsonrpc":"2.0","method":"`...)
	body = append(body, method...)
	body = append(body, `","params":`...)
	body, err := appendParams(body)
	if err != nil {
		return nil, err
	}
	body = append(body, `,"id":"`...)
	body = append(body, switchboard.NewID()...)
	return append(body, `"}`...), nil
}

// decodeAnswer reads a JSON-RPC answer from r, as the SDK reads it, and
// returns its result, or the A2A error it holds.
func decodeAnswer(r io.Reader) (json.RawMessage, error) {
	var a rpcAnswer
	if err := json.NewDecoder(r).Decode(&a); err != nil {
		return nil, fmt.Errorf("failed to decode response: %w", err)
	}
	if a.Error != nil {
		return nil, a.Error.err()
	}
	return a.Result, nil
}

// post posts the JSON-RPC request body, asking for accept if set, and
// returns the answer if its status is 200 OK; the caller closes its body.
func (t *jsonrpcTransport) post(ctx context.Context, params a2aclient.ServiceParams, body []byte, accept string) (*http.Response, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("failed to create HTTP request: %w", err)
	}
	r.Header.Set("Content-Type", "application/json")
	if accept != "" {
		r.Header.Set("Accept", accept)
	}
	for k, vs := range params {
		for _, v := range vs {
			r.Header.Add(k, v)
		}
	}
	resp, err := t.client.Do(r)
	if err != nil {
		return nil, fmt.Errorf("failed to send HTTP request: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		// A short body is read out, so that the connection is kept.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		resp.Body.Close()
		return nil, fmt.Errorf("unexpected HTTP status: %s", resp.Status)
	}
	return resp, nil
}

// rpcErrors are the A2A errors of the JSON-RPC error codes.
var rpcErrors = map[int]error{
	-32700: a2a.ErrParseError,
	-32600: a2a.ErrInvalidRequest,
	-32601: a2a.ErrMethodNotFound,
	-32602: a2a.ErrInvalidParams,
	-32603: a2a.ErrInternalError,
	-32000: a2a.ErrServerError,
	-32001: a2a.ErrTaskNotFound,
	-32002: a2a.ErrTaskNotCancelable,
	-32003: a2a.ErrPushNotificationNotSupported,
	-32004: a2a.ErrUnsupportedOperation,
	-32005: a2a.ErrUnsupportedContentType,
	-32006: a2a.ErrInvalidAgentResponse,
	-32007: a2a.ErrExtendedCardNotConfigured,
	-32008: a2a.ErrExtensionSupportRequired,
	-32009: a2a.ErrVersionNotSupported,
	-31401: a2a.ErrUnauthenticated,
	-31403: a2a.ErrUnauthorized,
}

// err returns the A2A error e stands for: the error of its code (an
// internal error for a code A2A does not name), with its message.
func (e *rpcError) err() error {
	base, ok := rpcErrors[e.Code]
	if !ok {
		base = a2a.ErrInternalError
	}
	msg := e.Message
	if msg == "" {
		msg = base.Error()
	}
	return a2a.NewError(base, msg)
}
