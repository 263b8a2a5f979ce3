package a2ajson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// decodeCases are JSON texts for the decoders: accepted ones of every
// shape, and ones the SDK refuses for each of its reasons.
var decodeCases = []string{
	`{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_SUBMITTED"}}}`,
	`{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-12-01T00:00:00.5+01:00","message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"done \u003c\ud83d\ude00\"}]}}},"metadata":{"a":1}}}`,
	`{"artifactUpdate":{"append":true,"lastChunk":true,"artifact":{"artifactId":"a","name":"n","description":"d","extensions":["e"],"metadata":{"x":null},"parts":[{"data":{"x":[1,2.5e300]}}]},"taskId":"t","contextId":"c"}}`,
	`{"message":{"messageId":"m","parts":[{"raw":"AAEC"},{"url":"u","mediaType":"m","filename":"f"},null,{"text":"","metadata":{"k":"v"}}],"role":"ROLE_UNSPECIFIED","referenceTaskIds":["r"],"extensions":[]}}`,
	`{"task":{"id":"t","history":[null,{"messageId":"h","parts":null}],"artifacts":[null,{"artifactId":"a","parts":[]}],"status":{"state":"TASK_STATE_UNSPECIFIED","message":null,"timestamp":null},"metadata":{}}}`,
	`{"message":{"messageId":"m","parts":[{"data":null,"text":"x"}],"role":null}}`,
	`  {"message" : {"messageId":"m","parts":[{"url":"","text":"x"}]}}  `,
	`{"MESSAGE":{"MessageId":"m","Parts":[{"TEXT":"x"}]}}`,
	`{"message":{"messageId":"m","parts":[{"raw":""}],"unknown":{"deep":[1,{"x":2}]}}}`,
	// refused
	`{"message":{"messageId":"m","parts":[{}]}}`,
	`{"message":{"messageId":"m","parts":[{"text":"a","raw":"AA=="}]}}`,
	`{"message":{"messageId":"m","parts":[{"url":""}]}}`,
	`{"message":{"messageId":"m","parts":[{"raw":"not base64!"}]}}`,
	`{"message":{"messageId":"m","parts":["text"]}}`,
	`{"message":{"messageId":5}}`,
	`{"message":{"messageId":"m","role":5}}`,
	`{"task":{"id":"t","status":{"state":7}}}`,
	`{"statusUpdate":{"status":{"timestamp":"yesterday"}}}`,
	`{"task":{"id":"t"},"message":{"messageId":"m"}}`,
	`{"task":null}`,
	`{}`,
	`null`,
	`[]`,
	`{"message":{"messageId":"m"}} trailing`,
	`{"message":{"messageId":"m\x01"}}`,
	`{"message":`,
	``,
	// send requests
	`{"message":{"messageId":"m","parts":[{"text":"hi"}],"role":"ROLE_USER"},"configuration":{"returnImmediately":true,"historyLength":2,"acceptedOutputModes":["text/plain"]},"metadata":{"m":[true]},"tenant":"t"}`,
	`{"message":null}`,
	`{"configuration":{"historyLength":"two"},"message":{"messageId":"m","parts":[{"text":"x"}]}}`,
}

// TestDecodersAsEncodingJSON checks each case against json.Unmarshal into
// the SDK's types: the same value, or the same error word for word.
func TestDecodersAsEncodingJSON(t *testing.T) {
	for _, c := range decodeCases {
		sameDecoding(t, []byte(c))
	}
}

// TestUnmarshalStreamAnswer: an answer's error member comes back whole;
// what one pass cannot decide is left to the caller.
func TestUnmarshalStreamAnswer(t *testing.T) {
	var sr a2a.StreamResponse
	rpcErr, ok := UnmarshalStreamAnswer([]byte(`{"jsonrpc":"2.0","id":"1","error":{"code":-32001,"message":"gone"},"result":{"task":{"id":"t"}}}`), &sr)
	if !ok || string(rpcErr) != `{"code":-32001,"message":"gone"}` || sr.Event != nil {
		t.Fatalf("error answer: %q, %v, %v", rpcErr, ok, sr.Event)
	}
	rpcErr, ok = UnmarshalStreamAnswer([]byte(`{"jsonrpc":"2.0","id":"1","error":null,"result":{"task":{"id":"t","status":{"state":"TASK_STATE_WORKING"}}}}`), &sr)
	if task, _ := sr.Event.(*a2a.Task); !ok || rpcErr != nil || task == nil || task.ID != "t" || task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("task answer: %q, %v, %#v", rpcErr, ok, sr.Event)
	}
	for _, undecided := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t"}}}`, // an id the SDK's shape refuses
		`{"jsonrpc":"2.0","id":"1"}`,
		`{"jsonrpc":"2.0","id":"1","result":null}`,
		`{"jsonrpc":"2.0","id":"1","result":{"task":{"id":"t"},"message":{"messageId":"m"}}}`,
		`{"jsonrpc":"2.0","id":"1","result":{"task":{"id":"t"}}} trailing`,
		`not json`,
	} {
		if rpcErr, ok := UnmarshalStreamAnswer([]byte(undecided), &a2a.StreamResponse{}); ok {
			t.Errorf("%s: decided (error %q), want it left to the caller", undecided, rpcErr)
		}
	}
}

// FuzzDecodersAsEncodingJSON does the same for arbitrary input.
func FuzzDecodersAsEncodingJSON(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(c))
	}
	seed, _ := json.Marshal(a2a.StreamResponse{Event: sampleTask()})
	f.Add(seed)
	f.Fuzz(func(t *testing.T, data []byte) {
		sameDecoding(t, data)
	})
}

func sameDecoding(t *testing.T, data []byte) {
	t.Helper()
	if namesAFieldTwice(data) {
		return // the documented difference
	}
	var want, got a2a.StreamResponse
	wantErr := json.Unmarshal(data, &want)
	err := UnmarshalStreamResponse(data, &got)
	compare(t, "stream response", data, want, got, wantErr, err)

	var wantTask, gotTask a2a.Task
	wantErr = json.Unmarshal(data, &wantTask)
	err = UnmarshalTask(data, &gotTask)
	compare(t, "task", data, wantTask, gotTask, wantErr, err)
	if want.Event != nil { // the event alone, as the store keeps tasks
		if task, ok := want.Event.(*a2a.Task); ok && task != nil {
			inner, _ := json.Marshal(task)
			wantErr = json.Unmarshal(inner, &wantTask)
			gotTask = a2a.Task{}
			err = UnmarshalTask(inner, &gotTask)
			compare(t, "stored task", inner, wantTask, gotTask, wantErr, err)
		}
	}

	// As the result of a JSON-RPC answer: where one pass decides, it
	// decides as the SDK does.
	var inAnswer a2a.StreamResponse
	answer := append(append([]byte(`{"jsonrpc":"2.0","id":"1","result":`), data...), '}')
	if rpcErr, ok := UnmarshalStreamAnswer(answer, &inAnswer); ok {
		wantErr = json.Unmarshal(data, &want)
		if rpcErr != nil || wantErr != nil {
			t.Fatalf("answer %q: decided (error %q), but encoding/json says %v", answer, rpcErr, wantErr)
		}
		compare(t, "answer's result", data, want, inAnswer, nil, nil)
	}

	var wantReq, gotReq a2a.SendMessageRequest
	wantErr = json.Unmarshal(data, &wantReq)
	err = UnmarshalSendMessageRequest(data, &gotReq)
	compare(t, "send request", data, wantReq, gotReq, wantErr, err)
}

func compare(t *testing.T, what string, data []byte, want, got any, wantErr, err error) {
	t.Helper()
	if (err == nil) != (wantErr == nil) || (err != nil && !sameError(err.Error(), wantErr.Error())) {
		t.Fatalf("%s %q: error %v, encoding/json's %v", what, data, err, wantErr)
	}
	if err != nil {
		return // the value is not used
	}
	utcTimes(reflect.ValueOf(&want).Elem())
	utcTimes(reflect.ValueOf(&got).Elem())
	if !reflect.DeepEqual(want, got) {
		wb, _ := json.Marshal(want)
		gb, _ := json.Marshal(got)
		t.Fatalf("%s %q:\n got %s\nwant %s\n(%#v\n vs %#v)", what, data, gb, wb, got, want)
	}
}

// sameError compares two error messages. The SDK lists the keys of an
// object it cannot read in a map's order, which differs from run to run,
// so a list in brackets is compared as a set.
func sameError(a, b string) bool {
	if a == b {
		return true
	}
	ia, ib := strings.LastIndex(a, ": ["), strings.LastIndex(b, ": [")
	if ia < 0 || ia != ib || a[:ia] != b[:ib] || !strings.HasSuffix(a, "]") || !strings.HasSuffix(b, "]") {
		return false
	}
	wa, wb := strings.Fields(a[ia+3:len(a)-1]), strings.Fields(b[ib+3:len(b)-1])
	slices.Sort(wa)
	slices.Sort(wb)
	return slices.Equal(wa, wb)
}

// utcTimes sets every *time.Time under v to UTC: a parsed offset is a
// location of its own each time, which reflect.DeepEqual tells apart.
func utcTimes(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return
		}
		if ts, ok := v.Interface().(*time.Time); ok {
			*ts = ts.UTC()
			return
		}
		if v.Kind() == reflect.Interface {
			e := reflect.New(v.Elem().Type()).Elem()
			e.Set(v.Elem())
			utcTimes(e)
			if v.CanSet() {
				v.Set(e)
			}
			return
		}
		utcTimes(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				utcTimes(f)
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			utcTimes(v.Index(i))
		}
	}
}

// namesAFieldTwice reports whether an object in data has two keys that
// encoding/json could take for the same field (equal when folded, or not
// ASCII, where its folding goes further).
func namesAFieldTwice(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	var stack []map[string]bool // keys of each open object; nil for an array
	expectKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{':
				stack = append(stack, map[string]bool{})
				expectKey = true
				continue
			case '[':
				stack = append(stack, nil)
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if expectKey {
				for _, r := range tok {
					if r >= utf8.RuneSelf {
						return true
					}
				}
				k := strings.ToLower(tok)
				if stack[len(stack)-1][k] {
					return true
				}
				stack[len(stack)-1][k] = true
				expectKey = false
				continue
			}
		}
		expectKey = len(stack) > 0 && stack[len(stack)-1] != nil
	}
}

// BenchmarkDecodeStreamResponse compares decoding an agent's answer (a
// status update with a 1 KiB message) with json.Unmarshal into the SDK's
// types.
func BenchmarkDecodeStreamResponse(b *testing.B) {
	at := time.Now()
	data, _ := json.Marshal(a2a.StreamResponse{Event: &a2a.TaskStatusUpdateEvent{TaskID: "019ad3c4-1111-7000-8000-000000000001",
		ContextID: "019ad3c4-2222-7000-8000-000000000002", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: &at,
			Message: &a2a.Message{ID: "m2", Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart(strings.Repeat("y", 1024))}}}}})
	b.Run("a2ajson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var sr a2a.StreamResponse
			if err := UnmarshalStreamResponse(data, &sr); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var sr a2a.StreamResponse
			if err := json.Unmarshal(data, &sr); err != nil {
				b.Fatal(err)
			}
		}
	})
}
