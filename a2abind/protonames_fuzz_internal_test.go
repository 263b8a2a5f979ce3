package a2abind

import (
	"encoding/json"
	"testing"
)

// protoNameSeeds are bodies with proto names, JSON names, both, free-form
// fields and bodies that are not JSON.
var protoNameSeeds = []string{
	`{"message":{"message_id":"m1","context_id":"c1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`,
	`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi","metadata":{"my_key":1}}]},"metadata":{"trace_id":"t"}}`,
	`{"message":{"message_id":"x","messageId":"m1","parts":[{"data":{"a_b":{"c_d":2}}}]},"configuration":{"return_immediately":true,"history_length":0}}`,
	`{"message":`, `"a_b"`, `[{"a_b":1}]`, `{"_":1,"__x":2,"a__b":3}`, `{"a":"x_y"} {"b_c":1}`, ``,
}

// TestJSONFieldNames: proto names become JSON names, the JSON name wins
// over a proto name beside it, and free-form fields keep their keys.
func TestJSONFieldNames(t *testing.T) {
	got := map[string]any{}
	if err := json.Unmarshal(jsonFieldNames([]byte(protoNameSeeds[2])), &got); err != nil {
		t.Fatal(err)
	}
	msg := got["message"].(map[string]any)
	if msg["messageId"] != "m1" || msg["message_id"] != "x" {
		t.Errorf("message: %v", msg)
	}
	if data := msg["parts"].([]any)[0].(map[string]any)["data"].(map[string]any); data["a_b"] == nil {
		t.Errorf("a part's data was renamed: %v", data)
	}
	if cfg := got["configuration"].(map[string]any); cfg["returnImmediately"] != true || cfg["historyLength"] == nil {
		t.Errorf("configuration: %v", cfg)
	}
	for _, same := range []string{protoNameSeeds[3], `{"a":"x_y"}`, `{"a":"x_y" , "b":1}`} {
		if out := jsonFieldNames([]byte(same)); string(out) != same {
			t.Errorf("%s became %s", same, out)
		}
	}
}

func FuzzJSONFieldNames(f *testing.F) {
	for _, s := range protoNameSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		out := jsonFieldNames(body)
		if json.Valid(body) && !json.Valid(out) {
			t.Fatalf("%q became %q, not JSON", body, out)
		}
	})
}
