package sqlstore

// StopCheckpoints stops db's checkpointer (SQLite), so that the WAL only
// grows until the caller checkpoints it: BenchmarkTaskWrites counts the
// frames a task appends.
func StopCheckpoints(db *DB) {
	if c := db.checkpoints; c != nil {
		c.stopOnce.Do(func() { close(c.stop) })
		<-c.done
	}
}
