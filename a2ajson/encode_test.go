package a2ajson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// awkward holds every character class encoding/json escapes in its own way.
const awkward = "quote\" backslash\\ <b>&amp; \b\f\n\r\t \x00\x01\x1f\x7f é ✓ \u2028\u2029 \xff\xfe bad \xe2\x82 end 😀"

// sameBytes fails unless Marshal writes v as json.Marshal does, or fails
// with the same error.
func sameBytes(t testing.TB, name string, v any) {
	t.Helper()
	want, wantErr := json.Marshal(v)
	got, err := Marshal(v)
	if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
		t.Fatalf("%s: error %v, encoding/json's %v", name, err, wantErr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s:\n got %s\nwant %s", name, got, want)
	}
}

func sampleTask() *a2a.Task {
	at := time.Date(2026, 12, 1, 13, 4, 5, 123456789, time.FixedZone("x", 3600))
	msg := &a2a.Message{ID: "m<1>", ContextID: "c&", Extensions: []string{"https://ext/1", awkward},
		Metadata: map[string]any{"b": 1.5, "a": []any{"x", nil, true}, "h": "<&>"},
		Parts: a2a.ContentParts{
			a2a.NewTextPart(awkward),
			nil,
			{Content: a2a.Raw([]byte{0, 1, 2, 250, 251, 252}), Filename: "f.bin", MediaType: "application/octet-stream"},
			{Content: a2a.Raw(nil)},
			{Content: a2a.Raw{}},
			{Content: a2a.Data{Value: map[string]any{"k": []int{1, 2}, "<": "&"}}},
			{Content: a2a.Data{}},
			{Content: a2a.URL("https://x.test/a?b=<c>"), MediaType: "text/html"},
			{Content: a2a.URL("")},
			{Filename: "no content", Metadata: map[string]any{"p": awkward}},
		},
		ReferenceTasks: []a2a.TaskID{"t1", "t<2>"},
		Role:           a2a.MessageRoleUser, TaskID: "t&",
	}
	return &a2a.Task{
		ID: "task-1", ContextID: "ctx", History: []*a2a.Message{msg, nil, {ID: "bare"}},
		Artifacts: []*a2a.Artifact{
			{ID: "a1", Description: awkward, Extensions: []string{"e"}, Metadata: map[string]any{"m": 1}, Name: "n", Parts: a2a.ContentParts{a2a.NewTextPart("art")}},
			nil,
			{ID: "empty", Parts: a2a.ContentParts{}},
		},
		Metadata: map[string]any{"z": "last", "a": map[string]any{"nested": awkward}},
		Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: &at,
			Message: &a2a.Message{ID: "s", Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart("working")}}},
	}
}

// TestSameBytesAsEncodingJSON checks every shape the package writes
// against encoding/json and the SDK's own methods.
func TestSameBytesAsEncodingJSON(t *testing.T) {
	task := sampleTask()
	at := time.Unix(0, 0).UTC()
	status := &a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: &at}, Metadata: map[string]any{"final": true}}
	art := &a2a.TaskArtifactUpdateEvent{Append: true, LastChunk: true, TaskID: "t", ContextID: "c", Artifact: task.Artifacts[0], Metadata: map[string]any{"x": 1}}
	cases := map[string]any{
		"task":                   task,
		"empty task":             &a2a.Task{},
		"nil task":               (*a2a.Task)(nil),
		"message":                task.History[0],
		"empty message":          &a2a.Message{},
		"nil message":            (*a2a.Message)(nil),
		"status update":          status,
		"bare status update":     &a2a.TaskStatusUpdateEvent{},
		"artifact update":        art,
		"artifact update no art": &a2a.TaskArtifactUpdateEvent{TaskID: "t"},
		"stream task":            a2a.StreamResponse{Event: task},
		"stream message":         a2a.StreamResponse{Event: task.History[0]},
		"stream status":          &a2a.StreamResponse{Event: status},
		"stream artifact":        a2a.StreamResponse{Event: art},
		"stream nil":             a2a.StreamResponse{},
		"stream nil task":        a2a.StreamResponse{Event: (*a2a.Task)(nil)},
		"nil stream pointer":     (*a2a.StreamResponse)(nil),
		"send": &a2a.SendMessageRequest{Tenant: "ten<", Message: task.History[0], Metadata: map[string]any{"m": awkward},
			Config: &a2a.SendMessageConfig{AcceptedOutputModes: []string{"text/plain"}, ReturnImmediately: true}},
		"send without message": &a2a.SendMessageRequest{},
		"nil send":             (*a2a.SendMessageRequest)(nil),
		"bad metadata":         &a2a.Task{ID: "t", Metadata: map[string]any{"c": make(chan int)}},
		"bad data part":        &a2a.Message{Parts: a2a.ContentParts{{Content: a2a.Data{Value: func() {}}}}},
		"bad timestamp":        &a2a.TaskStatusUpdateEvent{Status: a2a.TaskStatus{Timestamp: &time.Time{}}},
		"year out of range":    &a2a.Task{Status: a2a.TaskStatus{Timestamp: ptr(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))}},
		"unspecified state":    &a2a.Task{Status: a2a.TaskStatus{State: "odd <state>"}},
		"other value":          map[string]any{"not": "a2a"},
	}
	for name, v := range cases {
		sameBytes(t, name, v)
	}
	// Append* add to what dst holds.
	b, err := AppendTask([]byte("prefix:"), task)
	want, _ := json.Marshal(task)
	if err != nil || string(b) != "prefix:"+string(want) {
		t.Fatalf("AppendTask after a prefix: %v\n%s", err, b)
	}
	b, err = AppendTask([]byte("prefix:"), &a2a.Task{Metadata: map[string]any{"c": make(chan int)}})
	if err == nil || string(b) != "prefix:" {
		t.Fatalf("a failed append: %q, %v (want dst as it was and an error)", b, err)
	}
}

func ptr[T any](v T) *T { return &v }

// TestStringsAsEncodingJSON checks every single byte and a few runes.
func TestStringsAsEncodingJSON(t *testing.T) {
	for i := range 256 {
		for _, s := range []string{string([]byte{byte(i)}), "a" + string([]byte{byte(i)}) + "b"} {
			checkString(t, s)
		}
	}
	for _, r := range []rune{0x7f, 0x80, 0x7ff, 0x800, 0x2027, 0x2028, 0x2029, 0x202a, 0xfffd, 0xffff, 0x10000, 0x10ffff} {
		checkString(t, string(r))
	}
	checkString(t, awkward)
	checkString(t, strings.Repeat("long plain text ", 100))
}

func checkString(t testing.TB, s string) {
	t.Helper()
	want, _ := json.Marshal(s)
	if got := appendString(nil, s); !bytes.Equal(got, want) {
		t.Fatalf("%q: got %s, want %s", s, got, want)
	}
}

// FuzzSameBytesAsEncodingJSON decodes arbitrary JSON as each type the
// package writes and checks that it writes what encoding/json writes; the
// text goes into a message part as well, as a string of arbitrary bytes.
func FuzzSameBytesAsEncodingJSON(f *testing.F) {
	seed, _ := json.Marshal(sampleTask())
	f.Add(seed, awkward)
	f.Add([]byte(`{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_SUBMITTED"}}}`), "hi")
	f.Add([]byte(`{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-12-01T00:00:00.5+01:00"}}}`), "")
	f.Add([]byte(`{"artifactUpdate":{"append":true,"artifact":{"artifactId":"a","parts":[{"data":{"x":[1,2.5e300]}}]},"taskId":"t"}}`), "<>")
	f.Add([]byte(`{"message":{"messageId":"m","parts":[{"raw":"AAEC"},{"url":"u","mediaType":"m"}],"role":"ROLE_AGENT"}}`), "\u2028")
	f.Add([]byte(`{"message":{"messageId":"m","role":"x","metadata":{"a":{"b":null}},"parts":null}}`), "\xff")
	f.Add([]byte(`{"tenant":"t","message":{"messageId":"m","parts":[{"text":"x"}]},"configuration":{"historyLength":3}}`), "z")
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		var sr a2a.StreamResponse
		if json.Unmarshal(data, &sr) == nil {
			sameBytes(t, "stream response", sr)
			sameBytes(t, "event", sr.Event)
			if m, ok := sr.Event.(*a2a.Message); ok && m != nil {
				m.Parts = append(m.Parts, a2a.NewTextPart(text), &a2a.Part{Content: a2a.Raw(text), Filename: text})
				sameBytes(t, "message with text", m)
			}
		}
		var task a2a.Task
		if json.Unmarshal(data, &task) == nil {
			task.History = append(task.History, &a2a.Message{ID: text, Parts: a2a.ContentParts{a2a.NewTextPart(text)}})
			sameBytes(t, "task", &task)
		}
		var req a2a.SendMessageRequest
		if json.Unmarshal(data, &req) == nil {
			sameBytes(t, "send request", &req)
		}
		checkString(t, text)
	})
}

// BenchmarkTask compares writing a task with a 1 KiB message and an answer,
// as the server stores it, with encoding/json.
func BenchmarkTask(b *testing.B) {
	at := time.Now()
	task := &a2a.Task{ID: "019ad3c4-1111-7000-8000-000000000001", ContextID: "019ad3c4-2222-7000-8000-000000000002",
		History: []*a2a.Message{
			{ID: "m1", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart(strings.Repeat("x", 1024))}},
			{ID: "m2", Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart(strings.Repeat("y", 1024))}},
		},
		Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: &at}}
	for _, enc := range []struct {
		name string
		fn   func() ([]byte, error)
	}{
		{"a2ajson", func() ([]byte, error) { return AppendTask(nil, task) }},
		{"encoding-json", func() ([]byte, error) { return json.Marshal(task) }},
	} {
		b.Run(enc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := enc.fn(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func ExampleAppendStreamResponse() {
	task := &a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}
	b, _ := AppendStreamResponse(nil, task)
	fmt.Println(string(b))
	// Output: {"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_SUBMITTED"}}}
}

// TestPlainValuesAsEncodingJSON: metadata made of strings, booleans,
// nulls, maps and slices is written here byte for byte as json.Marshal
// writes it (keys sorted and escaped alike); any other value, and one
// nested past maxPlainDepth, is left to encoding/json.
func TestPlainValuesAsEncodingJSON(t *testing.T) {
	deep := any("bottom")
	for range maxPlainDepth + 2 {
		deep = map[string]any{"d": deep}
	}
	for _, v := range []any{
		nil, "", "<a href='x'>&amp;</a>", "bad \xff utf8 \u2028 \u2029 \x00 \x1f", true, false,
		map[string]any{}, map[string]any(nil), []any{}, []any(nil),
		map[string]any{"z": "last", "a": "first", "é": true, "<k>": nil, "B": []any{"x", false, map[string]any{"n": nil}}},
		map[string]any{"switchboard": map[string]any{"from": "bob", "taskId": "t-1", "contextId": "c-1"}},
		map[string]any{"1": "a", "10": "b", "9": "c", "k1": "", "k2": "", "k3": "", "k4": "", "k5": "", "k6": "", "k7": "", "k8": ""},
		map[string]any{"n": 1.5}, []any{"a", 2}, map[string]any{"i": int64(3)}, deep,
	} {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		w := writer{b: []byte("prefix:")}
		w.any(v)
		if w.err != nil || string(w.b) != "prefix:"+string(want) {
			t.Errorf("%#v: wrote %q (%v), json.Marshal %q", v, w.b, w.err, want)
		}
	}
	if _, ok := appendPlain(nil, map[string]any{"n": 1.5}, 0); ok {
		t.Error("a number was written here, not by encoding/json")
	}
	if _, ok := appendPlain(nil, deep, 0); ok {
		t.Error("a value nested past maxPlainDepth was written here")
	}
}
