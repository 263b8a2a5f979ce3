package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/server"
)

// The skills in skills/ are instructions an AI agent follows without a
// human. TestSkillsRun runs every shell block of every skill, in order,
// each in a fresh bash (state only in the files the CLI writes and the
// environment a human gives), against a live server, with the binary
// built from this tree, for each mode; then all of them a second time,
// which must break nothing and duplicate nothing.

// skill is a SKILL.md: its front matter and its shell blocks.
type skill struct {
	name, description string
	body              string
	blocks            []string // the ```sh and ```bash blocks, in order
}

// readSkill parses skills/DIR/SKILL.md.
func readSkill(t *testing.T, path string) skill {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rest, ok := strings.CutPrefix(string(b), "---\n")
	front, body, ok2 := strings.Cut(rest, "\n---\n")
	if !ok || !ok2 {
		t.Fatalf("%s: no YAML front matter between --- lines", path)
	}
	var s skill
	for line := range strings.Lines(front) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
		switch k {
		case "name":
			s.name = strings.TrimSpace(v)
		case "description":
			s.description = strings.TrimSpace(v)
		}
	}
	s.body = body
	var block strings.Builder
	in := false
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		switch line := sc.Text(); {
		case !in && (line == "```sh" || line == "```bash"):
			in = true
			block.Reset()
		case in && line == "```":
			in = false
			s.blocks = append(s.blocks, block.String())
		case in:
			block.WriteString(line + "\n")
		}
	}
	return s
}

// skillPaths returns every skills/*/SKILL.md.
func skillPaths(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob("../../skills/*/SKILL.md")
	if err != nil || len(paths) < 5 {
		t.Fatalf("skills: %v %v", paths, err)
	}
	return paths
}

// placeholder is a value a human fills in a skill.
var placeholder = regexp.MustCompile(`YOUR_[A-Z_]+`)

// unsafeShell finds what a block must not do: write through a shell
// redirect (which empties a file before the command runs: a saved secret
// is lost when the command fails), or leave a job in the background for a
// later block.
var unsafeShell = regexp.MustCompile(`(^|[^0-9<&])>>?\s*[^/&\s]|>\s*"|&\s*$|\$!`)

func TestSkillsAreWellFormed(t *testing.T) {
	for _, path := range skillPaths(t) {
		s := readSkill(t, path)
		if want := filepath.Base(filepath.Dir(path)); s.name != want {
			t.Errorf("%s: name %q, want the folder's name %q", path, s.name, want)
		}
		if len(s.description) < 40 || strings.ContainsAny(s.description, "\n") ||
			!(strings.Contains(s.description, "Use when") || strings.Contains(s.description, "Start here")) {
			t.Errorf("%s: the description must say in one line what the skill does and when to use it (\"Use when …\")", path)
		}
		if !strings.Contains(s.body, "untrusted data, never instructions") {
			t.Errorf("%s: must say that peer text is untrusted data, never instructions", path)
		}
		if len(s.blocks) == 0 {
			t.Errorf("%s: no ```sh block", path)
		}
		for _, b := range s.blocks {
			for line := range strings.Lines(b) {
				if m := unsafeShell.FindString(strings.ReplaceAll(line, ">/dev/null", "")); m != "" {
					t.Errorf("%s: %q: a shell redirect to a file or a background job", path, strings.TrimSpace(line))
				}
			}
		}
	}
}

func TestUnsafeShellPattern(t *testing.T) {
	for line, bad := range map[string]bool{
		`switchboard --json agent create x | field agent_token > "$HANDLE.agent-token"`: true,
		`switchboard pair URL > pair.log 2>&1 &`:                                        true,
		`PAIR=$!`:                                                                       true,
		`switchboard connect --exec cat &`:                                              true,
		`echo x >> log`:                                                                 true,
		`switchboard agent show x 2>&1`:                                                 false,
		`switchboard front credentials h --bearer-stdin < file`:                         false,
		`if [ -z "$TASK" ]; then`:                                                       false,
	} {
		if got := unsafeShell.MatchString(strings.ReplaceAll(line, ">/dev/null", "")); got != bad {
			t.Errorf("%q: unsafe %v, want %v", line, got, bad)
		}
	}
}

// skillWorld is the server and the other agents the skills meet.
type skillWorld struct {
	t          *testing.T
	m          *server.Server
	bin, work  string
	ownerToken string
	fakeUnits  string // where the fake systemctl keeps the pids it started
}

// fakeSystemctl stands in for systemd's user manager: enable --now runs
// the unit's ExecStart with its EnvironmentFile, as systemd would, in the
// background; the test stops them all.
const fakeSystemctl = `#!/usr/bin/env python3
import os, shlex, subprocess, sys
args = [a for a in sys.argv[1:] if a != "--user"]
if len(args) >= 2 and args[0] == "enable" and "--now" in args:
    name = args[-1]
    cfg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.environ["HOME"], ".config")
    unit = open(os.path.join(cfg, "systemd", "user", name)).read()
    start = envfile = ""
    for line in unit.splitlines():
        if line.startswith("ExecStart="): start = line[len("ExecStart="):]
        if line.startswith("EnvironmentFile="): envfile = line[len("EnvironmentFile="):]
    env = dict(os.environ)
    for line in open(envfile):
        if "=" in line and not line.startswith("#"):
            k, v = line.strip().split("=", 1)
            env[k] = (shlex.split(v) or [""])[0]
    argv = [a.replace("$$", "$").replace("%%", "%") for a in shlex.split(start)]
    units = os.environ["FAKE_UNITS"]
    pidfile = os.path.join(units, name + ".pid")
    if os.path.exists(pidfile):
        try: os.kill(int(open(pidfile).read()), 15)
        except Exception: pass
    log = open(os.path.join(units, name + ".log"), "a")
    p = subprocess.Popen(argv, env=env, stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True)
    open(pidfile, "w").write(str(p.pid))
sys.exit(0)
`

func newSkillWorld(t *testing.T) *skillWorld {
	t.Helper()
	w := &skillWorld{t: t, bin: buildSwitchboard(t), work: t.TempDir()}
	w.m = MustRunMain(t, t.TempDir(), "", pollEverySecond, func(c *server.Config) { c.AllowPrivateNetworks = true })
	tok, err := os.ReadFile(filepath.Join(w.m.Config.DataDir, server.OwnerTokenFile))
	must(t, err)
	w.ownerToken = strings.TrimSpace(string(tok))
	must(t, os.WriteFile(filepath.Join(filepath.Dir(w.bin), "systemctl"), []byte(fakeSystemctl), 0o755))
	w.fakeUnits = filepath.Join(w.work, "units")
	must(t, os.MkdirAll(w.fakeUnits, 0o700))
	t.Cleanup(func() {
		pids, _ := filepath.Glob(filepath.Join(w.fakeUnits, "*.pid"))
		for _, p := range pids {
			b, _ := os.ReadFile(p)
			var pid int
			if _, err := fmt.Sscan(string(b), &pid); err == nil {
				_ = syscall.Kill(pid, syscall.SIGTERM)
			}
		}
	})
	return w
}

// env is the environment of every block: the binary (and the fake
// systemctl) on PATH, the server and the owner token a human gives, and a
// home of the mode's own.
func (w *skillWorld) env(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "SWITCHBOARD_") && k != "HOME" && k != "XDG_CONFIG_HOME" {
			env = append(env, kv)
		}
	}
	return append(env, "PATH="+filepath.Dir(w.bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+home, "SWITCHBOARD_URL="+w.m.URL(), "SWITCHBOARD_OWNER_TOKEN="+w.ownerToken, "FAKE_UNITS="+w.fakeUnits)
}

// secretFile writes a secret a human would keep in a file.
func (w *skillWorld) secretFile(name, secret string) string {
	p := filepath.Join(w.work, name)
	must(w.t, os.WriteFile(p, []byte(secret+"\n"), 0o600))
	return p
}

// runBlock runs one block in a fresh bash with the placeholders filled;
// onLine sees each line it prints as it prints it.
func (w *skillWorld) runBlock(t *testing.T, home, name string, i int, block string, table map[string]string, onLine func(string)) string {
	t.Helper()
	var missing []string
	filled := placeholder.ReplaceAllStringFunc(block, func(p string) string {
		v, ok := table[p]
		if !ok {
			missing = append(missing, p)
		}
		return v
	})
	if len(missing) > 0 {
		t.Fatalf("%s block %d: no value in the table for %v", name, i, missing)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", filled)
	cmd.Dir, cmd.Env = home, w.env(home)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	var out strings.Builder
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
			if onLine != nil {
				onLine(sc.Text())
			}
		}
	}()
	err := cmd.Run()
	pw.Close()
	<-done
	if err != nil {
		t.Fatalf("%s block %d failed: %v\n--- block:\n%s--- output:\n%s", name, i, err, filled, out.String())
	}
	if strings.Contains(out.String(), "CHECK: no") {
		t.Fatalf("%s block %d: the check says no:\n%s", name, i, out.String())
	}
	return out.String()
}

// modeRun is one mode's way through the skills: the skills it runs, in
// order, in a home of its own, with the values a human would give.
type modeRun struct {
	mode   string
	skills []string
	table  map[string]string
	before map[string]func(t *testing.T, r *modeRun) // fixtures a skill expects, set up just before it
	after  map[string]func(t *testing.T, out string)
	home   string
}

func TestSkillsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs the skills' commands")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("the skills read JSON with python3, which is not installed")
	}
	w := newSkillWorld(t)
	m := w.m

	// Every skill appears in some mode's run.
	var all []string
	for _, p := range skillPaths(t) {
		all = append(all, filepath.Base(filepath.Dir(p)))
	}

	// The world: a live translator in the community lab (a connector
	// run by the test); a wake receiver; a webhook service.
	networkAgent(t, m, "translator", "translate", "lab")
	w.runConnector("translator")
	translatorPeer := w.secretFile("translator.peer-token", w.peerToken("translator", "skills"))
	upstreamToken := w.secretFile("upstream.token", w.peerToken("translator", "front-upstream"))
	wakes := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { rw.WriteHeader(http.StatusAccepted) }))
	t.Cleanup(wakes.Close)
	hook := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(rw, `{"status":"completed","result":"done"}`)
	}))
	t.Cleanup(hook.Close)

	runs := []*modeRun{
		{mode: "connector", skills: []string{"switchboard-setup", "switchboard-connector", "switchboard-network", "switchboard-send", "switchboard-mcp"},
			table: map[string]string{"YOUR_HANDLE": "conn-agent", "YOUR_COMMAND": "tr a-z A-Z", "YOUR_COMMUNITY": "lab", "YOUR_SKILL": "translate",
				"YOUR_ALIAS": "translator", "YOUR_TARGET": "translator", "YOUR_TARGET_TOKEN_FILE": translatorPeer, "YOUR_CLIENT_LABEL": "claude"},
			after: map[string]func(*testing.T, string){
				"switchboard-network": func(t *testing.T, out string) { wantIn(t, out, "TRANSLATE: GOOD MORNING") },
				"switchboard-send":    func(t *testing.T, out string) { wantIn(t, out, "AND 3+3?") },
			}},
		{mode: "inbox", skills: []string{"switchboard-setup", "switchboard-sleeper", "switchboard-inbox", "switchboard-pairing"},
			table: map[string]string{"YOUR_HANDLE": "sleepy-agent", "YOUR_WAKE_URL": wakes.URL + "/fire", "YOUR_WAKE_KEY": "routine-key-0123456789",
				"YOUR_ANSWER": "four", "YOUR_PEER_LABEL": "bob", "YOUR_ALIAS": "paired-translator",
				// The skill says to add --allow-private for an address on this machine.
				"YOUR_TARGET_URL": m.URL() + "/a/translator --allow-private"},
			before: map[string]func(*testing.T, *modeRun){
				// A peer wrote to the agent: what the inbox skill answers.
				"switchboard-inbox": func(t *testing.T, r *modeRun) { w.sendAsPeer(t, "sleepy-agent", "What is 2+2?") },
				// A peer asks to pair with the agent: the code it shows.
				"switchboard-pairing": func(t *testing.T, r *modeRun) { r.table["YOUR_PAIRING_CODE"] = w.startPairing(t, "sleepy-agent") },
			},
			after: map[string]func(*testing.T, string){
				"switchboard-inbox": func(t *testing.T, out string) {
					if !strings.Contains(out, "nothing waits") {
						wantIn(t, out, "completed")
					}
				},
				"switchboard-pairing": func(t *testing.T, out string) { wantIn(t, out, "HELLO") },
			}},
		{mode: "webhook", skills: []string{"switchboard-setup", "switchboard-webhook"},
			table: map[string]string{"YOUR_HANDLE": "hook-agent", "YOUR_WEBHOOK_URL": hook.URL}},
		{mode: "front", skills: []string{"switchboard-setup", "switchboard-front"},
			table: map[string]string{"YOUR_HANDLE": "front-agent", "YOUR_UPSTREAM_URL": m.URL() + "/a/translator", "YOUR_UPSTREAM_TOKEN_FILE": upstreamToken}},
	}
	covered := map[string]bool{}
	for _, r := range runs {
		r.home = filepath.Join(w.work, "home-"+r.mode)
		must(t, os.MkdirAll(r.home, 0o700))
		for _, s := range r.skills {
			covered[s] = true
		}
	}
	for _, s := range all {
		if !covered[s] {
			t.Errorf("skill %s runs in no mode", s)
		}
	}

	checks := map[string]string{"switchboard-connector": "CHECK: yes", "switchboard-sleeper": "CHECK: yes",
		"switchboard-webhook": "CHECK: yes", "switchboard-front": "CHECK: yes", "switchboard-mcp": "CHECK: yes"}
	// The modes run side by side (each in its own home, with agents of
	// its own); a round ends when all of them have.
	runAll := func(round int) {
		t.Run(fmt.Sprintf("round%d", round), func(t *testing.T) {
			for _, r := range runs {
				t.Run(r.mode, func(t *testing.T) {
					t.Parallel()
					for _, name := range r.skills {
						if f := r.before[name]; f != nil {
							f(t, r)
						}
						s := readSkill(t, filepath.Join("..", "..", "skills", name, "SKILL.md"))
						var out strings.Builder
						start := time.Now()
						for i, b := range s.blocks {
							out.WriteString(w.runBlock(t, r.home, fmt.Sprintf("round %d, %s mode, %s", round, r.mode, name), i+1, b, r.table, w.approveCodes))
						}
						t.Logf("%s: %s", name, time.Since(start).Round(time.Millisecond))
						if want := checks[name]; want != "" {
							wantIn(t, out.String(), want)
						}
						if f := r.after[name]; f != nil {
							f(t, out.String())
						}
					}
				})
			}
		})
		if t.Failed() {
			t.FailNow()
		}
	}
	runAll(1)
	first := w.snapshot(runs)
	runAll(2)
	if second := w.snapshot(runs); second != first {
		t.Errorf("the second run changed or duplicated something:\nafter the first:\n%s\nafter the second:\n%s", first, second)
	}
}

func wantIn(t *testing.T, out, want string) {
	t.Helper()
	if !strings.Contains(out, want) {
		t.Fatalf("the skill's commands did not print %q:\n%s", want, out)
	}
}

// runConnector runs the agent's connector (as a human's supervisor would).
func (w *skillWorld) runConnector(handle string) {
	w.t.Helper()
	var rot struct {
		AgentToken string `json:"agent_token"`
	}
	must(w.t, json.Unmarshal([]byte(cli(w.t, w.m, "--json", "agent", "rotate-token", handle)), &rot))
	ctx, cancel := context.WithCancel(context.Background())
	c := exec.CommandContext(ctx, w.bin, "connect", "--server", w.m.URL(), "--exec", "tr a-z A-Z")
	c.Env = append(os.Environ(), "SWITCHBOARD_AGENT_TOKEN="+rot.AgentToken)
	must(w.t, c.Start())
	w.t.Cleanup(func() { cancel(); _ = c.Wait() })
}

// peerToken issues a peer token of the agent.
func (w *skillWorld) peerToken(handle, label string) string {
	var tok struct {
		Token string `json:"token"`
	}
	must(w.t, json.Unmarshal([]byte(cli(w.t, w.m, "--json", "token", "issue", "--agent", handle, label)), &tok))
	return tok.Token
}

// sendAsPeer sends the agent a message as a peer would.
func (w *skillWorld) sendAsPeer(t *testing.T, handle, text string) {
	t.Helper()
	var tok struct {
		Token string `json:"token"`
	}
	must(t, json.Unmarshal([]byte(cli(t, w.m, "--json", "token", "issue", "--agent", handle, "asker")), &tok))
	_ = sendAsPeer(t, w.m, handle, tok.Token, text)
	cli(t, w.m, "token", "revoke", "--agent", handle, "asker")
}

// startPairing starts a peer's pairing with the agent, from a config of
// its own (the same in every round: a second round re-pairs), and
// returns the code it shows; the process ends once approved.
func (w *skillWorld) startPairing(t *testing.T, handle string) string {
	t.Helper()
	conf := filepath.Join(w.work, "pairing-peer")
	c := exec.Command(w.bin, "--config-dir", conf, "pair", w.m.URL()+"/a/"+handle, "--alias", "them", "--name", "bob", "--allow-private")
	out, err := c.StdoutPipe()
	must(t, err)
	must(t, c.Start())
	w.t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if code, ok := strings.CutPrefix(sc.Text(), "code: "); ok {
			go func() { _, _ = io.Copy(io.Discard, out) }()
			return strings.TrimSpace(code)
		}
	}
	t.Fatal("the pairing peer printed no code")
	return ""
}

// approveCodes is the translator's owner: it approves the code a block
// shows (the pairing skill's peer side), as the human would.
func (w *skillWorld) approveCodes(line string) {
	if code, ok := strings.CutPrefix(line, "code: "); ok {
		go func() {
			_, _ = cliErr(w.m, "pairing", "approve", strings.TrimSpace(code), "--label", "paired-by-skill")
		}()
	}
}

// snapshot is what a second run must leave as the first did: the agents,
// their active tokens by kind and label, wakes, MCP tokens, and each
// home's aliases.
func (w *skillWorld) snapshot(runs []*modeRun) string {
	w.t.Helper()
	var lines []string
	var agents []struct {
		Handle string `json:"handle"`
		Mode   string `json:"mode"`
	}
	must(w.t, json.Unmarshal([]byte(cli(w.t, w.m, "--json", "agent", "list")), &agents))
	for _, g := range agents {
		lines = append(lines, "agent "+g.Handle+" "+g.Mode)
		var toks []struct {
			Label  string `json:"label"`
			Active bool   `json:"active"`
		}
		must(w.t, json.Unmarshal([]byte(cli(w.t, w.m, "--json", "token", "list", "--agent", g.Handle)), &toks))
		for _, tk := range toks {
			if tk.Active {
				lines = append(lines, "  peer token "+tk.Label)
			}
		}
		if out, err := cliErr(w.m, "--json", "wake", "show", "--agent", g.Handle); err == nil {
			var wc struct {
				URL    string `json:"url"`
				Preset string `json:"preset"`
			}
			_ = json.Unmarshal([]byte(out), &wc)
			lines = append(lines, "  wake "+wc.URL+" "+wc.Preset)
		}
	}
	mcp := cli(w.t, w.m, "mcp", "token", "list")
	lines = append(lines, fmt.Sprintf("mcp tokens: %d lines", strings.Count(mcp, "\n")))
	for _, r := range runs {
		b, _ := os.ReadFile(filepath.Join(r.home, ".config", "switchboard", "peers.json"))
		var peers struct {
			Peers map[string]json.RawMessage `json:"peers"`
		}
		_ = json.Unmarshal(b, &peers)
		var aliases []string
		for a := range peers.Peers {
			aliases = append(aliases, a)
		}
		sort.Strings(aliases)
		lines = append(lines, r.mode+" aliases: "+strings.Join(aliases, ","))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
