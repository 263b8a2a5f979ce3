package front

import "testing"

// TestPassIDs: an upstream id is reached only by the peer, on the agent,
// that was given our id of it; the map keeps the most recently used
// entries within its bound.
func TestPassIDs(t *testing.T) {
	m := NewPassIDs(3)
	if got := m.ours("agent", "bob", kindTask, "up-1", "ours-1"); got != "ours-1" {
		t.Fatalf("ours = %q, want ours-1", got)
	}
	if got := m.ours("agent", "bob", kindTask, "up-1", "ours-other"); got != "ours-1" {
		t.Fatalf("the same upstream task again = %q, want ours-1 still", got)
	}
	if theirs, on, ok := m.theirs("agent", "bob", kindTask, "ours-1"); !ok || theirs != "up-1" || on != "agent" {
		t.Fatalf("theirs = %q %q %v", theirs, on, ok)
	}
	for what, lookup := range map[string][4]string{
		"another peer":      {"agent", "carol", "ours-1"},
		"another agent":     {"other", "bob", "ours-1"},
		"the upstream's id": {"agent", "bob", "up-1"},
	} {
		if _, _, ok := m.theirs(lookup[0], lookup[1], kindTask, lookup[2]); ok {
			t.Errorf("%s reaches the upstream's task", what)
		}
	}
	if _, _, ok := m.theirs("agent", "bob", kindContext, "ours-1"); ok {
		t.Error("a task id is taken for a context's")
	}

	// Bound: 3 entries; ours-1 used last goes after ours-2.
	m.ours("agent", "bob", kindTask, "up-2", "ours-2")
	m.ours("agent", "bob", kindTask, "up-3", "ours-3")
	m.theirs("agent", "bob", kindTask, "ours-1")
	m.ours("agent", "bob", kindTask, "up-4", "ours-4")
	if m.Len() != 3 {
		t.Fatalf("Len = %d, want 3", m.Len())
	}
	if _, _, ok := m.theirs("agent", "bob", kindTask, "ours-2"); ok {
		t.Error("the least recently used id was kept over the bound")
	}
	for _, id := range []string{"ours-1", "ours-3", "ours-4"} {
		if _, _, ok := m.theirs("agent", "bob", kindTask, id); !ok {
			t.Errorf("%s was forgotten", id)
		}
	}
	// An evicted upstream id gets a new id of ours, never the old one.
	if got := m.ours("agent", "bob", kindTask, "up-2", "ours-5"); got != "ours-5" {
		t.Errorf("an evicted upstream id came back as %q", got)
	}
	m.SetMax(1)
	if m.Len() != 1 {
		t.Fatalf("after SetMax(1), Len = %d", m.Len())
	}
	m.forgetAgent("agent")
	if m.Len() != 0 {
		t.Fatalf("after forgetAgent, Len = %d", m.Len())
	}
}
