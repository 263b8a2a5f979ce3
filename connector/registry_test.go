package connector

import (
	"fmt"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// registryWithClock returns a registry whose clock is *now.
func registryWithClock(now *time.Time) *registry {
	r := newRegistry()
	r.now = func() time.Time { return *now }
	return r
}

func workFor(task, message string) *Work {
	return &Work{TaskID: a2a.TaskID(task), MessageID: message, ContextID: "ctx-" + task}
}

// handle accepts w and finishes it, as a handler that ran would.
func handle(t *testing.T, r *registry, w *Work) {
	t.Helper()
	if _, dup := r.accept(w, func(error) {}); dup {
		t.Fatalf("task %s message %s: a duplicate at its first offer", w.TaskID, w.MessageID)
	}
	r.finish(w)
}

func TestRegistryRecognisesRedeliveriesForItsRetention(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	r := registryWithClock(&now)
	handle(t, r, workFor("t1", "m1"))
	r.confirm("t1", a2a.TaskStateCompleted)

	now = now.Add(retention - time.Second)
	final, dup := r.accept(workFor("t1", "m1"), func(error) {})
	if !dup || final != a2a.TaskStateCompleted {
		t.Fatalf("redelivery within retention: dup %v final %q, want a duplicate of a completed task", dup, final)
	}

	// Another task's activity prunes t1 once its retention has passed.
	now = now.Add(2 * time.Second)
	handle(t, r, workFor("t2", "m1"))
	if _, dup := r.accept(workFor("t1", "m1"), func(error) {}); dup {
		t.Fatal("redelivery after retention: still a duplicate; the task should have been forgotten")
	}
}

func TestRegistryKeepsTasksWithRunningWorks(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	r := registryWithClock(&now)
	running := workFor("busy", "m1")
	if _, dup := r.accept(running, func(error) {}); dup {
		t.Fatal("first offer is a duplicate")
	}
	// The task was idle once, then got new work: it must not be pruned
	// while that work runs, however old its first idleness.
	handle(t, r, workFor("again", "m1"))
	again := workFor("again", "m2")
	if _, dup := r.accept(again, func(error) {}); dup {
		t.Fatal("second message of a task: a duplicate")
	}
	now = now.Add(2 * retention)
	handle(t, r, workFor("other", "m1"))
	if got := r.holding(); len(got) != 2 {
		t.Fatalf("holding %v, want busy and again", got)
	}
	if _, dup := r.accept(workFor("again", "m1"), func(error) {}); !dup {
		t.Fatal("a task with a running work forgot its earlier message")
	}
	r.finish(again)
	r.finish(again) // finishing twice changes nothing
	if n := r.idle.Len(); n != 2 {
		t.Fatalf("%d idle tasks, want 2 (other, again)", n)
	}
	if got := r.holding(); len(got) != 1 || got[0] != "busy" {
		t.Fatalf("holding %v after again's work ended, want [busy]", got)
	}
}

func TestRegistryForgetsTheOldestBeyondItsBound(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	r := registryWithClock(&now)
	for i := range maxIdleTasks + 10 {
		handle(t, r, workFor(fmt.Sprint("t", i), "m"))
	}
	if len(r.tasks) != maxIdleTasks || r.idle.Len() != maxIdleTasks {
		t.Fatalf("remembers %d tasks (%d idle), want the bound, %d", len(r.tasks), r.idle.Len(), maxIdleTasks)
	}
	if _, dup := r.accept(workFor("t9", "m"), func(error) {}); dup {
		t.Fatal("one of the oldest tasks is still remembered")
	}
	if _, dup := r.accept(workFor(fmt.Sprint("t", maxIdleTasks+9), "m"), func(error) {}); !dup {
		t.Fatal("the newest task was forgotten")
	}
}

func TestRegistryForgetMakesTheMessageNewAgain(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	r := registryWithClock(&now)
	w := workFor("t1", "m1")
	if _, dup := r.accept(w, func(error) {}); dup {
		t.Fatal("first offer is a duplicate")
	}
	r.forget(w)
	if _, dup := r.accept(workFor("t1", "m1"), func(error) {}); dup {
		t.Fatal("a refused message is still a duplicate")
	}
}

// BenchmarkRegistryAccept measures an offer accepted and finished while
// the client remembers many finished tasks: its cost must not grow with
// them (it read every remembered task before).
func BenchmarkRegistryAccept(b *testing.B) {
	for _, remembered := range []int{1_000, 100_000} {
		b.Run(fmt.Sprint("remembered=", remembered), func(b *testing.B) {
			r := newRegistry()
			for i := range remembered {
				w := workFor(fmt.Sprint("old", i), "m")
				r.accept(w, func(error) {})
				r.finish(w)
			}
			works := make([]*Work, 1024)
			for i := range works {
				works[i] = workFor(fmt.Sprint("new", i), "m")
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				w := works[i%len(works)]
				if _, dup := r.accept(w, func(error) {}); !dup {
					r.finish(w)
				}
			}
		})
	}
}
