package session

import (
	"bytes"
	"testing"
)

// FuzzEnvelope reads arbitrary bytes as an envelope from another instance:
// never a panic, and what it reads writes back to the same bytes.
func FuzzEnvelope(f *testing.F) {
	for _, e := range []*envelope{
		{kind: kindOpen, from: "a", conn: "conn/i/1", s1: "b", s2: "conn/i/2", body: []byte(`{"sessionId":"s"}`)},
		{kind: kindFrame, n1: 1 << 40, n2: 65536, from: "a", body: []byte(`{"jsonrpc":"2.0"}`)},
		{kind: kindRefuse, n1: 32043, from: "b", s1: "busy"},
		{kind: kindClose, from: "a", s1: "closed", s2: "bye"},
		{kind: kindAttach, n1: 7, n2: 5, from: "a", conn: "c"},
	} {
		f.Add(e.encode())
	}
	f.Add([]byte{})
	f.Add([]byte{1})
	f.Add([]byte{1, 4, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte{2, 1})
	f.Add([]byte{1, 1, 0, 0, 0x80, 0x80, 0x04})
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := decodeEnvelope(data)
		if err != nil {
			return
		}
		if e.kind == 0 || e.kind >= kindLimit {
			t.Fatalf("read kind %d", e.kind)
		}
		for _, s := range []string{e.from, e.conn, e.s1, e.s2} {
			if len(s) > maxEnvelopeString {
				t.Fatalf("a string of %d bytes", len(s))
			}
		}
		again, err := decodeEnvelope(e.encode())
		if err != nil {
			t.Fatalf("what it read does not read again: %v", err)
		}
		if again.kind != e.kind || again.n1 != e.n1 || again.n2 != e.n2 || again.from != e.from || again.conn != e.conn ||
			again.s1 != e.s1 || again.s2 != e.s2 || !bytes.Equal(again.body, e.body) {
			t.Fatalf("round trip: %+v, then %+v", e, again)
		}
	})
}
