package connproto_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/switchboard-dev/switchboard/connproto"
)

var sessionBatchSeeds = []string{
	// Taken.
	`[{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s","seq":1,"text":"a"}},{"jsonrpc":"2.0","method":"SessionAck","params":{"sessionId":"s","seq":4}},{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s","seq":2,"data":{"k":[1,"]"]}}}]`,
	" [ {\"params\":{\"seq\":7,\"sessionId\":\"t\"},\"method\":\"SessionAck\",\"jsonrpc\":\"2.0\"} ] \n",
	`[{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s","seq":1,"text":"\u00e9"}}]`,
	// Refused: the caller reads them with encoding/json.
	`[]`,
	`[{"jsonrpc":"2.0","method":"SessionAck","params":{"sessionId":"s","seq":1,"text":"x"}}]`,
	`[{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s","seq":1}}]`,
	`[{"jsonrpc":"2.0","method":"SessionResend","params":{"sessionId":"s","from":1}}]`,
	`[{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s","seq":1,"text":"a"}},]`,
	`[{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s","seq":1,"text":"a"}}`,
	`[{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s","seq":1,"text":"a"}}] x`,
	`[{"jsonrpc":"2.0","method":"SessionAck","params":{"sessionId":"s","seq":1},"id":1}]`,
	`[{"jsonrpc":"2.0","method":"SessionAck","params":{"sessionId":"","seq":1}}]`,
	`[{"jsonrpc":"2.0","method":"SessionAckX","params":{"sessionId":"s","seq":1}}]`,
	`[[{"jsonrpc":"2.0","method":"SessionAck","params":{"sessionId":"s","seq":1}}]]`,
	`{"jsonrpc":"2.0","method":"SessionAck","params":{"sessionId":"s","seq":1}}`,
	``, `[`,
}

// batchTaken is how many seeds, from the first, ParseSessionBatch takes.
const batchTaken = 3

func TestParseSessionBatch(t *testing.T) {
	notes, ok := connproto.ParseSessionBatch([]byte(sessionBatchSeeds[0]), nil)
	if !ok || len(notes) != 3 || notes[0].Ack || notes[0].Params.Seq != 1 || string(notes[0].Params.Text) != `"a"` ||
		!notes[1].Ack || notes[1].Params.Seq != 4 || notes[1].Params.SessionID != "s" ||
		notes[2].Ack || notes[2].Params.Seq != 2 || string(notes[2].Params.Data) != `{"k":[1,"]"]}` {
		t.Fatalf("a batch of three: %+v %v", notes, ok)
	}
	for i, s := range sessionBatchSeeds {
		kept := []connproto.SessionNote{{Ack: true}}
		got, ok := connproto.ParseSessionBatch([]byte(s), kept)
		if ok != (i < batchTaken) {
			t.Errorf("%s: taken %v", s, ok)
		}
		if len(got) == 0 || !got[0].Ack || (!ok && len(got) != 1) {
			t.Errorf("%s: the notes passed in became %+v", s, got)
		}
	}
	var list [][]byte
	for _, s := range []string{
		`{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s","seq":1,"text":"a"}}`,
		`{"jsonrpc":"2.0","method":"SessionAck","params":{"sessionId":"s","seq":1}}`,
	} {
		if !connproto.IsSessionNote([]byte(s)) {
			t.Errorf("not a note: %s", s)
		}
		list = append(list, []byte(s))
	}
	for _, s := range []string{`{"jsonrpc":"2.0","method":"SessionClose","params":{}}`, `{"jsonrpc":"2.0","id":"x","result":{}}`} {
		if connproto.IsSessionNote([]byte(s)) {
			t.Errorf("a note: %s", s)
		}
	}
	b := connproto.AppendSessionBatch(nil, list)
	if !connproto.IsBatch(b) || connproto.IsBatch(list[0]) {
		t.Fatal("IsBatch")
	}
	if notes, ok := connproto.ParseSessionBatch(b, nil); !ok || len(notes) != 2 || notes[0].Ack || !notes[1].Ack {
		t.Fatalf("AppendSessionBatch made %s: %+v %v", b, notes, ok)
	}
}

// FuzzParseSessionBatch: whatever ParseSessionBatch takes, encoding/json
// reads as an array of the same notifications (the hub and the connector
// fall back to it for the rest).
func FuzzParseSessionBatch(f *testing.F) {
	for _, s := range sessionBatchSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		notes, ok := connproto.ParseSessionBatch(data, nil)
		if !ok {
			return
		}
		var frames []connproto.Frame
		if err := json.Unmarshal(data, &frames); err != nil {
			t.Fatalf("took %q, which encoding/json refuses: %v", data, err)
		}
		if len(frames) != len(notes) || len(notes) == 0 {
			t.Fatalf("took %q as %d notes, encoding/json as %d", data, len(notes), len(frames))
		}
		for i, fr := range frames {
			n := notes[i]
			method := connproto.MethodSessionFrame
			if n.Ack {
				method = connproto.MethodSessionAck
			}
			if fr.JSONRPC != "2.0" || fr.Method != method || len(fr.ID) != 0 || fr.Result != nil || fr.Error != nil {
				t.Fatalf("took %q, whose note %d encoding/json reads as %+v", data, i, fr)
			}
			if n.Ack {
				var want connproto.SessionAckParams
				if err := json.Unmarshal(fr.Params, &want); err != nil || want.SessionID != n.Params.SessionID || want.Seq != n.Params.Seq {
					t.Fatalf("%q: note %d: got %+v, encoding/json %+v (%v)", data, i, n.Params, want, err)
				}
				continue
			}
			var want connproto.SessionFrameParams
			if err := json.Unmarshal(fr.Params, &want); err != nil {
				t.Fatalf("took %q, whose params encoding/json refuses: %v", data, err)
			}
			p := n.Params
			if p.SessionID != want.SessionID || p.Seq != want.Seq || !bytes.Equal(p.Text, want.Text) || !bytes.Equal(p.Data, want.Data) {
				t.Fatalf("%q: note %d: got %+v, encoding/json %+v", data, i, p, want)
			}
			if p.Text != nil {
				var s string
				if err := json.Unmarshal(p.Text, &s); err != nil {
					t.Fatalf("%q: text %q is not a JSON string: %v", data, p.Text, err)
				}
			}
		}
	})
}
