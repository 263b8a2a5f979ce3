package backup_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/backup"
	"github.com/switchboard-dev/switchboard/internal/storetest"
	"github.com/switchboard-dev/switchboard/seal"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// newDataDir makes a data directory with a database holding one account,
// a key file and an owner token file, and returns it.
func newDataDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	db, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(dir, backup.DatabaseName))
	if err != nil {
		t.Fatal(err)
	}
	if err := storetest.SeedAccount(context.Background(), db, "alice"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := seal.WriteKeyFile(filepath.Join(dir, seal.KeyFileName), [][]byte{seal.NewKey()}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "owner-token"), []byte("sbo_x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// validBackup returns a backup of a new data directory.
func validBackup(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := backup.Write(context.Background(), newDataDir(t), &buf, backup.Options{Files: []string{"owner-token"}}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// members returns the archive's members, by name.
func members(t testing.TB, archive []byte) (names []string, data map[string][]byte) {
	t.Helper()
	data = map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(archive))
	for {
		hdr, err := tr.Next()
		if err != nil {
			return names, data
		}
		var b bytes.Buffer
		_, _ = b.ReadFrom(tr)
		names = append(names, hdr.Name)
		data[hdr.Name] = b.Bytes()
	}
}

// archive writes members as a tar archive; a name ending in "@link" is
// written as a symlink.
func archive(t testing.TB, files ...[2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		hdr := &tar.Header{Name: f[0], Mode: 0o600, Size: int64(len(f[1])), Typeflag: tar.TypeReg}
		if name, ok := strings.CutSuffix(f[0], "@link"); ok {
			hdr = &tar.Header{Name: name, Linkname: f[1], Typeflag: tar.TypeSymlink}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag == tar.TypeReg {
			_, _ = tw.Write([]byte(f[1]))
		}
	}
	_ = tw.Close()
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	src := newDataDir(t)
	var buf bytes.Buffer
	m, err := backup.Write(context.Background(), src, &buf, backup.Options{Files: []string{"owner-token", "absent"}, Switchboard: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Files, []string{backup.DatabaseName, seal.KeyFileName, "owner-token"}; !slices.Equal(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	names, _ := members(t, buf.Bytes())
	if got, want := names, append([]string{backup.ManifestName}, m.Files...); !slices.Equal(got, want) {
		t.Fatalf("members %v, want %v", got, want)
	}
	dst := filepath.Join(t.TempDir(), "new")
	res, err := backup.Restore(context.Background(), &buf, dst, backup.RestoreOptions{Files: []string{"owner-token"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Replaced || len(res.MissingKeyIDs) != 0 || res.Manifest.Switchboard != "1.2.3" {
		t.Fatalf("restored %+v", res)
	}
	for _, name := range []string{seal.KeyFileName, "owner-token"} {
		want, _ := os.ReadFile(filepath.Join(src, name))
		got, _ := os.ReadFile(filepath.Join(dst, name))
		if !bytes.Equal(got, want) {
			t.Fatalf("%s differs", name)
		}
	}
	db, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(dst, backup.DatabaseName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if accts, err := db.FindAccounts(context.Background()); err != nil || len(accts) != 1 || accts[0].Name != "alice" {
		t.Fatalf("restored accounts %+v %v", accts, err)
	}
	entries, _ := os.ReadDir(dst)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("restore left %s behind", e.Name())
		}
	}
}

// TestRestoreKeepsKeys: restoring over a data directory whose key file
// holds other keys keeps them after the backup's.
func TestRestoreKeepsKeys(t *testing.T) {
	b := validBackup(t)
	_, data := members(t, b)
	backupKeys, err := seal.ParseKeys(string(data[seal.KeyFileName]))
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	other := seal.NewKey()
	if err := seal.WriteKeyFile(filepath.Join(dst, seal.KeyFileName), [][]byte{other}); err != nil {
		t.Fatal(err)
	}
	if _, err := backup.Restore(context.Background(), bytes.NewReader(b), dst, backup.RestoreOptions{Files: []string{"owner-token"}}); err != nil {
		t.Fatal(err)
	}
	kf, err := seal.ReadKeyFile(filepath.Join(dst, seal.KeyFileName))
	if err != nil {
		t.Fatal(err)
	}
	if len(kf.Keys) != 2 || !bytes.Equal(kf.Keys[0], backupKeys[0]) || !bytes.Equal(kf.Keys[1], other) {
		t.Fatalf("keys after restore: %d, want the backup's then the directory's", len(kf.Keys))
	}
}

// TestRestoreRefusesMembers: an archive that is not a backup, or holds a
// member that is no file of a data directory, is refused, and the data
// directory is left empty.
func TestRestoreRefusesMembers(t *testing.T) {
	b := validBackup(t)
	_, data := members(t, b)
	manifest := string(data[backup.ManifestName])
	db := string(data[backup.DatabaseName])
	cases := map[string]struct {
		archive []byte
		want    string
	}{
		"Empty":        {nil, "not a Switchboard backup"},
		"NoManifest":   {archive(t, [2]string{backup.DatabaseName, db}), "not a Switchboard backup"},
		"OtherFormat":  {archive(t, [2]string{backup.ManifestName, `{"format":"tar","version":1,"engine":"sqlite"}`}), "format"},
		"NewerVersion": {archive(t, [2]string{backup.ManifestName, strings.Replace(manifest, `"version": 1`, `"version": 2`, 1)}), "version 2"},
		"NoDatabase":   {archive(t, [2]string{backup.ManifestName, manifest}), "no switchboard.db"},
		"Traversal":    {archive(t, [2]string{backup.ManifestName, manifest}, [2]string{"../switchboard.db", db}), "not a file of a data directory"},
		"Subdirectory": {archive(t, [2]string{backup.ManifestName, manifest}, [2]string{"x/switchboard.db", db}), "not a file of a data directory"},
		"UnknownFile":  {archive(t, [2]string{backup.ManifestName, manifest}, [2]string{"owner-token", "x"}), "not a file of a data directory"},
		"Symlink":      {archive(t, [2]string{backup.ManifestName, manifest}, [2]string{"secret.key@link", "/etc/passwd"}), "not a regular file"},
		"Twice":        {archive(t, [2]string{backup.ManifestName, manifest}, [2]string{backup.DatabaseName, db}, [2]string{backup.DatabaseName, db}), "twice"},
		"DamagedDB":    {archive(t, [2]string{backup.ManifestName, manifest}, [2]string{backup.DatabaseName, db[:len(db)/2]}), "database"},
		"NotADatabase": {archive(t, [2]string{backup.ManifestName, manifest}, [2]string{backup.DatabaseName, strings.Repeat("x", 4096)}), "database"},
		"Truncated":    {b[:len(b)/2], ""},
		"UnnamedFile":  {b, "not a file of a data directory"}, // owner-token, not in RestoreOptions.Files
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			_, err := backup.Restore(context.Background(), bytes.NewReader(tc.archive), dir, backup.RestoreOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Fatalf("the refused restore left %v", entries)
			}
		})
	}
}

// FuzzRestore: whatever the file, Restore either restores a database or
// fails leaving the data directory as it was (empty).
func FuzzRestore(f *testing.F) {
	b := validBackup(f)
	f.Add(b)
	f.Add(b[:1024])
	f.Add([]byte{0x1f, 0x8b, 8, 0})
	f.Add(archive(f, [2]string{backup.ManifestName, `{"format":"switchboard-backup","version":1,"engine":"sqlite"}`}))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		_, err := backup.Restore(context.Background(), bytes.NewReader(data), dir, backup.RestoreOptions{Files: []string{"owner-token"}})
		entries, _ := os.ReadDir(dir)
		if err != nil && len(entries) != 0 {
			t.Fatalf("a refused restore (%v) left %v", err, entries)
		}
		if err == nil {
			if _, err := os.Stat(filepath.Join(dir, backup.DatabaseName)); err != nil {
				t.Fatalf("restored without a database: %v", err)
			}
		}
	})
}

// TestRestoreGzip: a backup compressed with gzip restores as it is.
func TestRestoreGzip(t *testing.T) {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	_, _ = zw.Write(validBackup(t))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := backup.Restore(context.Background(), &z, dir, backup.RestoreOptions{Files: []string{"owner-token"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlstore.InspectSQLite(context.Background(), filepath.Join(dir, backup.DatabaseName)); err != nil {
		t.Fatal(err)
	}
}
