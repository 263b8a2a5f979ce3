package connproto_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/switchboard-dev/switchboard/connproto"
)

var sessionFrameSeeds = []string{
	`{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s-1","seq":1,"text":"hello"}}`,
	`{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s-1","seq":18446744073709551615,"text":"\u00e9\n\"q\""}}`,
	` { "params" : { "data" : {"a": [1, 2.5e3, "x]}"], "b": null} , "seq" : 7 , "sessionId" : "s" } , "method" : "SessionFrame" , "jsonrpc" : "2.0" } `,
	`{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s","seq":2,"data":null}}`,
	`{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s","seq":2,"data":"x","text":"y"}}`,
	`{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s","seq":2,"text":"y"},"id":1}`,
	`{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s","seq":18446744073709551616,"text":"y"}}`,
	`{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s","seq":01,"text":"y"}}`,
	`{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s","seq":1.0,"text":"y"}}`,
	`{"jsonrpc":"2.0","method":"SessionFrame","params":{"SessionId":"s","seq":1,"text":"y"}}`,
	`{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s","seq":1,"text":"\x01"}}`,
	`{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s","seq":1,"data":[1,}]}}`,
	`{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s","seq":1,"text":"y"}} x`,
	`{"jsonrpc":"2.0","jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s","seq":1,"text":"y"}}`,
	`{"jsonrpc":"2.0","method":"SessionAck","params":{"sessionId":"s","seq":1}}`,
	`{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s","seq":1,"data":tru}}`,
	`{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s","seq":1,"data":-}}`,
	`{}`, `[]`, ``, `{"jsonrpc":"2.0"`,
	"{\"jsonrpc\":\"2.0\",\"method\":\"SessionFrame\",\"params\":{\"sessionId\":\"s\",\"seq\":1,\"text\":\"0123456789abcdef\x1f0123456789\"}}",
	// Taken, as encoding/json takes them: a lone surrogate, bytes that are
	// not UTF-8 (the receiver's decoder replaces both).
	`{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s","seq":1,"text":"\ud800"}}`,
	"{\"jsonrpc\":\"2.0\",\"method\":\"SessionFrame\",\"params\":{\"sessionId\":\"s\",\"seq\":1,\"text\":\"\xff\xfe\"}}",
	// Long text, read eight bytes at a time up to the escapes.
	`{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s","seq":1,"text":"0123456789abcdef\"0123456\\789abcdefé\u00e90123456789"}}`,
}

// refused is how many seeds from the fourth on ParseSessionFrame refuses.
const refused = 19

func TestParseSessionFrame(t *testing.T) {
	p, ok := connproto.ParseSessionFrame([]byte(sessionFrameSeeds[0]))
	if !ok || p.SessionID != "s-1" || p.Seq != 1 || string(p.Text) != `"hello"` || p.Data != nil {
		t.Fatalf("the usual form: %+v %v", p, ok)
	}
	p, ok = connproto.ParseSessionFrame([]byte(sessionFrameSeeds[2]))
	if !ok || p.Seq != 7 || string(p.Data) != `{"a": [1, 2.5e3, "x]}"], "b": null}` {
		t.Fatalf("keys in another order, with whitespace: %+v %v", p, ok)
	}
	for _, s := range sessionFrameSeeds[3 : 3+refused] {
		if _, ok := connproto.ParseSessionFrame([]byte(s)); ok {
			t.Errorf("took %s", s)
		}
	}
	for _, s := range sessionFrameSeeds[3+refused:] {
		if _, ok := connproto.ParseSessionFrame([]byte(s)); !ok {
			t.Errorf("refused %s", s)
		}
	}
}

// FuzzParseSessionFrame: whatever ParseSessionFrame takes, encoding/json
// reads the same way (the hub and the connector fall back to it for the
// rest).
func FuzzParseSessionFrame(f *testing.F) {
	for _, s := range sessionFrameSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, ok := connproto.ParseSessionFrame(data)
		if !ok {
			return
		}
		var fr connproto.Frame
		if err := json.Unmarshal(data, &fr); err != nil {
			t.Fatalf("took %q, which encoding/json refuses: %v", data, err)
		}
		if fr.JSONRPC != "2.0" || fr.Method != connproto.MethodSessionFrame || len(fr.ID) != 0 || fr.Result != nil || fr.Error != nil {
			t.Fatalf("took %q, which encoding/json reads as %+v", data, fr)
		}
		var want connproto.SessionFrameParams
		if err := json.Unmarshal(fr.Params, &want); err != nil {
			t.Fatalf("took %q, whose params encoding/json refuses: %v", data, err)
		}
		if p.SessionID != want.SessionID || p.Seq != want.Seq || !bytes.Equal(p.Text, want.Text) || !bytes.Equal(p.Data, want.Data) {
			t.Fatalf("%q: got %+v, encoding/json %+v", data, p, want)
		}
		if p.Text != nil {
			var s string
			if err := json.Unmarshal(p.Text, &s); err != nil {
				t.Fatalf("%q: text %q is not a JSON string: %v", data, p.Text, err)
			}
		}
	})
}
