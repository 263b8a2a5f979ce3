package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/testwait"
)

// pairInBackground runs switchboard pair against m's agent and returns a
// channel with its output and error once it ends.
func pairInBackground(m *Main, configDir string, args ...string) <-chan [2]any {
	done := make(chan [2]any, 1)
	go func() {
		var buf bytes.Buffer
		full := append([]string{"--config-dir", configDir, "pair"}, args...)
		err := run(context.Background(), full, &buf)
		done <- [2]any{buf.String(), err}
	}()
	return done
}

// approveNext waits for one pending request of the account and approves
// it with the CLI, by its code alone.
func approveNext(t *testing.T, m *Main) {
	t.Helper()
	var code string
	testwait.For(t, "a pairing request", func() bool {
		var all []agentPairings
		if err := json.Unmarshal([]byte(cli(t, m, "--json", "pairing", "list")), &all); err != nil {
			t.Fatal(err)
		}
		for _, a := range all {
			for _, p := range a.Pairings {
				code = p.UserCode
			}
		}
		return code != ""
	})
	if out := cli(t, m, "pairing", "approve", strings.ToLower(code)); !strings.Contains(out, "approved") {
		t.Fatalf("approve: %s", out)
	}
}

// TestPairWithTheDeviceFlow: switchboard pair (golang.org/x/oauth2's device
// flow, an implementation independent of the server's) gets a token the
// owner approves with switchboard pairing approve, stores it in peers.json
// (0600, never printed), and pairing again replaces it.
func TestPairWithTheDeviceFlow(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	cli(t, m, "agent", "create", "helper", "--mode", "inbox")
	conf := t.TempDir()
	addr := m.URL() + "/a/helper"

	done := pairInBackground(m, conf, addr, "--name", "Barry Bot", "--alias", "helper-there", "--allow-private")
	approveNext(t, m)
	res := <-done
	out, err := res[0].(string), res[1]
	if err != nil {
		t.Fatalf("pair: %v\n%s", err, out)
	}
	if !strings.Contains(out, "code: ") || !strings.Contains(out, addr+"/device?user_code=") || !strings.Contains(out, `labelled "Barry-Bot"`) {
		t.Fatalf("pair printed:\n%s", out)
	}
	cfg, err := loadPeers(conf)
	if err != nil {
		t.Fatal(err)
	}
	first := cfg.Peers["helper-there"]
	if first == nil || first.URL != addr || !strings.HasPrefix(first.Token, "sbp_") || strings.Contains(out, first.Token) {
		t.Fatalf("stored %+v; printed:\n%s", first, out)
	}
	if fi, err := os.Stat(filepath.Join(conf, peersFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("peers.json: %v %v", fi.Mode(), err)
	}

	// Again with the same alias: the request presents the stored token, and
	// the approval replaces it under the same label.
	done = pairInBackground(m, conf, addr, "--name", "Barry Bot", "--alias", "helper-there")
	approveNext(t, m)
	if res := <-done; res[1] != nil {
		t.Fatalf("pair again: %v\n%s", res[1], res[0])
	}
	cfg, _ = loadPeers(conf)
	if cfg.Peers["helper-there"].Token == first.Token {
		t.Fatal("the token was not replaced")
	}
	list := cli(t, m, "token", "list", "--agent", "helper", "--all")
	if strings.Count(list, "Barry-Bot") != 2 || !strings.Contains(list, "revoked") || strings.Contains(list, "Barry-Bot-2") {
		t.Fatalf("tokens after a re-pairing:\n%s", list)
	}
}
