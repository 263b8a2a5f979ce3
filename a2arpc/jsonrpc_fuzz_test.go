package a2arpc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzDecodeEnvelope checks the JSON-RPC envelope decoder on arbitrary
// bodies: it never panics, and whatever it accepts is a well-formed request
// whose id can be echoed and whose params are an object or refused.
func FuzzDecodeEnvelope(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`,
		`{"jsonrpc":"2.0","id":"a","method":"tasks/get","params":{"id":"t"}}`,
		`{"jsonrpc":"2.0","id":null,"method":"GetTask"}`,
		`{"jsonrpc":"2.0","id":{"x":1},"method":"GetTask"}`,
		`{"jsonrpc":"2.0","id":1.5e3,"method":"GetTask","params":[1]}`,
		`[{"jsonrpc":"2.0","id":1,"method":"GetTask"}]`,
		`{"jsonrpc":"2.0","method":"GetTask","params":null}`,
		`{"jsonrpc":"1.0","id":1,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":""}`,
		`"just a string"`, `null`, `{`, ``, `{"id":-0,"jsonrpc":"2.0","method":"m","params":{}}`,
		` {"jsonrpc" : "2.0" , "id" : "x\"y" , "method" : "SendMessage" , "params" : {"a":[1,{"b":"}"}]} } `,
		`{"jsonrpc":"2.0","id":1,"method":"Send\u004dessage","params":{}}`, `{"jsonrpc":"2.0","id":1,"me\u0074hod":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"mÿ","params":{}}`, `{"jsonrpc":"2.0","id":1,"id":2,"method":"a","method":"b","params":[],"params":{}}`,
		`{"jsonrpc":"2.0","id":true,"method":"m"}`, `{"jsonrpc":"2.0","method":"m","params":"s","extra":null}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		// What the scan takes, it takes as the decoder does.
		if scanned, ok := scanEnvelope(body); ok {
			decoded, derr := decodeEnvelope(body)
			if derr != nil || !bytes.Equal(scanned.ID, decoded.ID) || scanned.Method != decoded.Method || !bytes.Equal(scanned.Params, decoded.Params) {
				t.Fatalf("%q: scanned %+v, decoded %+v (%v)", body, scanned, decoded, derr)
			}
		}
		req, rerr := DecodeEnvelope(body)
		if req == nil || len(req.ID) == 0 || !ValidID(req.ID) {
			t.Fatalf("unusable id %q", req.ID)
		}
		// A parse error is exactly a body that is not JSON; a batch, a
		// JSON array.
		trimmed := bytes.TrimSpace(body)
		valid := json.Valid(trimmed)
		if parseErr := rerr != nil && rerr.Code == ParseError; parseErr == valid {
			t.Fatalf("%q: parse error %v, but valid JSON %v", body, parseErr, valid)
		}
		if batch := rerr != nil && strings.Contains(rerr.Message, "batch"); batch != (valid && trimmed[0] == '[') {
			t.Fatalf("%q: refused as a batch: %v", body, batch)
		}
		if rerr != nil {
			if rerr.Code > -32600 || rerr.Code < -32700 {
				t.Fatalf("envelope error with code %d", rerr.Code)
			}
			out, err := json.Marshal(Failure{JSONRPC: "2.0", ID: req.ID, Error: rerr})
			if err != nil || !json.Valid(out) {
				t.Fatalf("error answer is not JSON: %v", err)
			}
			return
		}
		if req.Method == "" {
			t.Fatal("accepted a request without a method")
		}
		if perr := CheckParams(req); perr == nil {
			p := bytes.TrimSpace(req.Params)
			var obj map[string]json.RawMessage
			if json.Unmarshal(p, &obj) != nil {
				t.Fatalf("accepted params that are not an object: %q", p)
			}
		}
	})
}

// TestScanEnvelopeTakesTheCommonRequest: a plain request is taken by the
// scan, its params a part of the body (not copied), and one whose method
// is written with an escape is left to the decoder, which reads it.
func TestScanEnvelopeTakesTheCommonRequest(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":"req-1","method":"SendMessage","params":{"message":{"messageId":"m","parts":[{"text":"hi"}]}}}`)
	req, ok := scanEnvelope(body)
	if !ok || string(req.ID) != `"req-1"` || req.Method != "SendMessage" || !bytes.HasPrefix(req.Params, []byte(`{"message"`)) ||
		&req.Params[0] != &body[bytes.Index(body, []byte(`{"message"`))] {
		t.Fatalf("scanEnvelope: %+v, %v", req, ok)
	}
	escaped := []byte(`{"jsonrpc":"2.0","id":1,"method":"Send\u004dessage"}`)
	if _, ok := scanEnvelope(escaped); ok {
		t.Fatal("a method with an escape was taken by the scan")
	}
	if req, err := DecodeEnvelope(escaped); err != nil || req.Method != "SendMessage" {
		t.Fatalf("DecodeEnvelope: %+v, %v", req, err)
	}
}
