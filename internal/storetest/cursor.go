package storetest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

var cursorTests = map[string]func(*testing.T, Store){
	"TaskFindOldestFirstCursor": testTaskFindOldestFirstCursor,
}

// testTaskFindOldestFirstCursor pages through an agent's tasks oldest
// first, two at a time, each page after the last task of the one before
// (its CreatedAt and id): the pages hold every task once, in the order of
// one listing, also among tasks created at the same moment, and a task
// created while paging comes on a later page, at the end.
func testTaskFindOldestFirstCursor(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "acme"), "g")
	other := newAgent(t, s, newAccount(t, s, "other"), "o")
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var n int
	create := func(agent *switchboard.Agent, at time.Time, state a2a.TaskState) {
		t.Helper()
		n++
		task := newTask(agent, "bob", "c", fmt.Sprint("m-", n), at)
		task.A2A.Status.State = state
		_, err := s.CreateTask(ctx, task, created(task, nil))
		must(t, err)
	}
	// Three tasks share each moment: their ids decide their order.
	for i := range 9 {
		state := a2a.TaskStateSubmitted
		if i%3 == 1 {
			state = a2a.TaskStateCompleted
		} else if i%3 == 2 {
			state = a2a.TaskStateWorking
		}
		create(g, base.Add(time.Duration(i/3)*time.Second), state)
		create(other, base, a2a.TaskStateSubmitted)
	}
	page := func(f switchboard.TaskFilter, after *switchboard.Task) []*switchboard.Task {
		t.Helper()
		f.AgentID, f.OldestFirst, f.Limit, f.NoTotal = &g.ID, true, 2, true
		if after != nil {
			f.After = &switchboard.TaskCursor{CreatedAt: after.CreatedAt, ID: after.ID()}
		}
		tasks, _, err := s.FindTasks(ctx, f)
		must(t, err)
		return tasks
	}
	ids := func(tasks []*switchboard.Task) []a2a.TaskID {
		out := make([]a2a.TaskID, len(tasks))
		for i, task := range tasks {
			out[i] = task.ID()
		}
		return out
	}
	for name, f := range map[string]switchboard.TaskFilter{
		"all":     {},
		"waiting": {States: []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking}},
	} {
		all := f
		all.AgentID, all.OldestFirst, all.NoTotal = &g.ID, true, true
		whole, _, err := s.FindTasks(ctx, all)
		must(t, err)
		var paged []*switchboard.Task
		var last *switchboard.Task
		for pages := 0; ; pages++ {
			if pages == 3 {
				// A task created while paging: later than every other.
				create(g, base.Add(time.Minute+time.Duration(n)*time.Second), a2a.TaskStateSubmitted)
			}
			p := page(f, last)
			if len(p) == 0 {
				break
			}
			paged = append(paged, p...)
			last = p[len(p)-1]
			if pages > 20 {
				t.Fatalf("%s: more than 20 pages of 2 for %d tasks", name, len(whole))
			}
		}
		want := ids(whole)
		want = append(want, ids(paged[len(whole):])...)
		if got := ids(paged); !slices.Equal(got, want) || len(paged) != len(whole)+1 {
			t.Fatalf("%s: pages hold %v, want the listing %v and the task created while paging", name, got, ids(whole))
		}
		sorted := slices.IsSortedFunc(paged, func(a, b *switchboard.Task) int {
			if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
				return c
			}
			return cmp.Compare(a.ID(), b.ID())
		})
		if !sorted {
			t.Fatalf("%s: pages not in creation order, then id: %v", name, ids(paged))
		}
	}
}
