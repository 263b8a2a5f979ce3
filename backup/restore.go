package backup

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/switchboard-dev/switchboard/seal"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// ErrExists means the data directory already holds a database, and the
// restore was not told to replace it.
var ErrExists = errors.New("the data directory already holds a database")

// maxManifest bounds the manifest's size.
const maxManifest = 1 << 20

// RestoreOptions tune Restore.
type RestoreOptions struct {
	// Force replaces a database the data directory holds.
	Force bool
	// Files are the names, besides the database and the key file, that the
	// backup may hold (as Options.Files); any other member is refused.
	Files []string
}

// Restored is what Restore did.
type Restored struct {
	Manifest *Manifest
	// Replaced says a database was there before.
	Replaced bool
	// MissingKeyIDs are keys the database's sealed secrets need that
	// neither the backup nor the data directory's key file holds.
	MissingKeyIDs []string
}

// Restore writes the backup read from r (as Write wrote it, or compressed
// with gzip) into dataDir, made if missing. It refuses, changing nothing,
// a data directory whose database is open (a running server: the error
// wraps sqlstore.ErrSQLiteInUse), and one that holds a database unless
// opts.Force (ErrExists). The database is checked before it is kept. The
// backup's key file is written with the keys of a key file already there
// after its own, so that no key is lost; its other files replace theirs.
// Every file is written beside its place and renamed into it, the
// database last.
func Restore(ctx context.Context, r io.Reader, dataDir string, opts RestoreOptions) (*Restored, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	dbPath := filepath.Join(dataDir, DatabaseName)
	res := &Restored{}
	var lock *sqlstore.SQLiteLock
	if _, err := os.Stat(dbPath); err == nil {
		if lock, err = sqlstore.LockSQLite(ctx, dbPath); err != nil {
			if errors.Is(err, sqlstore.ErrSQLiteInUse) {
				return nil, fmt.Errorf("restore: %w: stop it first", err)
			}
			return nil, fmt.Errorf("restore: %w", err)
		}
		defer lock.Close()
		if !opts.Force {
			return nil, fmt.Errorf("restore: %s: %w (--force replaces it)", dbPath, ErrExists)
		}
		res.Replaced = true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("restore: %w", err)
	}

	staged, err := unpack(r, dataDir, opts.Files)
	defer staged.remove()
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	res.Manifest = staged.manifest
	info, err := sqlstore.InspectSQLite(ctx, staged.files[DatabaseName])
	if err != nil {
		return nil, fmt.Errorf("restore: the backup's database: %w", err)
	}
	have, err := staged.mergeKeys(dataDir)
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	res.MissingKeyIDs = missing(info.SealedKeyIDs, have)

	// Nothing of the old database may stay outside its file: a write-ahead
	// log left beside the new file would be read as the new one's. The
	// lock is released before the new file takes the old one's name: on
	// closing, SQLite removes the log by its name, which must still be the
	// old database's.
	if lock != nil {
		if err := lock.Checkpoint(ctx); err != nil {
			return nil, fmt.Errorf("restore: %w", err)
		}
		if err := lock.Close(); err != nil {
			return nil, fmt.Errorf("restore: %w", err)
		}
	}
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if err := os.Remove(dbPath + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("restore: %w", err)
		}
	}
	if err := staged.install(dataDir); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	return res, nil
}

// stage is a backup unpacked beside its places in the data directory.
type stage struct {
	manifest *Manifest
	files    map[string]string // member name → its temporary file
	order    []string          // member names, as read
}

// unpack reads the archive into temporary files in dir, mode 0600. It
// returns what it made even on error, for remove.
func unpack(r io.Reader, dir string, allowed []string) (*stage, error) {
	s := &stage{files: map[string]string{}}
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return s, err
		}
		r = zr
	} else {
		r = br
	}
	tr := tar.NewReader(r)
	hdr, err := tr.Next()
	if err != nil || hdr.Name != ManifestName || hdr.Size > maxManifest {
		return s, fmt.Errorf("not a Switchboard backup (no %s first)", ManifestName)
	}
	data, err := io.ReadAll(io.LimitReader(tr, maxManifest))
	if err != nil {
		return s, fmt.Errorf("read the manifest: %w", err)
	}
	if s.manifest, err = parseManifest(data); err != nil {
		return s, err
	}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			return s, fmt.Errorf("read the backup: %w", err)
		}
		name := hdr.Name
		switch {
		case hdr.Typeflag != tar.TypeReg:
			return s, fmt.Errorf("the backup holds %q, which is not a regular file", name)
		case name != DatabaseName && name != seal.KeyFileName && !slices.Contains(allowed, name) || !validName(name):
			return s, fmt.Errorf("the backup holds %q, which is not a file of a data directory", name)
		case s.files[name] != "":
			return s, fmt.Errorf("the backup holds %q twice", name)
		}
		path, err := writeTemp(dir, name, tr)
		if path != "" {
			s.files[name] = path
			s.order = append(s.order, name)
		}
		if err != nil {
			return s, fmt.Errorf("unpack %s: %w", name, err)
		}
	}
	if s.files[DatabaseName] == "" {
		return s, fmt.Errorf("the backup holds no %s", DatabaseName)
	}
	return s, nil
}

// writeTemp copies r to a new file of mode 0600 in dir, synced, and
// returns its path.
func writeTemp(dir, name string, r io.Reader) (string, error) {
	f, err := os.CreateTemp(dir, "."+name+".restore-*")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(f, r)
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	return f.Name(), errors.Join(err, f.Close())
}

// mergeKeys puts the keys of the key file already in dir after those of
// the backup's key file, in its staged file, and returns the ids of every
// key the restored directory will hold.
func (s *stage) mergeKeys(dir string) ([]string, error) {
	var keys [][]byte
	if path := s.files[seal.KeyFileName]; path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if keys, err = seal.ParseKeys(string(data)); err != nil {
			return nil, fmt.Errorf("the backup's %s: %w", seal.KeyFileName, err)
		}
	}
	old, err := readOptional(filepath.Join(dir, seal.KeyFileName))
	if err != nil {
		return nil, err
	}
	if old != nil {
		oldKeys, err := seal.ParseKeys(string(old))
		if err != nil {
			return nil, fmt.Errorf("the data directory's %s: %w", seal.KeyFileName, err)
		}
		added := false
		for _, k := range oldKeys {
			if !slices.ContainsFunc(keys, func(have []byte) bool { return string(have) == string(k) }) {
				keys, added = append(keys, k), true
			}
		}
		if path := s.files[seal.KeyFileName]; path != "" && added {
			if err := seal.WriteKeyFile(path, keys); err != nil {
				return nil, err
			}
		}
	}
	ids := make([]string, 0, len(keys))
	for _, k := range keys {
		ids = append(ids, seal.KeyID(k))
	}
	return ids, nil
}

// install renames every staged file into place, the database last, and
// syncs the directory.
func (s *stage) install(dir string) error {
	names := slices.DeleteFunc(slices.Clone(s.order), func(n string) bool { return n == DatabaseName })
	for _, name := range append(names, DatabaseName) {
		if err := os.Rename(s.files[name], filepath.Join(dir, name)); err != nil {
			return err
		}
		delete(s.files, name)
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// remove deletes the staged files not installed.
func (s *stage) remove() {
	if s == nil {
		return
	}
	for _, path := range s.files {
		_ = os.Remove(path)
	}
}
