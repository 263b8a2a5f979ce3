package hub

import (
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/connproto"
)

func TestFrameQueueOrderBoundAndWake(t *testing.T) {
	pushes := 0
	q := newFrameQueue(3, func() { pushes++ })
	if _, ok := q.pop(); ok {
		t.Fatal("an empty queue gave a frame")
	}
	for _, s := range []string{"a", "b", "c"} {
		if !q.push([]byte(s)) {
			t.Fatalf("push %s refused below the bound", s)
		}
	}
	if q.push([]byte("d")) {
		t.Fatal("push beyond the bound accepted")
	}
	if pushes != 3 {
		t.Fatalf("pushed called %d times for 3 frames queued", pushes)
	}
	for _, want := range []string{"a", "b", "c"} {
		b, ok := q.pop()
		if !ok || string(b) != want {
			t.Fatalf("pop: got %q %v, want %q", b, ok, want)
		}
	}
	if q.frames != nil {
		t.Error("an emptied queue keeps its array")
	}
	if !q.push([]byte("e")) {
		t.Fatal("push refused after the queue emptied")
	}
}

// TestFrameQueuePopBatch: the session notes queued in a row leave as one
// batch, in order, when the agent reads batches; an answer goes first and
// alone, a session message that is not a note ends a batch, and a batch
// stays within connproto.MaxSessionBatchBytes.
func TestFrameQueuePopBatch(t *testing.T) {
	note := func(seq int, pad int) []byte {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s","seq":%d,"text":"%s"}}`, seq, strings.Repeat("x", pad))
	}
	ack := []byte(`{"jsonrpc":"2.0","method":"SessionAck","params":{"sessionId":"s","seq":3}}`)
	reply := []byte(`{"jsonrpc":"2.0","id":"x","result":{}}`)
	for _, batches := range []bool{false, true} {
		q := newFrameQueue(8, func() {})
		q.pushSession(note(1, 1))
		if n := q.popBatch(nil); len(n) != 0 {
			t.Fatalf("the sessions' frames left before hello: %q", n)
		}
		q.openSessions(batches)
		q.pushSession(note(2, 1))
		q.pushSession(ack)
		q.push([]byte("answer"))
		q.pushSession(reply)
		q.pushSession(note(3, 1))
		want := [][]string{{"answer"}, {string(note(1, 1)), string(note(2, 1)), string(ack)}, {string(reply)}, {string(note(3, 1))}}
		if !batches {
			want = [][]string{{"answer"}, {string(note(1, 1))}, {string(note(2, 1))}, {string(ack)}, {string(reply)}, {string(note(3, 1))}}
		}
		for i, w := range want {
			got := q.popBatch(nil)
			if len(got) != len(w) {
				t.Fatalf("batches %v, pop %d: %q, want %q", batches, i, got, w)
			}
			for j := range w {
				if string(got[j]) != w[j] {
					t.Fatalf("batches %v, pop %d: %q, want %q", batches, i, got, w)
				}
			}
		}
		if n := q.popBatch(nil); len(n) != 0 {
			t.Fatalf("an emptied queue gave %q", n)
		}
	}

	// The bound: notes of 100 KiB go two to a batch.
	q := newFrameQueue(8, func() {})
	q.openSessions(true)
	big := 100 << 10
	for seq := 1; seq <= 5; seq++ {
		q.pushSession(note(seq, big))
	}
	for _, n := range []int{2, 2, 1} {
		got := q.popBatch(nil)
		size := 1
		for _, b := range got {
			size += len(b) + 1
		}
		if len(got) != n || size > connproto.MaxSessionBatchBytes {
			t.Fatalf("a batch of %d notes, %d bytes; want %d notes within %d", len(got), size, n, connproto.MaxSessionBatchBytes)
		}
	}
}

// TestFrameQueueSessionBound: session frames are refused once what they
// cost would pass sessionMax, and what leaves the queue, one by one or in
// batches, makes room again.
func TestFrameQueueSessionBound(t *testing.T) {
	q := newFrameQueue(8, func() {})
	note := []byte(`{"jsonrpc":"2.0","method":"SessionFrame","params":{"sessionId":"s","seq":1,"text":"x"}}`)
	q.sessionMax = 10 * frameCost(note)
	q.openSessions(true)
	for i := range 10 {
		if !q.pushSession(note) {
			t.Fatalf("session frame %d refused below the bound", i)
		}
	}
	if q.pushSession(note) {
		t.Fatal("a session frame past the bound was queued")
	}
	if !q.push([]byte("answer")) {
		t.Fatal("an answer was refused for the sessions' bound")
	}
	if b, ok := q.pop(); !ok || string(b) != "answer" {
		t.Fatalf("pop: %q", b)
	}
	if b, ok := q.pop(); !ok || string(b) != string(note) {
		t.Fatalf("pop: %q", b)
	}
	if !q.pushSession(note) {
		t.Fatal("a session frame was refused after one left")
	}
	if got := q.popBatch(nil); len(got) != 10 {
		t.Fatalf("a batch of %d notes, want 10", len(got))
	}
	if q.sessionCost != 0 {
		t.Fatalf("an empty queue's session frames cost %d", q.sessionCost)
	}
}
