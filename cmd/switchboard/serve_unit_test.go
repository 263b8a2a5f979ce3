package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeUnitVerifies: the unit serve --print-unit prints passes
// systemd-analyze verify without a warning, carries the serve flags but
// not --data, and is hardened.
func TestServeUnitVerifies(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	unit := cli(t, m, "serve", "--print-unit", "--addr", "0.0.0.0:8080", "--public-url", "https://sb.example.com", "--data=/elsewhere")
	for _, want := range []string{"DynamicUser=yes", "StateDirectory=switchboard", "NoNewPrivileges=yes", "ProtectSystem=strict",
		"--data /var/lib/switchboard serve --addr 0.0.0.0:8080 --public-url https://sb.example.com\n", "EnvironmentFile=-/etc/switchboard/serve.env"} {
		if !strings.Contains(unit, want) {
			t.Fatalf("the unit lacks %q:\n%s", want, unit)
		}
	}
	for line := range strings.Lines(unit) {
		if strings.HasPrefix(line, "ExecStart=") && (strings.Contains(line, "/elsewhere") || strings.Contains(line, "--print-unit")) {
			t.Fatalf("ExecStart carries what it must not: %s", line)
		}
	}
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("systemd-analyze is not installed")
	}
	path := filepath.Join(t.TempDir(), "switchboard.service")
	must(t, os.WriteFile(path, []byte(unit), 0o644))
	out, err := exec.Command("systemd-analyze", "verify", "--man=no", path).CombinedOutput()
	if err != nil || strings.Contains(string(out), "switchboard.service") {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// TestServeUnitKeepsSecretsOff: a secret on the command line is refused
// (it would be readable in the unit); --install writes the unit and an
// environment file of mode 0600.
func TestServeUnitKeepsSecretsOff(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	for _, args := range [][]string{
		{"serve", "--print-unit", "--database", "postgres://u:p@h/db"},
		{"serve", "--print-unit", "--secret-key=abc"},
		{"--owner-token", "sbo_x", "serve", "--print-unit"},
	} {
		if _, err := cliErr(m, args...); err == nil || !strings.Contains(err.Error(), "serve.env") {
			t.Fatalf("%v: %v, want a refusal that names serve.env", args, err)
		}
	}
	root := t.TempDir()
	old := systemRoot
	systemRoot = root
	t.Cleanup(func() { systemRoot = old })
	cli(t, m, "serve", "--install")
	if _, err := os.Stat(filepath.Join(root, "etc", "systemd", "system", "switchboard.service")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(root, "etc", "switchboard", "serve.env"))
	must(t, err)
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("serve.env mode %v", st.Mode().Perm())
	}
}

// TestHealth: health exits 0 for a ready server, and fails for a server
// that does not answer.
func TestHealth(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	if out := cli(t, m, "health"); !strings.Contains(out, "ok") && !strings.Contains(out, "ready") {
		t.Fatalf("health: %s", out)
	}
	cli(t, m, "health", "--live")
	if err := run(t.Context(), []string{"--server", "http://127.0.0.1:1", "health", "--timeout", "2s"}, io.Discard); err == nil {
		t.Fatal("health of no server: no error")
	}
}
