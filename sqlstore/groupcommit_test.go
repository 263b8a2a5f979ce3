package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestGroupCommitUndoesOnlyTheFailedWrites(t *testing.T) {
	ctx := context.Background()
	db, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "group.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE gc (k INTEGER PRIMARY KEY)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	errOdd := errors.New("odd writes fail after writing")
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	// A write that holds the writer until the others have queued behind
	// it, so that they are grouped however the goroutines are scheduled.
	holding, release, held := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		held <- db.inTx(ctx, func(context.Context, *sql.Tx) error {
			close(holding)
			<-release
			return nil
		})
	}()
	<-holding
	const n = 400
	var wg sync.WaitGroup
	errs := make([]error, n)
	panics := make([]any, n)
	time.AfterFunc(100*time.Millisecond, func() { close(release) })
	for i := range n {
		wg.Go(func() {
			wctx := ctx
			if i%10 == 4 {
				wctx = canceled
			}
			defer func() { panics[i] = recover() }()
			errs[i] = db.inTx(wctx, func(ctx context.Context, tx *sql.Tx) error {
				for _, k := range []int{i, i + 1000} {
					if _, err := tx.ExecContext(ctx, `INSERT INTO gc (k) VALUES ($1)`, k); err != nil {
						return err
					}
				}
				switch {
				case i%10 == 6:
					panic("write " + string(rune('0'+i%10)))
				case i%2 == 1:
					return errOdd
				}
				return nil
			})
		})
	}
	wg.Wait()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	want := map[int]bool{}
	for i := range n {
		switch {
		case i%10 == 4:
			if !errors.Is(errs[i], context.Canceled) {
				t.Errorf("write %d with a canceled context: got %v", i, errs[i])
			}
		case i%10 == 6:
			if panics[i] != "write 6" {
				t.Errorf("write %d: the panic did not reach its caller: %v", i, panics[i])
			}
		case i%2 == 1:
			if !errors.Is(errs[i], errOdd) {
				t.Errorf("write %d: got %v, want its own error", i, errs[i])
			}
		default:
			if errs[i] != nil {
				t.Errorf("write %d: %v", i, errs[i])
			}
			want[i], want[i+1000] = true, true
		}
	}
	rows, err := db.read.QueryContext(ctx, `SELECT k FROM gc`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := 0
	for rows.Next() {
		var k int
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		if !want[k] {
			t.Errorf("row %d is stored, but its write failed", k)
		}
		got++
	}
	if got != len(want) {
		t.Errorf("stored %d rows, want %d", got, len(want))
	}
	commits, grouped := db.group.commits.Load(), db.group.grouped.Load()
	t.Logf("%d writes in %d commits", grouped, commits)
	if grouped <= commits {
		t.Errorf("%d writes took %d commits: nothing was grouped", grouped, commits)
	}
}

func TestGroupCommitAfterClose(t *testing.T) {
	ctx := context.Background()
	db, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "closed.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	err = db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error { return nil })
	if err == nil {
		t.Fatal("a write after Close succeeded")
	}
}
