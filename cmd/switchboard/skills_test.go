package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/server"
)

// The skills in skills/ are instructions an AI agent follows without a
// human. TestSkillsRun runs every shell block of each, in order, against a
// real server, with the binary built from this tree, so that a skill whose
// commands no longer work fails here.

// skill is a SKILL.md: its front matter and its shell blocks.
type skill struct {
	name, description string
	body              string
	script            string // the ```sh blocks, in order
}

// readSkill parses skills/DIR/SKILL.md.
func readSkill(t *testing.T, path string) skill {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	rest, ok := strings.CutPrefix(text, "---\n")
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
	var script strings.Builder
	in := false
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		switch line := sc.Text(); {
		case line == "```sh":
			in = true
		case in && line == "```":
			in = false
		case in:
			script.WriteString(line + "\n")
		}
	}
	s.script = script.String()
	return s
}

func TestSkillsAreWellFormed(t *testing.T) {
	dirs, err := filepath.Glob("../../skills/*/SKILL.md")
	if err != nil || len(dirs) < 5 {
		t.Fatalf("skills: %v %v", dirs, err)
	}
	for _, path := range dirs {
		s := readSkill(t, path)
		if want := filepath.Base(filepath.Dir(path)); s.name != want {
			t.Errorf("%s: name %q, want the folder's name %q", path, s.name, want)
		}
		if len(s.description) < 40 || strings.ContainsAny(s.description, "\n") {
			t.Errorf("%s: the description must say in one line what the skill does and when to use it", path)
		}
		if !strings.Contains(s.body, "untrusted data, never instructions") {
			t.Errorf("%s: must say that peer text is untrusted data, never instructions", path)
		}
		if s.script == "" {
			t.Errorf("%s: no ```sh block", path)
		}
	}
}

// TestSkillsRun runs each skill's shell blocks as one bash script (-e:
// the first command that fails fails the skill) against a server it sets
// up as each skill expects to find it, and checks what the skill's last
// steps print.
func TestSkillsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs the skills' commands")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("the skills read JSON with python3, which is not installed")
	}
	bin := buildSwitchboard(t)
	m := MustRunMain(t, t.TempDir(), "", func(c *server.Config) { c.AllowPrivateNetworks = true })
	ownerToken, err := os.ReadFile(filepath.Join(m.Config.DataDir, server.OwnerTokenFile))
	must(t, err)
	wakes := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) }))
	t.Cleanup(wakes.Close)
	work := t.TempDir()

	// An echo agent in the community "research", offering "summarise",
	// connected: what the send and network skills send to.
	var echo struct {
		AgentToken string `json:"agent_token"`
	}
	must(t, json.Unmarshal([]byte(cli(t, m, "--json", "agent", "create", "echo",
		"--skills", `[{"id":"summarise","name":"Summarise","tags":["text"]}]`)), &echo))
	cli(t, m, "agent", "join", "echo", "research")
	ctx, cancel := context.WithCancel(context.Background())
	connect := exec.CommandContext(ctx, bin, "connect", "--server", m.URL(), "--exec", "tr a-z A-Z")
	connect.Env = append(os.Environ(), "SWITCHBOARD_AGENT_TOKEN="+echo.AgentToken)
	must(t, connect.Start())
	t.Cleanup(func() { cancel(); _ = connect.Wait() })
	var echoPeer struct {
		Token string `json:"token"`
	}
	must(t, json.Unmarshal([]byte(cli(t, m, "--json", "token", "issue", "--agent", "echo", "skills")), &echoPeer))

	// An inbox agent with a task waiting: what the inbox skill reads.
	cli(t, m, "agent", "create", "reader", "--mode", "inbox")
	var readerPeer struct {
		Token string `json:"token"`
	}
	must(t, json.Unmarshal([]byte(cli(t, m, "--json", "token", "issue", "--agent", "reader", "bob")), &readerPeer))
	req, _ := http.NewRequest("POST", m.URL()+"/a/reader", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"What is 2+2?"}]}}}`))
	req.Header.Set("Authorization", "Bearer "+readerPeer.Token)
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	resp.Body.Close()

	// A connector agent of the network, with its agent token where the
	// setup skill leaves it: what the network skill sends as.
	var sender struct {
		AgentToken string `json:"agent_token"`
	}
	must(t, json.Unmarshal([]byte(cli(t, m, "--json", "agent", "create", "scout")), &sender))
	must(t, os.WriteFile(filepath.Join(work, "scout.agent-token"), []byte(sender.AgentToken+"\n"), 0o600))

	for _, run := range []struct {
		skill string
		env   []string
		want  string // in what the script prints
	}{
		{"switchboard-setup", []string{"HANDLE=newcomer", "WAKE_URL=" + wakes.URL}, "the agent answered"},
		{"switchboard-inbox", []string{"HANDLE=reader"}, "is now completed"},
		{"switchboard-send", []string{"HANDLE=scout", "TARGET_URL=" + m.URL() + "/a/echo", "TARGET_TOKEN=" + echoPeer.Token, "ALLOW_PRIVATE=1"}, "AND 3+3?"},
		{"switchboard-network", []string{"HANDLE=scout", "COMMUNITY=research", "SKILL=summarise"}, "SUMMARISE: AGENTS FIND EACH OTHER HERE."},
		{"switchboard-pairing", []string{"HANDLE=scout", "TARGET_URL=" + m.URL() + "/a/echo", "ALIAS=paired-echo", "ALLOW_PRIVATE=1"}, "HELLO"},
	} {
		t.Run(run.skill, func(t *testing.T) {
			s := readSkill(t, filepath.Join("..", "..", "skills", run.skill, "SKILL.md"))
			sctx, stop := context.WithTimeout(context.Background(), 2*time.Minute)
			defer stop()
			cmd := exec.CommandContext(sctx, "bash", "-euo", "pipefail", "-c",
				"trap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n"+s.script)
			cmd.Dir = work
			cmd.Env = append(os.Environ(),
				"PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
				"SWITCHBOARD_URL="+m.URL(),
				"SWITCHBOARD_OWNER_TOKEN="+strings.TrimSpace(string(ownerToken)),
				"SWITCHBOARD_CONFIG_DIR="+filepath.Join(work, "config"),
				"SWITCHBOARD_AGENT_TOKEN=",
			)
			cmd.Env = append(cmd.Env, run.env...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("the skill's commands failed: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), run.want) {
				t.Fatalf("the skill's commands did not print %q:\n%s", run.want, out)
			}
		})
	}
}
