package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/pgtest"
	"github.com/switchboard-dev/switchboard/internal/storetest"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/server"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// runCmd runs the command line without a server and returns what it
// printed.
func runCmd(args ...string) (string, error) {
	var buf bytes.Buffer
	err := run(context.Background(), args, &buf)
	return buf.String(), err
}

// withoutHeader drops an export's first line, which says when and from
// which engine it was made.
func withoutHeader(b []byte) string {
	_, rest, _ := bytes.Cut(b, []byte("\n"))
	return string(rest)
}

// TestExportImportCLI exports a running server's data, imports it into a
// new data directory and into PostgreSQL, and starts a server on the copy
// that knows the agent and the operator's token.
func TestExportImportCLI(t *testing.T) {
	src := MustRunMain(t, t.TempDir(), "")
	cli(t, src, "agent", "create", "helper", "--mode", "inbox", "--name", "Helper")
	cli(t, src, "token", "issue", "--agent", "helper", "bob")

	file := filepath.Join(t.TempDir(), "export.jsonl")
	if out, err := runCmd("--data", src.Config.DataDir, "export", "--out", file); err != nil || !strings.Contains(out, "agents 1") {
		t.Fatalf("export while serving: %v\n%s", err, out)
	}
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("export file mode %v, want 0600", fi.Mode().Perm())
	}
	dump, _ := os.ReadFile(file)
	if !strings.HasPrefix(string(dump), `{"format":"switchboard-export","version":1,`) {
		t.Fatalf("export starts %.80s", dump)
	}

	dst := t.TempDir()
	if out, err := runCmd("--data", dst, "import", file); err != nil || !strings.Contains(out, "imported") {
		t.Fatalf("import: %v\n%s", err, out)
	}
	out, err := runCmd("--data", dst, "import", file)
	if err == nil || !strings.Contains(err.Error(), "not empty") || !strings.Contains(err.Error(), "--replace") {
		t.Fatalf("second import: %v\n%s", err, out)
	}
	if _, err := runCmd("--data", dst, "import", "--replace", file); err != nil {
		t.Fatalf("import --replace: %v", err)
	}
	var again bytes.Buffer
	if err := run(context.Background(), []string{"--data", dst, "export"}, &again); err != nil {
		t.Fatal(err)
	}
	if withoutHeader(again.Bytes()) != withoutHeader(dump) {
		t.Fatal("the imported copy exports other data")
	}

	token, err := os.ReadFile(filepath.Join(src.Config.DataDir, server.OwnerTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	copyMain := MustRunMain(t, dst, "")
	if copyMain.GeneratedOwnerToken != "" {
		t.Fatal("the copy generated a new operator token: the imported operator was not found")
	}
	if out := cli(t, copyMain, "--owner-token", strings.TrimSpace(string(token)), "agent", "list"); !strings.Contains(out, "helper") {
		t.Fatalf("agent list on the copy: %s", out)
	}

	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.DSN(t)
		if _, err := runCmd("import", "--database", dsn, file); err != nil {
			t.Fatal(err)
		}
		var pg bytes.Buffer
		if err := run(context.Background(), []string{"export", "--database", dsn}, &pg); err != nil {
			t.Fatal(err)
		}
		if withoutHeader(pg.Bytes()) != withoutHeader(dump) {
			t.Fatal("the PostgreSQL copy exports other data")
		}
	})
}

// TestImportFailureLeavesNoDatabase: a refused file leaves no database
// file behind in a data directory that had none, and exporting a data
// directory without a database does not create one.
func TestImportFailureLeavesNoDatabase(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"format":"switchboard-export","version":7}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := runCmd("--data", dir, "import", bad)
	if err == nil || !strings.Contains(err.Error(), "version 7 is not supported") || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("import of a version 7 file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "switchboard.db")); !os.IsNotExist(err) {
		t.Fatalf("a refused import left a database: %v", err)
	}
	if _, err := runCmd("--data", dir, "export"); err == nil || !strings.Contains(err.Error(), "no database") {
		t.Fatalf("export without a database: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "switchboard.db")); !os.IsNotExist(err) {
		t.Fatalf("export created a database: %v", err)
	}
}

func TestRetentionFlag(t *testing.T) {
	day := 24 * time.Hour
	for in, want := range map[string]time.Duration{"0": 0, "": 0, "30d": 30 * day, "1d": day, "720h": 720 * time.Hour, "90m": 90 * time.Minute} {
		var r retentionFlag
		if err := r.UnmarshalText([]byte(in)); err != nil || time.Duration(r) != want {
			t.Errorf("%q = %v, %v; want %v", in, time.Duration(r), err, want)
		}
	}
	for _, in := range []string{"30", "-1h", "d", "1.5d", "30days", "99999999d"} {
		var r retentionFlag
		if err := r.UnmarshalText([]byte(in)); err == nil {
			t.Errorf("%q accepted as %v", in, time.Duration(r))
		}
	}
	if _, err := runCmd("serve", "--retention", "forever"); err == nil || !strings.Contains(err.Error(), "retention") {
		t.Fatalf("serve --retention forever: %v", err)
	}
	t.Setenv("SWITCHBOARD_RETENTION", "soon")
	if _, err := runCmd("serve"); err == nil || !strings.Contains(err.Error(), "retention") {
		t.Fatalf("SWITCHBOARD_RETENTION=soon: %v", err)
	}
}

// TestServeRetention starts a server with --retention 30d on a database
// whose finished tasks ended 40 days ago: its first pass deletes them, and
// keeps the unfinished ones.
func TestServeRetention(t *testing.T) {
	dir := t.TempDir()
	db, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(dir, "switchboard.db"))
	if err != nil {
		t.Fatal(err)
	}
	p := storetest.PopulateAt(t, db, time.Now().Add(-40*24*time.Hour))
	_ = db.Close()

	m := MustRunMain(t, dir, "", func(c *server.Config) { c.Retention = 30 * 24 * time.Hour })
	ctx := context.Background()
	testwait.ForErr(t, "the finished tasks to be deleted", func() error {
		_, errC := m.DB.FindTaskByID(ctx, p.Tasks[2].ID())
		_, errD := m.DB.FindTaskByID(ctx, p.Tasks[3].ID())
		if switchboard.ErrorCode(errC) != switchboard.ENOTFOUND || switchboard.ErrorCode(errD) != switchboard.ENOTFOUND {
			return fmt.Errorf("finished tasks still there: %v, %v", errC, errD)
		}
		return nil
	})
	for _, task := range p.Tasks[:2] {
		if _, err := m.DB.FindTaskByID(ctx, task.ID()); err != nil {
			t.Fatalf("unfinished task %s: %v", task.ID(), err)
		}
	}
}
