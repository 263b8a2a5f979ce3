package a2ajson

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// plainCases are texts of the plainest form, each of which the scanner
// must decode itself.
var plainCases = []struct{ what, data string }{
	{"stream response", `{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-12-05T10:00:00.123456789+01:00",` +
		`"message":{"messageId":"s","role":"ROLE_AGENT","parts":[{"text":"done"}]}},"artifacts":[{"artifactId":"a","name":"n","description":"d",` +
		`"extensions":["e"],"metadata":{"k":[1,2.5,{"x":null}]},"parts":[{"text":"x \u003c\u0026\u003e \ud83d\ude00 \ud800 é \" \\ \/ \b\f\n\r\t \u00E9\uD83D\uDE00 \ud83dxxde00 \ud83d\n"},` +
		`{"raw":"AAEC","filename":"f","mediaType":"application/octet-stream"},{"data":{"a":[true,false,null]}},{"url":"https://x.test/"},{"data":7}]}],` +
		`"history":[{"messageId":"m","contextId":"c","taskId":"t","role":"ROLE_USER","referenceTaskIds":["r1","r2"],"extensions":[],` +
		`"metadata":{},"parts":[]}],"metadata":{"z":"é"}}}`},
	{"stream response", `{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"},"metadata":{"a":1}}}`},
	{"stream response", "\n {\"artifactUpdate\" :\t{\"append\":true,\"lastChunk\":false,\"taskId\":\"t\",\"contextId\":\"c\",\"artifact\":{\"artifactId\":\"a\",\"parts\":[{\"text\":\"\"}]}}} \r\n"},
	{"stream response", `{"message":{"messageId":"m","role":"ROLE_UNSPECIFIED","parts":[{"text":"hi","metadata":{"p":"q"}}]}}`},
	{"send request", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"returnImmediately":true,"historyLength":2,` +
		`"acceptedOutputModes":["text/plain"]},"metadata":{"m":[true]},"tenant":"t"}`},
	{"send request", `{"message":{"messageId":"m","parts":[{"data":[-0,1e308,1E-5,0.5,-12.5e+3,"\u00e9",{"a":1,"a":{"b":2},"\u0041":[]}]}],` +
		`"metadata":{"":{},"x":null,"k\"":[[],[null]]}},"configuration":{"historyLength":-3,"taskPushNotificationConfig":{"url":"https://x.test/"}}}`},
	{"task", `{"id":"t","status":{"state":"TASK_STATE_SUBMITTED"},"history":[{"messageId":"m","parts":[{"text":"` + strings.Repeat("ab", 600) + `"}]}]}`},
	{"answer", `{"jsonrpc":"2.0","id":"1","result":{"task":{"id":"t","status":{"state":"TASK_STATE_WORKING"}}}}`},
	{"answer", `{"jsonrpc":"2.0","id":"1","error":{"code":-32001,"message":"gone","data":[{"x":1}]}}`},
}

// notPlainCases are texts the scanner must leave to json.Unmarshal.
var notPlainCases = []struct{ what, data string }{
	{"a key in other case", `{"task":{"ID":"t"}}`},
	{"an unknown key", `{"task":{"id":"t","kind":"task"}}`},
	{"a key named twice", `{"task":{"id":"t","id":"u"}}`},
	{"a key with an escape", `{"task":{"i\u0064":"t"}}`},
	{"a null", `{"task":{"id":"t","metadata":null}}`},
	{"a null part", `{"message":{"messageId":"m","parts":[null]}}`},
	{"a number for a string", `{"task":{"id":5}}`},
	{"invalid UTF-8", "{\"task\":{\"id\":\"\xff\"}}"},
	{"a control character", "{\"task\":{\"id\":\"a\x01\"}}"},
	{"bytes after the value", `{"task":{"id":"t"}} x`},
	{"invalid metadata", `{"task":{"id":"t","metadata":{"a":}}}`},
	{"a number out of range", `{"message":{"messageId":"m","parts":[{"data":1e400}]}}`},
	{"a number with a leading zero", `{"message":{"messageId":"m","parts":[{"data":[01]}]}}`},
	{"a number cut short", `{"message":{"messageId":"m","parts":[{"data":[1.]}]}}`},
	{"metadata not an object", `{"message":{"messageId":"m","metadata":[]}}`},
	{"a null data part", `{"message":{"messageId":"m","parts":[{"data":null,"text":"x"}]}}`},
	{"a misspelt null", `{"task":{"id":"t","metadata":{"a":nope}}}`},
	{"an unfinished text", `{"task":{"id":"t"`},
	{"an unfinished value", `{"task":{"id":"t","metadata":{"a":"x`},
	{"an unfinished escape", `{"task":{"id":"t","metadata":{"a":"x\`},
	{"an unfinished timestamp", `{"task":{"id":"t","status":{"timestamp":"x\`},
	{"a key with a quote", `{"task":{"i\"d":"t"}}`},
	{"not an object", `[]`},
}

// scanAll runs the scanner of what on data: whether it decoded it, what
// into, and what json.Unmarshal makes of the same text in the same struct.
func scanAll(what string, data []byte) (ok bool, got, want any, wantErr error) {
	data = data[:len(data):len(data)] // nothing to read past the end by mistake
	switch what {
	case "stream response":
		return scanWith(scanStreamResponse, data)
	case "send request":
		return scanWith(scanSendMessageRequest, data)
	case "task":
		return scanWith(scanTask, data)
	case "answer":
		return scanWith(scanAnswer, data)
	}
	panic(what)
}

// scanWith runs scan on data into a T, and json.Unmarshal into another.
func scanWith[T any](scan func([]byte, *T) bool, data []byte) (ok bool, got, want any, wantErr error) {
	var g, w T
	ok = scan(data, &g)
	return ok, &g, &w, json.Unmarshal(data, &w)
}

// sameAsEncodingJSON checks that what the scanner decoded, json.Unmarshal
// decodes alike.
func sameAsEncodingJSON(t *testing.T, what string, data []byte) bool {
	t.Helper()
	ok, got, want, wantErr := scanAll(what, data)
	if !ok {
		return false
	}
	if wantErr != nil {
		t.Fatalf("%s %q: scanned, but encoding/json says %v", what, data, wantErr)
	}
	utcTimes(reflect.ValueOf(got).Elem())
	utcTimes(reflect.ValueOf(want).Elem())
	if !reflect.DeepEqual(got, want) {
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		t.Fatalf("%s %q:\n got %s\nwant %s", what, data, gb, wb)
	}
	return true
}

// TestScannerTakesPlainJSON: the plainest texts are decoded by the
// scanner, as json.Unmarshal decodes them; others are left to it.
func TestScannerTakesPlainJSON(t *testing.T) {
	for _, c := range plainCases {
		if !sameAsEncodingJSON(t, c.what, []byte(c.data)) {
			t.Errorf("%s %s: left to json.Unmarshal, want it scanned", c.what, c.data)
		}
	}
	for _, c := range notPlainCases {
		if ok, _, _, _ := scanAll("stream response", []byte(c.data)); ok {
			t.Errorf("%s (%s): scanned, want it left to json.Unmarshal", c.what, c.data)
		}
	}
	for _, data := range []string{`{"configuration":{"historyLength":2.0}}`, `{"configuration":{"historyLength":1e2}}`,
		`{"configuration":{"historyLength":99999999999999999999}}`, `{"configuration":{"returnImmediately":"yes"}}`} {
		if ok, _, _, _ := scanAll("send request", []byte(data)); ok {
			t.Errorf("send request %s: scanned, want it left to json.Unmarshal", data)
		}
	}
	for _, data := range []string{`{"jsonrpc":"2.0","id":"1","error":{"code":}}`, `{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t"}}}`,
		`{"jsonrpc":"2.0","id":"1","error":null}`} {
		if ok, _, _, _ := scanAll("answer", []byte(data)); ok {
			t.Errorf("answer %s: scanned, want it left to json.Unmarshal", data)
		}
	}
}

// TestScannerTakesTheSDKsJSON: what the SDK writes of a task whose every
// part has content is of the plainest form.
func TestScannerTakesTheSDKsJSON(t *testing.T) {
	task := sampleTask()
	task.History = task.History[:1]
	task.Artifacts = task.Artifacts[:1]
	task.History[0].Parts = task.History[0].Parts[:1]
	at := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	task.Status.Timestamp = &at
	data, err := json.Marshal(a2a.StreamResponse{Event: task})
	if err != nil {
		t.Fatal(err)
	}
	if !sameAsEncodingJSON(t, "stream response", data) {
		t.Fatalf("%s: left to json.Unmarshal", data)
	}
}

// FuzzScannerAsEncodingJSON: whatever the scanner decodes, json.Unmarshal
// decodes into the same plain structs alike.
func FuzzScannerAsEncodingJSON(f *testing.F) {
	for _, c := range plainCases {
		f.Add([]byte(c.data))
	}
	for _, c := range notPlainCases {
		f.Add([]byte(c.data))
	}
	for _, c := range decodeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, what := range []string{"stream response", "send request", "task", "answer"} {
			sameAsEncodingJSON(t, what, data)
		}
	})
}

// BenchmarkScanAnswer decodes a front's upstream answer: a completed task
// with a 1 KiB message in its history and its artifact.
func BenchmarkScanAnswer(b *testing.B) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 23)[:1024]
	data := []byte(`{"jsonrpc":"2.0","id":"1","result":{"task":{"id":"up-task","contextId":"up-ctx","status":{"state":"TASK_STATE_COMPLETED",` +
		`"timestamp":"2026-12-05T10:00:00Z"},"artifacts":[{"artifactId":"a-1","parts":[{"text":"` + text + `"}]}],` +
		`"history":[{"messageId":"m-1","role":"ROLE_USER","taskId":"up-task","contextId":"up-ctx","parts":[{"text":"` + text + `"}]}]}}}`)
	b.ReportAllocs()
	for b.Loop() {
		var sr a2a.StreamResponse
		if _, ok := UnmarshalStreamAnswer(data, &sr); !ok {
			b.Fatal("not decided")
		}
	}
}

// TestScannerLeavesDeepValues: a value nested nearly as deep as
// encoding/json allows is left to it, which counts the levels around it.
func TestScannerLeavesDeepValues(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, c := range []struct {
		depth   int
		scanned bool
	}{{maxValueDepth, true}, {maxValueDepth + 1, false}, {9998, false}} {
		data := []byte(`{"message":{"messageId":"m","parts":[{"data":` + deep(c.depth) + `}]}}`)
		ok, _, _, wantErr := scanAll("stream response", data)
		if ok != c.scanned {
			t.Errorf("data nested %d deep: scanned %v, want %v", c.depth, ok, c.scanned)
		}
		if ok {
			sameAsEncodingJSON(t, "stream response", data)
		} else if c.depth == 9998 && wantErr == nil {
			t.Errorf("data nested %d deep: encoding/json decoded it; the case is meant to be past its limit", c.depth)
		}
	}
	// A push configuration is decoded alone, by json.Unmarshal, which
	// would not count the request's levels around it.
	data := []byte(`{"configuration":{"taskPushNotificationConfig":{"url":"https://x.test/","x":` + deep(9998) + `}}}`)
	if ok, _, _, _ := scanAll("send request", data); ok {
		t.Errorf("a push configuration nested 9998 deep: scanned, want it left to json.Unmarshal")
	}
}

// TestScannedErrorIsACopy: an answer's error member is its own bytes, not
// the answer's, which the caller may reuse.
func TestScannedErrorIsACopy(t *testing.T) {
	data := []byte(`{"jsonrpc":"2.0","id":"1","error":{"code":-32001,"message":"gone"}}`)
	var w rpcStreamAnswer
	if !scanAnswer(data, &w) {
		t.Fatal("not scanned")
	}
	clear(data)
	if string(w.Error) != `{"code":-32001,"message":"gone"}` {
		t.Fatalf("error %q after the answer's bytes were reused", w.Error)
	}
}
