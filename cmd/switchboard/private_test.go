package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/server"
)

// TestOwnerTokenFileIsPrivateWhateverWasThere: a token file that existed
// with a mode others can read, or a symlink where the file goes, must not
// end up holding (or pointing at) the operator's token readable by others:
// the file is replaced by a new one of mode 0600, and a symlink's target
// is left untouched.
func TestOwnerTokenFileIsPrivateWhateverWasThere(t *testing.T) {
	for _, tc := range []string{"world-readable", "symlink"} {
		t.Run(tc, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			must(t, os.MkdirAll(dir, 0o700))
			path := filepath.Join(dir, server.OwnerTokenFile)
			elsewhere := filepath.Join(t.TempDir(), "shared.txt")
			switch tc {
			case "world-readable":
				must(t, os.WriteFile(path, []byte("old\n"), 0o644))
			case "symlink":
				must(t, os.WriteFile(elsewhere, []byte("someone else's file\n"), 0o644))
				must(t, os.Symlink(elsewhere, path))
			}
			m := MustRunMain(t, dir, "")
			fi, err := os.Lstat(path)
			must(t, err)
			if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
				t.Fatalf("token file is %s, want a regular file of mode 0600", fi.Mode())
			}
			if data, _ := os.ReadFile(path); strings.TrimSpace(string(data)) != m.GeneratedOwnerToken {
				t.Fatalf("token file holds %q", data)
			}
			if tc == "symlink" {
				if data, _ := os.ReadFile(elsewhere); string(data) != "someone else's file\n" {
					t.Fatalf("the symlink's target was written: %q", data)
				}
			}
		})
	}
}

// TestSharedDataDirectoryIsReported: a data directory other users can
// enter is reported at start.
func TestSharedDataDirectoryIsReported(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.Chmod(dir, 0o755))
	var logs bytes.Buffer
	m := server.New(server.Config{Addr: "127.0.0.1:0", DataDir: dir}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err := m.Run(context.Background()); err != nil {
		_ = m.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	if !strings.Contains(logs.String(), "the data directory is open to other users") {
		t.Fatalf("no warning about a directory of mode 0755:\n%s", logs.String())
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
