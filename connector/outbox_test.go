package connector

import (
	"testing"
)

func callIDs(cs []*call) []string {
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.id
	}
	return ids
}

func TestOutboxWritesEachCallOncePerSession(t *testing.T) {
	o := newOutbox()
	add := func() *call {
		c, err := o.add("ReportTask", map[string]string{"x": "y"}, "t", "")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c1, c2, c3 := add(), add(), add()
	if got := callIDs(o.unsent(1)); len(got) != 3 || got[0] != c1.id || got[1] != c2.id || got[2] != c3.id {
		t.Fatalf("first session: %v, want c1 c2 c3", got)
	}
	if got := o.unsent(1); len(got) != 0 {
		t.Fatalf("the same session again: %v, want nothing", callIDs(got))
	}
	c4 := add()
	if got := callIDs(o.unsent(1)); len(got) != 1 || got[0] != c4.id {
		t.Fatalf("after a new call: %v, want c4", got)
	}
	o.resolve(c2.id, callResult{})
	o.remove(c3)
	c5 := add()
	o.remove(c5) // removed before it was written: never written
	// A new connection writes again every call still waiting, in order.
	if got := callIDs(o.unsent(2)); len(got) != 2 || got[0] != c1.id || got[1] != c4.id {
		t.Fatalf("next session: %v, want c1 c4", got)
	}
	if got := o.unsent(2); len(got) != 0 {
		t.Fatalf("next session again: %v, want nothing", callIDs(got))
	}
}

func TestOutboxLetsGoOfCallsRemovedUnwritten(t *testing.T) {
	o := newOutbox()
	for range 1000 {
		c, err := o.add("ReportTask", map[string]string{"x": "y"}, "t", "")
		if err != nil {
			t.Fatal(err)
		}
		o.remove(c) // its caller gave up while no connection was up
	}
	if n := len(o.unwritten); n > 16 {
		t.Fatalf("%d calls removed before they were written are still held", n)
	}
	if got := o.unsent(1); len(got) != 0 {
		t.Fatalf("removed calls written: %v", callIDs(got))
	}
}
