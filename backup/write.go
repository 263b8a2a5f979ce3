package backup

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/switchboard-dev/switchboard/seal"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// Options tune Write; the zero value backs up the database and its key
// file.
type Options struct {
	// WithoutKey leaves the key file out: the backup then cannot open its
	// sealed secrets without keys kept elsewhere.
	WithoutKey bool
	// Files are other files of the data directory to keep, by name, when
	// they exist (the owner token file).
	Files []string
	// TempDir is where the database's copy is made before it is written to
	// the archive (default: the data directory). It needs room for the
	// whole database.
	TempDir string
	// Switchboard is the running version, for the manifest.
	Switchboard string
	// Now is the time of the manifest (default time.Now).
	Now func() time.Time
}

// Write writes a backup of the SQLite deployment in dataDir to w: its
// manifest, a consistent copy of the database made while servers may keep
// writing to it, the key file (unless opts.WithoutKey) and opts.Files. It
// returns the manifest. The database must exist.
func Write(ctx context.Context, dataDir string, w io.Writer, opts Options) (*Manifest, error) {
	src := filepath.Join(dataDir, DatabaseName)
	if _, err := os.Stat(src); err != nil {
		return nil, fmt.Errorf("backup: no database at %s: %w", src, err)
	}
	tmpDir := opts.TempDir
	if tmpDir == "" {
		tmpDir = dataDir
	}
	tmp, err := os.CreateTemp(tmpDir, ".switchboard-backup-*.db")
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	_ = tmp.Close()
	defer os.Remove(tmp.Name())
	info, err := sqlstore.BackupSQLite(ctx, src, tmp.Name())
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}

	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	m := &Manifest{Format: Format, Version: Version, Created: now().UTC(), Switchboard: opts.Switchboard,
		Engine: "sqlite", Schema: info.Migrations[len(info.Migrations)-1], SealedKeyIDs: info.SealedKeyIDs,
		IncludedKeyIDs: []string{}, Files: []string{DatabaseName}}
	if m.SealedKeyIDs == nil {
		m.SealedKeyIDs = []string{}
	}
	var extras []member
	if !opts.WithoutKey {
		data, err := readOptional(filepath.Join(dataDir, seal.KeyFileName))
		if err != nil {
			return nil, fmt.Errorf("backup: %w", err)
		}
		if data != nil {
			keys, err := seal.ParseKeys(string(data))
			if err != nil {
				return nil, fmt.Errorf("backup: %s: %w", seal.KeyFileName, err)
			}
			for _, k := range keys {
				m.IncludedKeyIDs = append(m.IncludedKeyIDs, seal.KeyID(k))
			}
			extras = append(extras, member{seal.KeyFileName, data})
		}
	}
	for _, name := range opts.Files {
		if !validName(name) {
			return nil, fmt.Errorf("backup: %q is not a file name", name)
		}
		data, err := readOptional(filepath.Join(dataDir, name))
		if err != nil {
			return nil, fmt.Errorf("backup: %w", err)
		}
		if data != nil {
			extras = append(extras, member{name, data})
		}
	}
	for _, e := range extras {
		m.Files = append(m.Files, e.name)
	}
	if err := writeArchive(w, m, tmp.Name(), extras); err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	return m, nil
}

// member is a small file of the archive, held in memory.
type member struct {
	name string
	data []byte
}

// writeArchive writes the manifest, the database file at dbPath and the
// extras as a tar archive, every member mode 0600.
func writeArchive(w io.Writer, m *Manifest, dbPath string, extras []member) error {
	manifest, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	if err := writeMember(tw, ManifestName, m.Created, int64(len(manifest)+1), bytes.NewReader(append(manifest, '\n'))); err != nil {
		return err
	}
	db, err := os.Open(dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	fi, err := db.Stat()
	if err != nil {
		return err
	}
	if err := writeMember(tw, DatabaseName, m.Created, fi.Size(), db); err != nil {
		return err
	}
	for _, e := range extras {
		if err := writeMember(tw, e.name, m.Created, int64(len(e.data)), bytes.NewReader(e.data)); err != nil {
			return err
		}
	}
	return tw.Close()
}

func writeMember(tw *tar.Writer, name string, mod time.Time, size int64, r io.Reader) error {
	hdr := &tar.Header{Name: name, Mode: 0o600, Size: size, ModTime: mod, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if n, err := io.Copy(tw, r); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	} else if n != size {
		return fmt.Errorf("write %s: %d bytes of %d", name, n, size)
	}
	return nil
}

// readOptional reads the file at path, or returns nil if there is none.
func readOptional(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// validName reports whether name is a plain file name, in no directory.
func validName(name string) bool {
	return name != "" && name != "." && name != ".." && filepath.Base(name) == name && name == filepath.Clean(name)
}
