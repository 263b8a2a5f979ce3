package sqlstore

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// cachedStatements returns the number of statements conn keeps.
func cachedStatements(t *testing.T, conn *sql.Conn) int {
	t.Helper()
	n := -1
	if err := conn.Raw(func(dc any) error {
		n = len(dc.(*cachingConn).stmts)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestStatementCacheReusesAndStaysCorrect(t *testing.T) {
	ctx := context.Background()
	db, err := openSQLite(sqliteDSN(filepath.Join(t.TempDir(), "cache.db"), nil, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	const insert = `INSERT INTO t (k, v) VALUES ($1, $2)`
	for k := range 10 {
		if _, err := conn.ExecContext(ctx, insert, k, "v"); err != nil {
			t.Fatal(err)
		}
	}
	if got := cachedStatements(t, conn); got != 2 { // CREATE and INSERT
		t.Fatalf("kept statements: got %d, want 2", got)
	}
	// A failing run leaves the kept statement usable.
	if _, err := conn.ExecContext(ctx, insert, 3, "dup"); err == nil {
		t.Fatal("a duplicate key was inserted")
	}
	if _, err := conn.ExecContext(ctx, insert, 10, "v"); err != nil {
		t.Fatalf("after a failed run: %v", err)
	}
	// The same text while its rows are open gets a statement of its own.
	const sel = `SELECT k FROM t WHERE k >= $1 ORDER BY k`
	rows, err := conn.QueryContext(ctx, sel, 0)
	if err != nil {
		t.Fatal(err)
	}
	var outer []int
	for rows.Next() {
		var k int
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		outer = append(outer, k)
		var first int
		if err := conn.QueryRowContext(ctx, sel, k).Scan(&first); err != nil || first != k {
			t.Fatalf("inner query at %d: %d, %v", k, first, err)
		}
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if len(outer) != 11 {
		t.Fatalf("outer rows: got %v, want 0…10", outer)
	}
	if got := cachedStatements(t, conn); got != 3 {
		t.Fatalf("kept statements: got %d, want 3", got)
	}
}
