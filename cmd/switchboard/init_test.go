package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard-dev/switchboard/server"
)

// initCLI runs the command line with the server's owner token file but
// without --server: the commands find the server in the client config
// that init saved (init itself is given --server).
func initCLI(t *testing.T, m *server.Server, args ...string) string {
	t.Helper()
	var buf bytes.Buffer
	full := append([]string{"--data", m.Config.DataDir}, args...)
	if err := run(context.Background(), full, &buf); err != nil {
		t.Fatalf("switchboard %s: %v\n%s", strings.Join(args, " "), err, buf.String())
	}
	return buf.String()
}

// peerTokenIn returns the peer token init printed.
func peerTokenIn(t *testing.T, out string) string {
	t.Helper()
	tok := regexp.MustCompile(`sbp_[A-Za-z0-9_-]+`).FindString(out)
	if tok == "" {
		t.Fatalf("no peer token in:\n%s", out)
	}
	return tok
}

// sendAsPeer sends a message to the agent's address and returns the
// JSON-RPC answer.
func sendAsPeer(t *testing.T, m *server.Server, handle, token, text string) string {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-` + handle + `","role":"ROLE_USER","parts":[{"text":"` + text + `"}]}}}`
	req, _ := http.NewRequest("POST", m.URL()+"/a/"+handle, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestInitConnector: init creates a connector agent, keeps its token in a
// 0600 file of the client config, issues a first peer token; connect then
// runs without --token, and the peer's task completes. A second run
// changes nothing.
func TestInitConnector(t *testing.T) {
	cfgDir := t.TempDir()
	t.Setenv("SWITCHBOARD_CONFIG_DIR", cfgDir)
	m := MustRunMain(t, t.TempDir(), "")
	out := cli(t, m, "init", "shout", "--exec", "tr a-z A-Z", "--description", "Says it louder")
	for _, want := range []string{"done: create the connector agent shout", "done: save the client config", "done: issue a peer token", "/a/shout", "curl -s"} {
		if !strings.Contains(out, want) {
			t.Fatalf("init did not say %q:\n%s", want, out)
		}
	}
	peer := peerTokenIn(t, out)
	tokenFile := filepath.Join(cfgDir, "agents", "shout.token")
	st, err := os.Stat(tokenFile)
	must(t, err)
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("agent token file mode %v, want 0600", st.Mode().Perm())
	}
	var g struct{ ID string }
	must(t, json.Unmarshal([]byte(cli(t, m, "--json", "agent", "show", "shout")), &g))
	startConnect(t, m, g.ID, "--exec", "tr a-z A-Z") // no --token: the saved one
	if got := sendAsPeer(t, m, "shout", peer, "hello"); !strings.Contains(got, "HELLO") {
		t.Fatalf("the peer's task: %s", got)
	}

	again := cli(t, m, "init", "shout", "--exec", "tr a-z A-Z")
	if !strings.Contains(again, "nothing to change") || strings.Contains(again, "done:") || strings.Contains(again, "sbp_") {
		t.Fatalf("second run:\n%s", again)
	}
	// The commands that act for an agent find it, and the server, in the
	// client config.
	status := initCLI(t, m, "status")
	for _, want := range []string{"shout (connector)", "next step: none", "a connector is connected, since ", "(used less than a minute ago)"} {
		if !strings.Contains(status, want) {
			t.Fatalf("status after init did not say %q:\n%s", want, status)
		}
	}
}

// TestStatusSavedTokenRotated: once the agent token init saved is rotated
// away, status names that first, with the file it is saved in.
func TestStatusSavedTokenRotated(t *testing.T) {
	cfgDir := t.TempDir()
	t.Setenv("SWITCHBOARD_CONFIG_DIR", cfgDir)
	m := MustRunMain(t, t.TempDir(), "")
	cli(t, m, "init", "shout", "--exec", "tr a-z A-Z")
	var s agentStatus
	must(t, json.Unmarshal([]byte(initCLI(t, m, "--json", "status")), &s))
	if s.Rule == "agent token revoked" || s.AgentTokenRefused == nil || *s.AgentTokenRefused {
		t.Fatalf("status with the saved token good: rule %q, refused %v", s.Rule, s.AgentTokenRefused)
	}
	cli(t, m, "agent", "rotate-token", "shout")
	must(t, json.Unmarshal([]byte(initCLI(t, m, "--json", "status")), &s))
	if s.Rule != "agent token revoked" || !strings.Contains(s.Next, filepath.Join(cfgDir, "agents", "shout.token")) {
		t.Fatalf("status after the token's rotation: rule %q, next %q", s.Rule, s.Next)
	}
}

// TestInitRotatesWithoutSavedToken: when the saved agent token is gone,
// init gives the agent a new one (its --dry-run says so and writes
// nothing).
func TestInitRotatesWithoutSavedToken(t *testing.T) {
	cfgDir := t.TempDir()
	t.Setenv("SWITCHBOARD_CONFIG_DIR", cfgDir)
	m := MustRunMain(t, t.TempDir(), "")
	cli(t, m, "init", "shout", "--exec", "tr a-z A-Z")
	tokenFile := filepath.Join(cfgDir, "agents", "shout.token")
	must(t, os.Remove(tokenFile))
	dry := cli(t, m, "init", "shout", "--exec", "tr a-z A-Z", "--dry-run")
	if !strings.Contains(dry, "would") || !strings.Contains(dry, "new agent token") {
		t.Fatalf("dry run without the saved token:\n%s", dry)
	}
	if _, err := os.Stat(tokenFile); err == nil {
		t.Fatal("--dry-run wrote the token")
	}
	if out := cli(t, m, "init", "shout", "--exec", "tr a-z A-Z"); !strings.Contains(out, "done: give agent shout a new agent token") {
		t.Fatalf("init without the saved token:\n%s", out)
	}
	if _, err := os.Stat(tokenFile); err != nil {
		t.Fatal(err)
	}
}

// TestInitInbox: init creates an inbox agent with its wake webhook; the
// dry run of another changes nothing; the wrong mode is refused.
func TestInitInbox(t *testing.T) {
	t.Setenv("SWITCHBOARD_CONFIG_DIR", t.TempDir())
	var woken atomic.Int64
	wakes := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		woken.Add(1)
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(wakes.Close)
	m := MustRunMain(t, t.TempDir(), "", func(c *server.Config) { c.AllowPrivateNetworks = true })

	dry := cli(t, m, "init", "desk", "--inbox", "--wake", wakes.URL, "--dry-run")
	if !strings.Contains(dry, "create the inbox agent desk") || !strings.Contains(dry, "set the wake webhook") {
		t.Fatalf("dry run:\n%s", dry)
	}
	if _, err := cliErr(m, "agent", "show", "desk"); err == nil {
		t.Fatal("--dry-run created the agent")
	}
	out := cli(t, m, "init", "desk", "--inbox", "--wake", wakes.URL)
	if !strings.Contains(out, "done: set the wake webhook") {
		t.Fatalf("init:\n%s", out)
	}
	if again := cli(t, m, "init", "desk", "--inbox", "--wake", wakes.URL); !strings.Contains(again, "nothing to change") {
		t.Fatalf("second run:\n%s", again)
	}
	if st := initCLI(t, m, "status"); !strings.Contains(st, "never fired") || !strings.Contains(st, "wake test --agent desk") {
		t.Fatalf("status of an inbox agent whose wake never fired:\n%s", st)
	}
	if _, err := cliErr(m, "init", "desk", "--exec", "cat"); err == nil || !strings.Contains(err.Error(), "exists in mode inbox") {
		t.Fatalf("another mode: %v", err)
	}
	for _, bad := range [][]string{{"init", "x"}, {"init", "x", "--exec", "cat", "--wake", "http://w"}, {"init", "x", "--inbox", "--install"}} {
		if _, err := cliErr(m, bad...); err == nil {
			t.Fatalf("%v: no error", bad)
		}
	}
}

// TestDefaultAgent: after init, inbox and send act for the configured
// agent without --agent.
func TestDefaultAgent(t *testing.T) {
	t.Setenv("SWITCHBOARD_CONFIG_DIR", t.TempDir())
	m := MustRunMain(t, t.TempDir(), "")
	cli(t, m, "agent", "create", "other", "--mode", "inbox")
	otherPeer := peerTokenIn(t, cli(t, m, "token", "issue", "--agent", "other", "bob"))
	sendAsPeer(t, m, "other", otherPeer, "for other")
	out := cli(t, m, "init", "mine", "--inbox")
	sendAsPeer(t, m, "mine", peerTokenIn(t, out), "for mine")
	box := initCLI(t, m, "inbox")
	if !strings.Contains(box, "for mine") || strings.Contains(box, "for other") {
		t.Fatalf("inbox without --agent, after init:\n%s", box)
	}
	if all := initCLI(t, m, "inbox", "--agent", "other"); !strings.Contains(all, "for other") {
		t.Fatalf("inbox --agent other:\n%s", all)
	}
	t.Setenv("OTHER_TOKEN", otherPeer)
	sent := initCLI(t, m, "send", "other", "--text", "from mine", "--token-env", "OTHER_TOKEN")
	if !strings.Contains(sent, "sent to other") {
		t.Fatalf("send without --agent:\n%s", sent)
	}
	if ob := initCLI(t, m, "outbox"); !strings.Contains(ob, "agent mine") {
		t.Fatalf("outbox without --agent:\n%s", ob)
	}
}

// TestInitInstall: --install writes the connector's user unit and its
// 0600 environment file with the agent token (and starts it when
// systemctl can); a second run finds it installed.
func TestInitInstall(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	t.Setenv("SWITCHBOARD_CONFIG_DIR", t.TempDir())
	m := MustRunMain(t, t.TempDir(), "")
	out := cli(t, m, "init", "svc", "--exec", "cat", "--install")
	if !strings.Contains(out, "done: install the connector of svc") {
		t.Fatalf("init --install:\n%s", out)
	}
	unit, err := os.ReadFile(filepath.Join(xdg, "systemd", "user", "switchboard-connect-svc.service"))
	must(t, err)
	if !strings.Contains(string(unit), "connect") || strings.Contains(string(unit), "sba_") {
		t.Fatalf("unit:\n%s", unit)
	}
	envFile := filepath.Join(xdg, "switchboard", "connect-svc.env")
	env, err := os.ReadFile(envFile)
	must(t, err)
	st, err := os.Stat(envFile)
	must(t, err)
	if !strings.Contains(string(env), "SWITCHBOARD_AGENT_TOKEN=sba_") || st.Mode().Perm() != 0o600 {
		t.Fatalf("environment file (%v):\n%s", st.Mode().Perm(), env)
	}
	if again := cli(t, m, "init", "svc", "--exec", "cat", "--install"); !strings.Contains(again, "nothing to change") {
		t.Fatalf("second run:\n%s", again)
	}
	// A new agent token reaches the installed unit's environment file.
	must(t, os.Remove(filepath.Join(os.Getenv("SWITCHBOARD_CONFIG_DIR"), "agents", "svc.token")))
	third := cli(t, m, "init", "svc", "--exec", "cat", "--install")
	if !strings.Contains(third, "new agent token") || !strings.Contains(third, "done: install the connector of svc") {
		t.Fatalf("run without the saved token:\n%s", third)
	}
	if env2, err := os.ReadFile(envFile); err != nil || string(env2) == string(env) {
		t.Fatalf("the environment file still holds the old token (%v)", err)
	}
}
