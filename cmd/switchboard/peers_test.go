package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPeersConfig(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	dir := filepath.Join(t.TempDir(), "cfg")
	t.Setenv("SWITCHBOARD_CONFIG_DIR", dir)
	const secret = "sbp_very-secret-token-value"

	// The token comes from stdin and is stored; nothing prints it.
	out, _, err := cliIO(m, secret+"\n", "peers", "add", "bob", "https://bob.example/a/bob/", "--token-stdin")
	if err != nil || strings.Contains(out, secret) || !strings.Contains(out, fingerprint(secret)) {
		t.Fatalf("peers add: %v %s", err, out)
	}
	file := filepath.Join(dir, peersFile)
	for path, want := range map[string]os.FileMode{dir: 0o700, file: 0o600} {
		info, err := os.Stat(path)
		if err != nil || info.Mode().Perm() != want {
			t.Fatalf("%s: %v mode %o, want %o", path, err, info.Mode().Perm(), want)
		}
	}
	if b, _ := os.ReadFile(file); !strings.Contains(string(b), secret) || !strings.Contains(string(b), `"url": "https://bob.example/a/bob"`) {
		t.Fatalf("config file: %s", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("files left beside the config: %v", entries)
	}

	// A token from a variable is read when used, and shown as set or missing.
	cli(t, m, "peers", "add", "carol", "https://carol.example", "--token-env", "CAROL_TOKEN")
	cli(t, m, "peers", "add", "dan", "http://10.0.0.5:9000", "--allow-private")
	out = cli(t, m, "peers", "list")
	if strings.Contains(out, secret) || !strings.Contains(out, "bob  https://bob.example/a/bob  token stored ("+fingerprint(secret)+")") ||
		!strings.Contains(out, "from $CAROL_TOKEN (missing)") || !strings.Contains(out, "dan  http://10.0.0.5:9000  token (none)  (private network allowed)") {
		t.Fatalf("peers list: %s", out)
	}
	t.Setenv("CAROL_TOKEN", "carol-secret")
	out = cli(t, m, "--json", "peers", "list")
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 3 || strings.Contains(out, "carol-secret") ||
		!strings.Contains(out, "from $CAROL_TOKEN (set, "+fingerprint("carol-secret")+")") {
		t.Fatalf("peers list --json: %v %s", err, out)
	}

	// Refusals change nothing.
	before, _ := os.ReadFile(file)
	for _, args := range [][]string{
		{"peers", "add", "bob", "https://other.example"},                               // exists
		{"peers", "add", "bad/alias", "https://x.example"},                             // alias
		{"peers", "add", "eve", "ftp://x.example"},                                     // scheme
		{"peers", "add", "eve", "https://user:pw@x.example"},                           // credentials
		{"peers", "add", "eve", "https://x.example", "--token-stdin", "--token-env=X"}, // both
		{"peers", "rm", "nobody"},
	} {
		if _, _, err := cliIO(m, "tok\n", args...); err == nil {
			t.Fatalf("%v accepted", args)
		}
	}
	if after, _ := os.ReadFile(file); string(after) != string(before) {
		t.Fatal("a refused command changed the config")
	}
	if _, _, err := cliIO(m, "", "peers", "add", "eve", "https://x.example", "--token-stdin"); err == nil {
		t.Fatal("an empty stdin token was accepted")
	}

	cli(t, m, "peers", "add", "bob", "https://bob2.example", "--replace")
	cli(t, m, "peers", "rm", "carol")
	out = cli(t, m, "peers", "list")
	if strings.Contains(out, "carol") || !strings.Contains(out, "bob  https://bob2.example  token (none)") {
		t.Fatalf("after replace and rm: %s", out)
	}
	if b, _ := os.ReadFile(file); strings.Contains(string(b), secret) {
		t.Fatal("the replaced token is still stored")
	}
}

func TestSendTokenFromArgvWarns(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	cli(t, m, "agent", "create", "alice", "--mode", "inbox")
	t.Setenv("SWITCHBOARD_CONFIG_DIR", t.TempDir())
	// The target does not exist; the note comes before anything is sent.
	_, errOut, err := cliIO(m, "", "send", "nobody", "--agent", "alice", "--text", "x", "--token", "sbp_argv")
	if err == nil || !strings.Contains(errOut, "visible in the process list") || strings.Contains(errOut, "sbp_argv") {
		t.Fatalf("argv token: %v %q", err, errOut)
	}
	if _, _, err := cliIO(m, "", "send", "nobody", "--agent", "alice", "--text", "x", "--token", "a", "--token-env", "B"); err == nil ||
		!strings.Contains(err.Error(), "one of") {
		t.Fatalf("two token sources: %v", err)
	}
}
