package hub

// A connection lives for days in a goroutine that mostly waits: its reader.
// A goroutine's stack grows to the deepest call it ever made and shrinks
// back only slowly, and the store's calls are deep (SQLite's engine runs as
// Go code with large frames): run in the reader, they left every idle
// connection holding tens of KiB of stack. The work each frame brings runs
// instead on a goroutine of its own, whose stack goes back to the runtime
// when the work is done (the writer's work does so too: writer.go).

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
