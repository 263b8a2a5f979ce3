package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchboard-dev/switchboard/backup"
	"github.com/switchboard-dev/switchboard/seal"
	"github.com/switchboard-dev/switchboard/server"
)

// backupFiles are the data directory's files, besides the database and the
// key file, that a backup keeps.
var backupFiles = []string{server.OwnerTokenFile}

// BackupCmd writes a physical backup of a SQLite deployment.
type BackupCmd struct {
	Database string `name:"database" env:"SWITCHBOARD_DATABASE" help:"Refused: a PostgreSQL deployment is backed up with pg_dump (docs/operating.md)."`
	NoKey    bool   `name:"no-key" help:"Leave the secret key file out: the backup then opens its sealed secrets only with keys kept elsewhere."`
	File     string `arg:"" help:"The backup file to write (a tar archive), or - for standard output. It is written beside, then renamed into place once complete, readable by its owner only."`
}

// Run backs up the database in --data while servers may keep running.
func (c *BackupCmd) Run(ctx context.Context, cli *CLI) error {
	if c.Database != "" {
		return errors.New("backup: --database (SWITCHBOARD_DATABASE) is set: backup copies a SQLite data directory; back PostgreSQL up with pg_dump, and keep the secret key (docs/operating.md)")
	}
	opts := backup.Options{WithoutKey: c.NoKey, Files: backupFiles, Switchboard: currentBuild().Version}
	var m *backup.Manifest
	if c.File == "-" {
		var err error
		if m, err = backup.Write(ctx, cli.Data, cli.out, opts); err != nil {
			return err
		}
	} else {
		opts.TempDir = filepath.Dir(c.File)
		f, err := os.CreateTemp(opts.TempDir, "."+filepath.Base(c.File)+".*")
		if err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		defer os.Remove(f.Name()) // after the rename, nothing is left to remove
		m, err = backup.Write(ctx, cli.Data, f, opts)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(f.Name(), c.File)
		}
		if err != nil {
			return fmt.Errorf("backup: %w", err)
		}
	}
	report := cli.out
	if c.File == "-" {
		report = cli.errOut
	}
	fmt.Fprintf(report, "backed up %s (schema %s) to %s: %s\n", filepath.Join(cli.Data, backup.DatabaseName), m.Schema, c.File, strings.Join(m.Files, ", "))
	if len(m.IncludedKeyIDs) > 0 {
		fmt.Fprintf(report, "the backup holds the secret key (%s): keep it as secret as the key file itself\n", strings.Join(m.IncludedKeyIDs, ", "))
	}
	if lack := m.MissingKeyIDs(); len(lack) > 0 {
		fmt.Fprintf(cli.errOut, "warning: the database holds secrets sealed with key %s, which the backup does not hold (%s): keep that key with the backup, or a server on the copy will not start\n",
			strings.Join(lack, ", "), keySource(c.NoKey))
	}
	return nil
}

// keySource says where keys a backup lacks are.
func keySource(noKey bool) string {
	if noKey {
		return "--no-key"
	}
	return "they come from --secret-key / SWITCHBOARD_SECRET_KEY, or " + seal.KeyFileName + " lacks them"
}

// RestoreCmd writes a backup into a stopped data directory.
type RestoreCmd struct {
	Database string `name:"database" env:"SWITCHBOARD_DATABASE" help:"Refused: a PostgreSQL deployment is restored with pg_restore (docs/operating.md)."`
	Force    bool   `name:"force" help:"Replace the database the data directory holds."`
	File     string `arg:"" help:"The backup file (as backup wrote it, or gzip-compressed), or - for standard input."`
}

// Run restores the backup into --data. A running server on it, or a
// database already there without --force, is refused and nothing changes.
func (c *RestoreCmd) Run(ctx context.Context, cli *CLI) error {
	if c.Database != "" {
		return errors.New("restore: --database (SWITCHBOARD_DATABASE) is set: restore writes a SQLite data directory; restore PostgreSQL with pg_restore (docs/operating.md)")
	}
	var in io.Reader = cli.stdin
	if c.File != "-" {
		f, err := os.Open(c.File)
		if err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		defer f.Close()
		in = f
	}
	res, err := backup.Restore(ctx, in, cli.Data, backup.RestoreOptions{Force: c.Force, Files: backupFiles})
	if err != nil {
		return err
	}
	m := res.Manifest
	what := "restored"
	if res.Replaced {
		what = "replaced the database with"
	}
	fmt.Fprintf(cli.out, "%s the backup of %s (switchboard %s, schema %s) in %s: %s\n",
		what, m.Created.Format("2006-01-02T15:04:05Z"), m.Switchboard, m.Schema, cli.Data, strings.Join(m.Files, ", "))
	if len(res.MissingKeyIDs) > 0 {
		fmt.Fprintf(cli.errOut, "warning: the database holds secrets sealed with key %s, which neither the backup nor %s holds: start the server with it (--secret-key / SWITCHBOARD_SECRET_KEY)\n",
			strings.Join(res.MissingKeyIDs, ", "), filepath.Join(cli.Data, seal.KeyFileName))
	}
	return nil
}
