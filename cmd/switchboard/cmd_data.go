package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/server"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// ExportCmd writes a deployment's data as JSON lines.
type ExportCmd struct {
	Database string `name:"database" env:"SWITCHBOARD_DATABASE" help:"The postgres:// URL of the deployment's database (default: the SQLite file in --data)."`
	Out      string `name:"out" short:"o" type:"path" help:"File to write (default: standard output). It is written beside, then renamed into place once complete, readable by its owner only."`
}

// Run exports the database in one read transaction (a snapshot): servers
// may keep running.
func (c *ExportCmd) Run(ctx context.Context, cli *CLI) error {
	if !server.IsPostgres(c.Database) {
		path := filepath.Join(cli.Data, "switchboard.db")
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("export: no database at %s (--data, or --database for PostgreSQL): %w", path, err)
		}
	}
	db, where, err := server.OpenStore(ctx, cli.Data, c.Database, 0, sqlstore.SQLiteOptions{})
	if err != nil {
		return err
	}
	defer db.Close()
	if c.Out == "" || c.Out == "-" {
		counts, err := db.Export(ctx, cli.out)
		if err == nil {
			fmt.Fprintf(os.Stderr, "exported %s from %s\n", countSummary(counts), where)
		}
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(c.Out), "."+filepath.Base(c.Out)+".*")
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	done := false
	defer func() {
		if !done {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	counts, err := db.Export(ctx, f)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := os.Rename(f.Name(), c.Out); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	done = true
	_, err = fmt.Fprintf(cli.out, "exported %s from %s to %s\n", countSummary(counts), where, c.Out)
	return err
}

// ImportCmd loads an export into an empty database.
type ImportCmd struct {
	Database string `name:"database" env:"SWITCHBOARD_DATABASE" help:"The postgres:// URL of the database to load (default: the SQLite file in --data, created if needed)."`
	Replace  bool   `name:"replace" help:"Delete everything the database holds first, in the same transaction. Without it, a database that holds any data is refused."`
	File     string `arg:"" help:"The export file, or - for standard input."`
}

// Run imports the file in one transaction: all of it, or nothing. Stop the
// servers of the deployment first.
func (c *ImportCmd) Run(ctx context.Context, cli *CLI) error {
	var in io.Reader = os.Stdin
	if c.File != "-" {
		f, err := os.Open(c.File)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		defer f.Close()
		in = f
	}
	created := ""
	if !server.IsPostgres(c.Database) {
		if err := os.MkdirAll(cli.Data, 0o700); err != nil {
			return fmt.Errorf("create data directory: %w", err)
		}
		path := filepath.Join(cli.Data, "switchboard.db")
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			created = path
		}
	}
	db, where, err := server.OpenStore(ctx, cli.Data, c.Database, 0, sqlstore.SQLiteOptions{})
	if err != nil {
		return err
	}
	counts, err := db.Import(ctx, in, sqlstore.ImportOptions{Replace: c.Replace})
	_ = db.Close()
	if err != nil {
		if created != "" { // a database this command created holds nothing: leave none behind
			for _, suffix := range []string{"", "-wal", "-shm"} {
				_ = os.Remove(created + suffix)
			}
		}
		return fmt.Errorf("import into %s: %w (nothing was written)", where, err)
	}
	_, err = fmt.Fprintf(cli.out, "imported %s into %s\n", countSummary(counts), where)
	return err
}

// countSummary says how many rows of how many tables, busiest first.
func countSummary(counts map[string]int64) string {
	var total int64
	for _, n := range counts {
		total += n
	}
	names := slices.SortedFunc(maps.Keys(counts), func(a, b string) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), strings.Compare(a, b))
	})
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %d", n, counts[n]))
	}
	return fmt.Sprintf("%d rows of %d tables (%s)", total, len(counts), strings.Join(parts, ", "))
}

// retentionFlag is a retention period: a number of days ("30d"), a Go
// duration ("720h"), or 0 for "keep forever".
type retentionFlag time.Duration

var daysRE = regexp.MustCompile(`^([0-9]+)d$`)

// UnmarshalText implements encoding.TextUnmarshaler, for kong.
func (r *retentionFlag) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "" || s == "0" {
		*r = 0
		return nil
	}
	if m := daysRE.FindStringSubmatch(s); m != nil {
		days, err := strconv.Atoi(m[1])
		if err != nil || days > 100*365 {
			return fmt.Errorf("retention %q: too many days", s)
		}
		*r = retentionFlag(time.Duration(days) * 24 * time.Hour)
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("retention %q: want a number of days (30d), a duration (720h), or 0 to keep tasks forever", s)
	}
	*r = retentionFlag(d)
	return nil
}
