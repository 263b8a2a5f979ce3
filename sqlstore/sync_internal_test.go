package sqlstore

import (
	"context"
	"path/filepath"
	"testing"
)

// TestSQLiteSyncOption: the writer's synchronous setting follows
// SQLiteOptions.SyncFull (1 NORMAL, 2 FULL), on the connection that
// commits.
func TestSQLiteSyncOption(t *testing.T) {
	for name, tc := range map[string]struct {
		opts SQLiteOptions
		want int
	}{
		"Default":  {SQLiteOptions{}, 1},
		"SyncFull": {SQLiteOptions{SyncFull: true}, 2},
	} {
		t.Run(name, func(t *testing.T) {
			db, err := OpenSQLiteWith(context.Background(), filepath.Join(t.TempDir(), "s.db"), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var got int
			if err := db.write.QueryRow(`PRAGMA synchronous`).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("synchronous = %d, want %d", got, tc.want)
			}
		})
	}
}
