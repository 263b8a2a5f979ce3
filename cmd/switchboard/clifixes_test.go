package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInboxJSONEmpty: an empty inbox is "tasks": [], never null.
func TestInboxJSONEmpty(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	cli(t, m, "agent", "create", "box", "--mode", "inbox")
	out := cli(t, m, "--json", "inbox", "--agent", "box")
	var boxes []map[string]any
	if err := json.Unmarshal([]byte(out), &boxes); err != nil || len(boxes) != 1 {
		t.Fatalf("inbox --json: %v %s", err, out)
	}
	if tasks, ok := boxes[0]["tasks"].([]any); !ok || len(tasks) != 0 {
		t.Fatalf("an empty inbox's tasks: %s", out)
	}
}

// TestDirectoryEmptyToken: --token "" is an error, not the owner's view;
// --live lists only live agents.
func TestDirectoryEmptyToken(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	networkAgent(t, m, "a", "", "lab")
	networkAgent(t, m, "b", "", "lab")
	if _, err := cliErr(m, "directory", "--token", ""); err == nil || !strings.Contains(err.Error(), "--token is empty") {
		t.Fatalf("directory --token '': %v", err)
	}
	if out := cli(t, m, "directory"); !strings.Contains(out, "a ") || !strings.Contains(out, "b ") {
		t.Fatalf("directory: %s", out)
	}
	if out := cli(t, m, "directory", "--live"); strings.Contains(out, "\na ") || strings.Contains(out, "\nb ") {
		t.Fatalf("directory --live lists agents that are not live: %s", out)
	}
}

// TestPeersAddHandle: peers add takes the handle of an agent on the
// configured server.
func TestPeersAddHandle(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	cli(t, m, "agent", "create", "translator", "--mode", "inbox")
	out := cli(t, m, "peers", "add", "tr", "translator")
	if !strings.Contains(out, "peer tr → "+m.URL()+"/a/translator") {
		t.Fatalf("peers add by handle: %s", out)
	}
	if _, err := cliErr(m, "peers", "add", "bad", "Not A Handle!"); err == nil {
		t.Fatal("peers add with neither a URL nor a handle")
	}
}

// TestSaveTokenNeverTruncates: agent create --save writes the token
// through a temporary file; a second create of the same handle fails and
// leaves the saved token whole; rotate-token --save replaces it whole.
func TestSaveTokenNeverTruncates(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	file := filepath.Join(t.TempDir(), "desk.token")
	out := cli(t, m, "agent", "create", "desk", "--mode", "inbox", "--save", file)
	if strings.Contains(out, "sba_") || !strings.Contains(out, "saved in "+file) {
		t.Fatalf("create --save prints the token or not where it went: %s", out)
	}
	first, err := os.ReadFile(file)
	must(t, err)
	if fi, _ := os.Stat(file); !strings.HasPrefix(string(first), "sba_") || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the saved token: %q %v", first, fi.Mode())
	}
	if _, err := cliErr(m, "agent", "create", "desk", "--mode", "inbox", "--save", file); err == nil {
		t.Fatal("a second create of the same handle")
	}
	if again, _ := os.ReadFile(file); string(again) != string(first) {
		t.Fatalf("the failed create changed the saved token: %q", again)
	}
	cli(t, m, "agent", "rotate-token", "desk", "--save", file)
	second, _ := os.ReadFile(file)
	if !strings.HasPrefix(string(second), "sba_") || string(second) == string(first) {
		t.Fatalf("rotate-token --save: %q", second)
	}
	// The saved token works: the inbox agent reads its directory with it.
	cli(t, m, "agent", "join", "desk", "lab")
	if _, err := cliErr(m, "directory", "--token", strings.TrimSpace(string(second))); err != nil {
		t.Fatalf("directory with the saved token: %v", err)
	}
}
