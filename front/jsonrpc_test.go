package front

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// replay answers every request with one status and body, and keeps the
// last request.
type replay struct {
	status int
	body   []byte
	got    *http.Request
	sent   []byte
}

func (r *replay) RoundTrip(req *http.Request) (*http.Response, error) {
	r.got = req
	r.sent, _ = io.ReadAll(req.Body)
	return &http.Response{StatusCode: r.status, Status: http.StatusText(r.status), Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(r.body)), Request: req}, nil
}

// The calls bothTransports compares.
const (
	sendCall = iota
	getTaskCall
	streamCall // SendStreamingMessage, its events gathered
)

// bothTransports makes call (sendCall…) through the SDK's JSON-RPC
// transport and through jsonrpcTransport, each answered with status and
// body, and fails t where they differ: in the request they send, the
// result, or the error. A stream's results are its events up to its end
// or its error; a stream's error that is not an A2A error is compared by
// its place alone (the two decoders word them differently).
func bothTransports(t *testing.T, status int, body []byte, call int) {
	t.Helper()
	ctx := context.Background()
	params := a2aclient.ServiceParams{"A2a-Version": {"1.0"}}
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello <there> & \u2028"))
	send := &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}, Metadata: map[string]any{"k": "v"}}
	do := func(tr a2aclient.Transport) (any, error) {
		switch call {
		case getTaskCall:
			n := 3
			return tr.GetTask(ctx, params, &a2a.GetTaskRequest{ID: "t-1", HistoryLength: &n})
		case streamCall:
			var events []a2a.Event
			for ev, err := range tr.SendStreamingMessage(ctx, params, send) {
				if err != nil {
					return events, err
				}
				events = append(events, ev)
			}
			return events, nil
		}
		return tr.SendMessage(ctx, params, send)
	}
	sdk, ours := &replay{status: status, body: body}, &replay{status: status, body: body}
	want, wantErr := do(a2aclient.NewJSONRPCTransport("http://upstream.test/a2a", &http.Client{Transport: sdk}))
	got, gotErr := do(newJSONRPCTransport("http://upstream.test/a2a", &http.Client{Transport: ours}))

	if sdk.got.Method != ours.got.Method || sdk.got.URL.String() != ours.got.URL.String() {
		t.Fatalf("request line: ours %s %s, the SDK's %s %s", ours.got.Method, ours.got.URL, sdk.got.Method, sdk.got.URL)
	}
	if !reflect.DeepEqual(sdk.got.Header, ours.got.Header) {
		t.Fatalf("headers: ours %v, the SDK's %v", ours.got.Header, sdk.got.Header)
	}
	if a, b := withoutID(t, sdk.sent), withoutID(t, ours.sent); !reflect.DeepEqual(a, b) {
		t.Fatalf("request body: ours %s, the SDK's %s", ours.sent, sdk.sent)
	}

	switch {
	case (wantErr == nil) != (gotErr == nil):
		t.Fatalf("answer %d %q: ours %v (%v), the SDK's %v (%v)", status, body, got, gotErr, want, wantErr)
	case wantErr != nil:
		// An A2A error is the same error with the same message. Another
		// is the same failure: the words before the cause, which names
		// the decoder's types (and where a map's keys are listed, the
		// SDK's words change from one call to the next).
		var we, ge *a2a.Error
		if errors.As(wantErr, &we) != errors.As(gotErr, &ge) || (we != nil && (!errors.Is(gotErr, we.Err) || ge.Message != we.Message)) {
			t.Fatalf("answer %d %q: error %#v, the SDK's %#v", status, body, gotErr, wantErr)
		}
		if call != streamCall && failure(gotErr) != failure(wantErr) {
			t.Fatalf("answer %d %q: error %q, the SDK's %q", status, body, gotErr, wantErr)
		}
		if call == streamCall && !reflect.DeepEqual(got, want) {
			t.Fatalf("answer %q: events before the error %#v, the SDK's %#v", body, got, want)
		}
	case !reflect.DeepEqual(got, want):
		t.Fatalf("answer %q: result %#v, the SDK's %#v", body, got, want)
	}
}

// failure is an error's text before its cause.
func failure(err error) string {
	s, _, _ := strings.Cut(err.Error(), ":")
	return s
}

// withoutID decodes a JSON-RPC request, but its id (a random one each).
func withoutID(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("request %q: %v", b, err)
	}
	if id, ok := m["id"].(string); !ok || id == "" {
		t.Fatalf("request %q has no id", b)
	}
	delete(m, "id")
	return m
}

// jsonrpcAnswers are answers the two transports are compared on (and the
// fuzz target's seeds).
var jsonrpcAnswers = []struct {
	status int
	body   string
}{
	{200, `{"jsonrpc":"2.0","id":"1","result":{"task":{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED","message":{"messageId":"m-2","role":"ROLE_AGENT","parts":[{"text":"done"}]}},"artifacts":[{"artifactId":"a-1","parts":[{"text":"x","mediaType":"text/plain"},{"data":{"n":1}}]}],"history":[{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}]}}}`},
	{200, `{"jsonrpc":"2.0","id":"1","result":{"message":{"messageId":"m-2","role":"ROLE_AGENT","parts":[{"text":"hi"},{"url":"https://x.test/f","filename":"f"}],"metadata":{"a":[1,2]}}}}`},
	{200, `{"jsonrpc":"2.0","id":"1","result":{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_WORKING"}}}`},
	{200, `{"jsonrpc":"2.0","id":"1","result":{"statusUpdate":{"taskId":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_WORKING"}}}}`},
	{200, `{"jsonrpc":"2.0","id":"1","result":{"task":{"id":"t-1"},"message":{"messageId":"m"}}}`},
	{200, `{"jsonrpc":"2.0","id":"1","error":{"code":-32001,"message":"no such task"}}`},
	{200, `{"jsonrpc":"2.0","id":"1","error":{"code":-32004,"message":""}}`},
	{200, `{"jsonrpc":"2.0","id":"1","error":{"code":-1,"message":"odd","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"R"}]}}`},
	{200, `{"jsonrpc":"2.0","id":"1","error":{"code":-32603,"message":"x","data":5}}`},
	{200, `{"jsonrpc":"2.0","id":1,"result":{}}`},
	{200, `{"jsonrpc":"2.0","id":"1"}`},
	{200, `{"jsonrpc":"2.0","id":"1","result":null}`},
	{200, `{"result":{"message":{"messageId":"m","parts":[{"text":"a"}]}}} trailing`},
	{200, `not json`},
	{200, ``},
	{401, `{"error":"unauthorized"}`},
	{502, `<html>bad gateway</html>`},
}

// TestJSONRPCTransportAsTheSDKs checks that jsonrpcTransport sends what
// the SDK's JSON-RPC transport sends and returns what it returns, on
// answers of every kind.
func TestJSONRPCTransportAsTheSDKs(t *testing.T) {
	for _, a := range jsonrpcAnswers {
		bothTransports(t, a.status, []byte(a.body), sendCall)
		bothTransports(t, a.status, []byte(a.body), getTaskCall)
	}
	for _, body := range sseAnswers() {
		bothTransports(t, http.StatusOK, []byte(body), streamCall)
	}
	bothTransports(t, http.StatusBadGateway, []byte("data: x\n\n"), streamCall)

	// The comparison above is of something: the first stream's events.
	tr := newJSONRPCTransport("http://upstream.test/a2a", &http.Client{Transport: &replay{status: http.StatusOK, body: []byte(sseAnswers()[0])}})
	var kinds []string
	for ev, err := range tr.SendStreamingMessage(context.Background(), nil, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("x"))}) {
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, fmt.Sprintf("%T", ev))
	}
	if want := []string{"*a2a.TaskStatusUpdateEvent", "*a2a.TaskArtifactUpdateEvent", "*a2a.TaskStatusUpdateEvent"}; !reflect.DeepEqual(kinds, want) {
		t.Fatalf("events %v, want %v", kinds, want)
	}
}

func FuzzJSONRPCTransportAsTheSDKs(f *testing.F) {
	for _, a := range jsonrpcAnswers {
		f.Add(a.body, false)
		f.Add(a.body, true)
	}
	f.Fuzz(func(t *testing.T, body string, getTask bool) {
		call := sendCall
		if getTask {
			call = getTaskCall
		}
		bothTransports(t, http.StatusOK, []byte(body), call)
	})
}

// sseAnswers are event streams the two transports are compared on (and
// FuzzJSONRPCStreamAsTheSDKs's seeds): each answer of jsonrpcAnswers as
// an event, and streams of several events in the forms a stream may take.
func sseAnswers() []string {
	status := `{"jsonrpc":"2.0","id":"1","result":{"statusUpdate":{"taskId":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_WORKING"}}}}`
	artifact := `{"jsonrpc":"2.0","id":"1","result":{"artifactUpdate":{"taskId":"t-1","contextId":"c-1","artifact":{"artifactId":"a-1","parts":[{"text":"part"}]},"append":true,"lastChunk":false}}}`
	done := `{"jsonrpc":"2.0","id":"1","result":{"statusUpdate":{"taskId":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED","message":{"messageId":"m-2","role":"ROLE_AGENT","parts":[{"text":"done"}]}}}}}`
	streams := []string{
		"id: 1\ndata: " + status + "\n\nid: 2\ndata: " + artifact + "\n\ndata: " + done + "\n\n",
		": keep-alive\n\ndata:" + status + "\r\n\r\nevent: x\ndata: " + done,                                          // no space, CRLF, no blank line at the end
		"data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":\"1\",\"result\":\ndata: {\"message\":{\"messageId\":\"m\"}}}\n\n", // one event on three lines
		"data: " + status + "\n\ndata: " + `{"jsonrpc":"2.0","id":"1","error":{"code":-32001,"message":"gone"}}` + "\n\ndata: " + done + "\n\n",
		"data: " + status + "\n\ndata: not json\n\n",
		"data:\ndata:\n\n",
		"data\n\nretry: 5\n\n",
		"",
	}
	for _, a := range jsonrpcAnswers {
		streams = append(streams, "data: "+a.body+"\n\n")
	}
	return streams
}

func FuzzJSONRPCStreamAsTheSDKs(f *testing.F) {
	for _, body := range sseAnswers() {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		bothTransports(t, http.StatusOK, []byte(body), streamCall)
	})
}

// TestJSONRPCTransportWithAnA2AServer sends a message and reads its task
// through jsonrpcTransport from a real a2a-go server, reads its error for
// a task it does not know, and streams a message's answer.
func TestJSONRPCTransportWithAnA2AServer(t *testing.T) {
	srv := httptest.NewServer(a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(answerExecutor{})))
	defer srv.Close()
	tr := newJSONRPCTransport(srv.URL, srv.Client())
	ctx := context.Background()
	res, err := tr.SendMessage(ctx, nil, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(strings.Repeat("x", 3000)))})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 || task.Artifacts[0].Parts[0].Text() != "echo 3000" {
		t.Fatalf("SendMessage: %#v", res)
	}
	got, err := tr.GetTask(ctx, nil, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || got.ID != task.ID || got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("GetTask: %#v, %v", got, err)
	}
	if _, err := tr.GetTask(ctx, nil, &a2a.GetTaskRequest{ID: "no-such-task"}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("GetTask of an unknown task: %v, want a2a.ErrTaskNotFound", err)
	}
	var events []a2a.Event
	for ev, err := range tr.SendStreamingMessage(ctx, nil, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("xy"))}) {
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	if len(events) != 1 {
		t.Fatalf("SendStreamingMessage: %d events, want 1", len(events))
	}
	if task, ok := events[0].(*a2a.Task); !ok || task.Status.State != a2a.TaskStateCompleted || task.Artifacts[0].Parts[0].Text() != "echo 2" {
		t.Fatalf("SendStreamingMessage: %#v", events[0])
	}
}

// answerExecutor completes each task with an artifact that names the
// length of the message's text.
type answerExecutor struct{}

func (answerExecutor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		n := 0
		for _, p := range ec.Message.Parts {
			n += len(p.Text())
		}
		task := &a2a.Task{ID: ec.TaskID, ContextID: ec.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateCompleted},
			Artifacts: []*a2a.Artifact{{ID: a2a.NewArtifactID(), Parts: a2a.ContentParts{a2a.NewTextPart("echo " + strconv.Itoa(n))}}}}
		yield(task, nil)
	}
}

func (answerExecutor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {}
}
