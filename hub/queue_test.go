package hub

import "testing"

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
