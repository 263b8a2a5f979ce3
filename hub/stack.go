package hub

// A connection lives for days in two goroutines that mostly wait: its
// reader and its writer. A goroutine's stack grows to the deepest call it
// ever made and shrinks back only slowly, and the store's calls are deep
// (SQLite's engine runs as Go code with large frames): run in those two
// goroutines, they left every idle connection holding tens of KiB of stack.
// The work each frame or hint brings runs instead on a goroutine of its
// own, whose stack goes back to the runtime when the work is done.

// onFreshStack runs fn on a new goroutine and waits for it. A panic in fn
// is raised again in the caller.
func onFreshStack(fn func()) {
	var p any
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { p = recover() }()
		fn()
	}()
	<-done
	if p != nil {
		panic(p)
	}
}

// onFreshStackErr is onFreshStack for a function that returns an error.
func onFreshStackErr(fn func() error) error {
	var err error
	onFreshStack(func() { err = fn() })
	return err
}
