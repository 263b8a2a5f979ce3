package sqlstore

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/pgtest"
)

// TestRecordCreatedAgentOnce: many calls at once for one token, as from
// several instances, record exactly one created agent; the others are
// refused with ECONFLICT. The calls race; the interleaving where two read
// "none yet" before either writes is not forced, so this checks the
// outcome rather than reproducing that window every run.
func TestRecordCreatedAgentOnce(t *testing.T) {
	ctx := context.Background()
	open := map[string]func(t *testing.T) (*DB, error){
		"sqlite":   func(t *testing.T) (*DB, error) { return OpenSQLite(ctx, filepath.Join(t.TempDir(), "created.db")) },
		"postgres": func(t *testing.T) (*DB, error) { return OpenPostgres(ctx, pgtest.DSN(t), PostgresOptions{MaxConns: 8}) },
	}
	for name, openDB := range open {
		t.Run(name, func(t *testing.T) {
			db, err := openDB(t)
			must(t, err)
			defer db.Close()
			_, g := mustIdentities(t, db)
			const callers = 8
			errs := make([]error, callers)
			var wg sync.WaitGroup
			for i := range callers {
				wg.Go(func() { errs[i] = db.RecordCreatedAgent(ctx, "h1", switchboard.NewID()) })
			}
			wg.Wait()
			ok := 0
			for _, err := range errs {
				switch {
				case err == nil:
					ok++
				case switchboard.ErrorCode(err) != switchboard.ECONFLICT:
					t.Fatalf("a refused call: %v, want ECONFLICT", err)
				}
			}
			if ok != 1 {
				t.Fatalf("%d calls recorded a created agent, want 1 (agent %s)", ok, g.Handle)
			}
		})
	}
}
