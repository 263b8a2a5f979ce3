package a2arpc

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// TestRPCResultsWrittenInOnePass checks that a response whose result is an
// A2A task, message or event, written in one pass, says what encoding/json
// says (for a stream response, byte for byte), and that other results and
// odd ids still go through encoding/json.
func TestRPCResultsWrittenInOnePass(t *testing.T) {
	msg := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("an <answer> & \u2028"))
	task := &a2a.Task{ID: "t<1>", ContextID: "c&", History: []*a2a.Message{msg}, Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}
	old := func(id json.RawMessage, result any) []byte {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(rpcResult{JSONRPC: "2.0", ID: id, Result: result}); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	sameJSON := func(a, b []byte) bool {
		var x, y any
		if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
			return false
		}
		xb, _ := json.Marshal(x)
		yb, _ := json.Marshal(y)
		return bytes.Equal(xb, yb)
	}
	for _, id := range []string{`1`, `"id <&>"`, `null`, `-2.5e3`} {
		for name, result := range map[string]any{
			"stream response": a2a.StreamResponse{Event: task},
			"task":            task,
			"message":         msg,
			"status":          &a2a.TaskStatusUpdateEvent{TaskID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Message: msg}},
			"artifact":        &a2a.TaskArtifactUpdateEvent{TaskID: "t", Artifact: &a2a.Artifact{ID: "a", Parts: a2a.ContentParts{a2a.NewTextPart("<x>")}}},
			"other":           map[string]string{"k": "<v>"},
		} {
			want := old(json.RawMessage(id), result)
			rec := httptest.NewRecorder()
			WriteResult(rec, json.RawMessage(id), result)
			got := rec.Body.Bytes()
			if name == "stream response" && !bytes.Equal(got, want) {
				t.Fatalf("%s, id %s:\n got %s\nwant %s", name, id, got, want)
			}
			if !sameJSON(got, want) || got[len(got)-1] != '\n' || rec.Header().Get("Content-Type") != "application/json" {
				t.Fatalf("%s, id %s:\n got %q\nwant %q", name, id, got, want)
			}
			line, err := EncodeResult(json.RawMessage(id), result)
			if err != nil || !sameJSON(line, got) || (name != "other" && !bytes.Equal(append(line, '\n'), got)) {
				t.Fatalf("%s: EncodeResult %q, %v; WriteResult %q", name, line, err, got)
			}
		}
	}
	if _, ok := appendA2AResult(nil, json.RawMessage(`{bad`), task); ok {
		t.Fatal("an id that is not JSON was written as it came")
	}
	// A buffer of the pool that held a longer answer before: only this
	// answer is written.
	long := &a2a.Task{ID: "t", Artifacts: []*a2a.Artifact{{ID: "a", Parts: a2a.ContentParts{a2a.NewTextPart(strings.Repeat("x", 8000))}}}}
	for _, result := range []any{long, task} {
		rec := httptest.NewRecorder()
		WriteResult(rec, json.RawMessage(`1`), result)
		if want, _ := EncodeResult(json.RawMessage(`1`), result); !bytes.Equal(rec.Body.Bytes(), append(want, '\n')) {
			t.Fatalf("after a longer answer:\n got %q\nwant %q", rec.Body.Bytes(), want)
		}
	}
}
