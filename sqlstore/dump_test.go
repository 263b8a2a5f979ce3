package sqlstore_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/pgtest"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/internal/storetest"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// mustExport exports db and returns the file.
func mustExport(tb testing.TB, db *sqlstore.DB) []byte {
	tb.Helper()
	var b bytes.Buffer
	if _, err := db.Export(context.Background(), &b); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// exportBody is an export without what differs between two exports of the
// same data: the header's time and engine.
func exportBody(tb testing.TB, dump []byte) string {
	tb.Helper()
	header, rest, _ := bytes.Cut(dump, []byte("\n"))
	var h map[string]any
	if err := json.Unmarshal(header, &h); err != nil {
		tb.Fatalf("header: %v", err)
	}
	delete(h, "exported_at")
	delete(h, "engine")
	hb, _ := json.Marshal(h)
	return string(hb) + "\n" + string(rest)
}

// TestDumpRoundTrip moves a populated deployment SQLite → JSON →
// PostgreSQL → JSON → SQLite: the three exports hold the same data, byte
// for byte, and the stores answer alike.
func TestDumpRoundTrip(t *testing.T) {
	ctx := context.Background()
	src := MustOpenSQLite(t)
	p := storetest.Populate(t, src)
	first := mustExport(t, src)

	pg := MustOpenPostgres(t)
	counts, err := pg.Import(ctx, bytes.NewReader(first), sqlstore.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if counts["tasks"] != int64(len(p.Tasks)) || counts["accounts"] != 2 {
		t.Fatalf("import counts %v", counts)
	}
	second := mustExport(t, pg)

	dst := MustOpenSQLite(t)
	if _, err := dst.Import(ctx, bytes.NewReader(second), sqlstore.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	third := mustExport(t, dst)

	if diff := lineDiff(exportBody(t, first), exportBody(t, second)); diff != "" {
		t.Fatalf("SQLite and PostgreSQL exports differ (-sqlite +postgres):\n%s", diff)
	}
	if diff := lineDiff(exportBody(t, first), exportBody(t, third)); diff != "" {
		t.Fatalf("exports before and after the round trip differ:\n%s", diff)
	}
	for _, task := range p.Tasks {
		want, err := src.FindTaskByID(ctx, task.ID())
		if err != nil {
			t.Fatal(err)
		}
		for name, db := range map[string]*sqlstore.DB{"postgres": pg, "sqlite": dst} {
			got, err := db.FindTaskByID(ctx, task.ID())
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("%s: task %s differs:\n%+v\n%+v", name, task.ID(), want, got)
			}
			evs, err := db.FindTaskEvents(ctx, task.ID(), 0, 0)
			if err != nil || int64(len(evs)) != got.Seq {
				t.Fatalf("%s: %d events of %d (%v)", name, len(evs), got.Seq, err)
			}
		}
	}
	for _, g := range p.Agents {
		want, _ := src.FindAgentByID(ctx, g.ID)
		got, err := dst.FindAgentByID(ctx, g.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("agent %s differs:\n%+v\n%+v", g.Handle, want, got)
		}
	}
	for name, db := range map[string]*sqlstore.DB{"postgres": pg, "sqlite": dst} {
		if got, err := db.FindAgentByDomain(ctx, "inbox.example.com"); err != nil || got.ID != "agent-inbox" {
			t.Fatalf("%s: the agent by its domain: %+v, %v", name, got, err)
		}
	}
	if strings.Contains(string(first), `"agent_sessions"`) || strings.Contains(string(first), `"rate_counts"`) {
		t.Fatal("the export holds an excluded table")
	}
}

// TestImportRefusesNonEmpty: a database with data refuses an import and
// keeps its data; with Replace, the import takes its place.
func TestImportRefusesNonEmpty(t *testing.T) {
	ctx := context.Background()
	src := MustOpenSQLite(t)
	storetest.Populate(t, src)
	dump := mustExport(t, src)

	for name, db := range map[string]*sqlstore.DB{"sqlite": MustOpenSQLite(t), "postgres": MustOpenPostgres(t)} {
		t.Run(name, func(t *testing.T) {
			if err := storetest.SeedAccount(ctx, db, "carol"); err != nil {
				t.Fatal(err)
			}
			before := mustExport(t, db)
			_, err := db.Import(ctx, bytes.NewReader(dump), sqlstore.ImportOptions{})
			if !errors.Is(err, sqlstore.ErrNotEmpty) || !strings.Contains(err.Error(), "accounts") {
				t.Fatalf("import into a database with an account: %v", err)
			}
			if diff := lineDiff(exportBody(t, before), exportBody(t, mustExport(t, db))); diff != "" {
				t.Fatalf("a refused import changed the database:\n%s", diff)
			}
			if _, err := db.Import(ctx, bytes.NewReader(dump), sqlstore.ImportOptions{Replace: true}); err != nil {
				t.Fatal(err)
			}
			if diff := lineDiff(exportBody(t, dump), exportBody(t, mustExport(t, db))); diff != "" {
				t.Fatalf("after a replacing import:\n%s", diff)
			}
		})
	}
}

var seqRE = regexp.MustCompile(`"seq":(\d+)`)

// TestImportRefusesBadFiles: damaged, truncated and unknown files are
// refused with an error that says what is wrong, and leave the database
// empty, even when the damage comes after rows that were inserted.
func TestImportRefusesBadFiles(t *testing.T) {
	src := MustOpenSQLite(t)
	storetest.Populate(t, src)
	good := mustExport(t, src)
	lines := strings.SplitAfter(strings.TrimSuffix(string(good), "\n"), "\n")
	last := len(lines) - 1
	without := func(i int) string { return strings.Join(slices.Delete(slices.Clone(lines), i, i+1), "") }
	replaceLine := func(i int, old, new string) string {
		l := slices.Clone(lines)
		l[i] = strings.Replace(l[i], old, new, 1)
		return strings.Join(l, "")
	}
	taskLine := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, `{"table":"tasks"`) })
	cases := map[string]struct {
		file string
		want string
	}{
		"Empty":             {"", "empty"},
		"NotJSON":           {"hello\n", "not JSON"},
		"OtherFormat":       {`{"format":"pg_dump","version":1}` + "\n", "format"},
		"UnknownVersion":    {strings.Replace(string(good), `"version":1`, `"version":2`, 1), "version 2 is not supported"},
		"TruncatedNoEnd":    {without(last), "truncated"},
		"TruncatedMidLine":  {string(good[:len(good)-len(lines[last])-20]), "line"},
		"RowMissing":        {without(taskLine), "the end line counts"},
		"GarbageAfterEnd":   {string(good) + `{"table":"tasks"}` + "\n", "follows the end line"},
		"UnknownTable":      {replaceLine(taskLine, `"table":"tasks"`, `"table":"nope"`), "not in the header"},
		"MalformedJSON":     {replaceLine(taskLine, `"seq":`, `"seq":"x",""ignored":`), "line"},
		"StringForInteger":  {seqRE.ReplaceAllString(string(good), `"seq":"$1"`), "want an integer"},
		"UnknownField":      {replaceLine(taskLine, `{"table"`, `{"extra":1,"table"`), "unknown field"},
		"NewerMigration":    {replaceLine(0, `"migrations":[`, `"migrations":["9999_future.sql",`), "newer switchboard"},
		"TableNotHere":      {replaceLine(0, `"tables":[`, `"tables":[{"name":"future","columns":[{"name":"id","type":"text"}]},`), "does not have"},
		"ColumnNotHere":     {replaceLine(0, `{"name":"handle","type":"text"}`, `{"name":"handle","type":"text"},{"name":"future","type":"text"}`), "does not have"},
		"ExcludedTable":     {replaceLine(0, `"tables":[`, `"tables":[{"name":"rate_counts","columns":[{"name":"key","type":"text"}]},`), "never exported"},
		"IncompatibleKinds": {replaceLine(0, `{"name":"handle","type":"text"}`, `{"name":"handle","type":"blob"}`), "in the file"},
	}
	for name, db := range map[string]*sqlstore.DB{"sqlite": MustOpenSQLite(t), "postgres": MustOpenPostgres(t)} {
		empty := exportBody(t, mustExport(t, db))
		for cname, c := range cases {
			t.Run(name+"/"+cname, func(t *testing.T) {
				_, err := db.Import(context.Background(), strings.NewReader(c.file), sqlstore.ImportOptions{})
				if err == nil {
					t.Fatal("accepted")
				}
				if !strings.Contains(err.Error(), c.want) {
					t.Fatalf("error %q does not say %q", err, c.want)
				}
				if got := exportBody(t, mustExport(t, db)); got != empty {
					t.Fatalf("a refused import wrote rows:\n%s", got)
				}
			})
		}
	}
}

// TestExportCoversSchema fails when a table of the schema is neither
// exported nor listed in sqlstore.ExcludedTables (or the list names a
// table that is gone). It reads the schema with its own queries.
func TestExportCoversSchema(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "switchboard.db")
		db := mustOpenSQLiteAt(t, path)
		checkExportCovers(t, db, rawStrings(t, "sqlite", sqlitetest.DSN(path),
			`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`))
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.DSN(t)
		db, err := sqlstore.OpenPostgres(context.Background(), dsn, sqlstore.PostgresOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		checkExportCovers(t, db, rawStrings(t, "pgx", dsn,
			`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`))
	})
}

func checkExportCovers(t *testing.T, db *sqlstore.DB, schema []string) {
	t.Helper()
	var h struct {
		Tables []struct{ Name string }
	}
	header, _, _ := bytes.Cut(mustExport(t, db), []byte("\n"))
	if err := json.Unmarshal(header, &h); err != nil {
		t.Fatal(err)
	}
	covered := sqlstore.ExcludedTables()
	for _, tb := range h.Tables {
		if _, dup := covered[tb.Name]; dup {
			t.Errorf("table %s is exported and listed as excluded", tb.Name)
		}
		covered[tb.Name] = "exported"
	}
	for _, tb := range schema {
		if _, ok := covered[tb]; !ok {
			t.Errorf("table %s is neither exported nor in sqlstore.excludedTables (with a reason)", tb)
		}
	}
	for _, tb := range slices.Sorted(maps.Keys(covered)) {
		if !slices.Contains(schema, tb) {
			t.Errorf("table %s is listed but not in the schema", tb)
		}
	}
}

func mustOpenSQLiteAt(tb testing.TB, path string) *sqlstore.DB {
	tb.Helper()
	db, err := sqlstore.OpenSQLite(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

// rawStrings runs a query on its own connection and returns the first
// column of every row.
func rawStrings(tb testing.TB, driver, dsn, q string, args ...any) []string {
	tb.Helper()
	conn, err := sql.Open(driver, dsn)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.Query(q, args...)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			tb.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// lineDiff names the first line where a and b differ, or returns "".
func lineDiff(a, b string) string {
	if a == b {
		return ""
	}
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(la), len(lb)) {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, x, y)
		}
	}
	return "they differ"
}
