package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
	"github.com/switchboard-dev/switchboard/seal"
	"github.com/switchboard-dev/switchboard/server"
)

// TestAuditSecretKeyRotation: the first start records its sealing key,
// a restart with the same key records nothing, and a restart after
// switchboard secret-key rotate records the new key, by the host, naming
// the old one; keys are named by id, never by value. With AuditLog set to
// a file, the same entries are written there as JSON lines.
func TestAuditSecretKeyRotation(t *testing.T) {
	dir := t.TempDir()
	lines := filepath.Join(t.TempDir(), "audit.jsonl")
	ctx := context.Background()
	keyEntries := func(s *server.Server) []*switchboard.AuditEntry {
		t.Helper()
		got, _, err := s.DB.FindAuditEntries(ctx, switchboard.AuditFilter{Target: audit.KindKey})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	s := run(t, server.Config{DataDir: dir, AuditLog: lines})
	first := keyEntries(s)
	if len(first) != 1 || first[0].Action != switchboard.AuditSecretKeyRotate || first[0].ActorKind != switchboard.AuditHost {
		t.Fatalf("first start: %+v", first)
	}
	must(t, s.Close())
	s = run(t, server.Config{DataDir: dir, AuditLog: lines})
	if got := keyEntries(s); len(got) != 1 {
		t.Fatalf("a restart with the same key: %d entries", len(got))
	}
	must(t, s.Close())
	newID, err := seal.RotateKeyFile(filepath.Join(dir, seal.KeyFileName))
	must(t, err)
	s = run(t, server.Config{DataDir: dir, AuditLog: lines})
	got := keyEntries(s)
	if len(got) != 2 || got[0].TargetID != newID || !strings.Contains(got[0].Detail, first[0].TargetID) {
		t.Fatalf("after a rotation: %+v", got)
	}
	kf, err := seal.ReadKeyFile(filepath.Join(dir, seal.KeyFileName))
	must(t, err)
	text, err := os.ReadFile(lines)
	must(t, err)
	for _, k := range kf.Keys {
		for _, enc := range []string{string(k), base64.StdEncoding.EncodeToString(k)} {
			if strings.Contains(string(text), enc) {
				t.Fatal("the audit log file holds a key")
			}
		}
	}
	var n int
	for l := range strings.Lines(string(text)) {
		var line audit.Line
		must(t, json.Unmarshal([]byte(l), &line))
		if line.Action == string(switchboard.AuditSecretKeyRotate) {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d key entries in the JSON lines, want 2:\n%s", n, text)
	}
	if info, err := os.Stat(lines); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the audit log file: %v, %v", info, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestAuditLogStdout: with AuditLog "stdout" (and its alias "-") the
// entries are written to the process's standard output as JSON lines.
// It swaps os.Stdout, so it must not run in parallel.
func TestAuditLogStdout(t *testing.T) {
	for _, where := range []string{"stdout", "-"} {
		t.Run(where, func(t *testing.T) {
			r, w, err := os.Pipe()
			must(t, err)
			stdout := os.Stdout
			os.Stdout = w
			s := run(t, server.Config{AuditLog: where}) // its first start records its sealing key
			os.Stdout = stdout
			must(t, s.Close())
			must(t, w.Close())
			text, err := io.ReadAll(r)
			must(t, err)
			var line audit.Line
			if err := json.Unmarshal(text, &line); err != nil || line.Action != string(switchboard.AuditSecretKeyRotate) {
				t.Fatalf("standard output held %q (%v), want the key entry as a JSON line", text, err)
			}
		})
	}
}
