package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/switchboard-dev/switchboard"
)

// SQLite has one writer, and a commit costs far more than the small writes
// the service makes (each commit appends every page it changed to the WAL,
// one system call a page). The groupCommitter runs the write transactions
// that wait while one commits as one transaction: each in a savepoint of its
// own, so that one that fails is rolled back alone, then one commit for all.
// Callers see exactly what serial transactions would give them: inTx returns
// after the commit that made their writes durable, or with the error that
// undid them. Nothing waits for a batch to fill: a write that finds the
// writer idle commits at once.

// maxGroup bounds the transactions committed together.
const maxGroup = 128

// groupCommitter owns the write connection of a SQLite database.
type groupCommitter struct {
	db     *sql.DB
	format func(error) error // maps driver errors of begin and commit
	reqs   chan *writeReq
	// committed, if not nil, is signalled after each commit (the
	// checkpointer waits on it).
	committed chan<- struct{}
	// restart is signalled by the checkpointer after it copied the whole
	// WAL: the writer starts the WAL over while it is idle (restartWAL).
	restart chan struct{}
	// restarts counts restartWAL's writes, for tests.
	restarts atomic.Int64

	commits atomic.Int64 // transactions committed, for tests and profiles
	grouped atomic.Int64 // requests they held

	stopOnce sync.Once
	stop     chan struct{} // closed by close: no new requests
	done     chan struct{} // closed when the loop has returned
}

// writeReq is one caller's transaction.
type writeReq struct {
	ctx    context.Context
	fn     func(context.Context, *sql.Tx) error
	result chan writeResult
}

// writeResult is what a caller gets back: its error, or a panic of its fn
// to raise again in its own goroutine.
type writeResult struct {
	err   error
	panic any
}

// newGroupCommitter starts a group committer on db. After each commit it
// signals committed (if not nil) without blocking.
func newGroupCommitter(db *sql.DB, format func(error) error, committed chan<- struct{}) *groupCommitter {
	g := &groupCommitter{db: db, format: format, committed: committed, restart: make(chan struct{}, 1), reqs: make(chan *writeReq), stop: make(chan struct{}), done: make(chan struct{})}
	go g.loop()
	return g
}

// run runs fn in a write transaction, grouped with others, and returns when
// it is committed or undone.
func (g *groupCommitter) run(ctx context.Context, fn func(context.Context, *sql.Tx) error) error {
	r := &writeReq{ctx: ctx, fn: fn, result: make(chan writeResult, 1)}
	select {
	case g.reqs <- r:
	case <-g.stop:
		return switchboard.ErrStoreClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	res := <-r.result
	if res.panic != nil {
		panic(res.panic)
	}
	return res.err
}

// close stops taking requests and waits for the batch in progress.
func (g *groupCommitter) close() {
	g.stopOnce.Do(func() { close(g.stop) })
	<-g.done
}

func (g *groupCommitter) loop() {
	defer close(g.done)
	batch := make([]*writeReq, 0, maxGroup)
	for {
		select {
		case r := <-g.reqs:
			batch = append(batch[:0], r)
		case <-g.restart:
			select {
			case r := <-g.reqs: // a commit that starts the WAL over itself
				batch = append(batch[:0], r)
			default:
				g.restartWAL()
				continue
			}
		case <-g.stop:
			return
		}
	collect:
		for len(batch) < maxGroup {
			select {
			case r := <-g.reqs:
				batch = append(batch, r)
			default:
				break collect
			}
		}
		g.commit(batch)
		clear(batch)
	}
}

// restartWAL makes the smallest write there is (page 1 of the database, as
// it is) after a checkpoint copied the whole WAL, while no one waits to
// write. The first commit after such a checkpoint starts the WAL over: it
// writes the WAL's header and waits for the disk to sync it. That write is
// this one, rather than the next caller's, which would wait a sync longer
// than the rest (a quarter of the commits at 150 tasks a second). It does
// not signal committed: there is nothing in it to checkpoint, and a write
// that did would make an idle database checkpoint forever.
func (g *groupCommitter) restartWAL() {
	g.restarts.Add(1)
	tx, err := g.db.BeginTx(context.Background(), nil)
	if err != nil {
		return // the next commit starts the WAL over instead
	}
	var v int64
	err = tx.QueryRow(`PRAGMA user_version`).Scan(&v)
	if err == nil {
		_, err = tx.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, v))
	}
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		_ = tx.Rollback()
	}
}

// commit runs batch in one transaction and answers every request.
func (g *groupCommitter) commit(batch []*writeReq) {
	results := make([]writeResult, len(batch))
	answer := func() {
		for i, r := range batch {
			r.result <- results[i]
		}
	}
	failAll := func(err error) {
		for i := range results {
			if results[i].err == nil && results[i].panic == nil {
				results[i].err = err
			}
		}
		answer()
	}
	// Statements run under a context that only the store's own close ends:
	// interrupting one statement of a SQLite transaction may roll back the
	// whole transaction, everyone's writes with it.
	tx, err := g.db.BeginTx(context.Background(), nil)
	if err != nil {
		failAll(g.format(err))
		return
	}
	live := 0 // requests whose writes are in the transaction
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			results[i].err = err
			continue
		}
		ctx := context.WithoutCancel(r.ctx)
		if len(batch) == 1 {
			results[i] = runFn(ctx, tx, r.fn)
			if results[i].err == nil && results[i].panic == nil {
				live++
			}
			continue
		}
		if _, err := tx.ExecContext(ctx, "SAVEPOINT w"); err != nil {
			_ = tx.Rollback()
			failAll(fmt.Errorf("savepoint: %w", err))
			return
		}
		results[i] = runFn(ctx, tx, r.fn)
		if results[i].err != nil || results[i].panic != nil {
			if _, err := tx.ExecContext(ctx, "ROLLBACK TO w"); err != nil {
				_ = tx.Rollback()
				failAll(fmt.Errorf("roll back a failed write: %w", err))
				return
			}
		} else {
			live++
		}
		if _, err := tx.ExecContext(ctx, "RELEASE w"); err != nil {
			_ = tx.Rollback()
			failAll(fmt.Errorf("release savepoint: %w", err))
			return
		}
	}
	if live == 0 {
		_ = tx.Rollback()
		answer()
		return
	}
	if err := tx.Commit(); err != nil {
		failAll(g.format(err))
		return
	}
	g.commits.Add(1)
	g.grouped.Add(int64(live))
	answer()
	if g.committed != nil {
		select {
		case g.committed <- struct{}{}:
		default:
		}
	}
}

// runFn calls fn, turning a panic into a result.
func runFn(ctx context.Context, tx *sql.Tx, fn func(context.Context, *sql.Tx) error) (res writeResult) {
	defer func() {
		if p := recover(); p != nil {
			res = writeResult{panic: p}
		}
	}()
	return writeResult{err: fn(ctx, tx)}
}
