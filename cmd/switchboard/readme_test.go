package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestREADMECommands runs the commands README.md shows, block by block, as
// a newcomer would type them: each block that starts with "go build" (or
// the first, "go run") begins afresh, in a directory, data directory,
// config directory and port of its own. What stands for a value printed
// before (sbp_..., TASK_ID, OUTBOX_ID…) is taken from what the commands
// printed; a command the README runs for good (serve, connect, a stream)
// runs in the background, and the next waits until it is ready, as a
// person would. The harness builds the binary once: "go build -o
// switchboard ./cmd/switchboard" copies it, and "go run ./cmd/switchboard"
// runs it.
func TestREADMECommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs the README's commands")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("the README's commands need curl")
	}
	bin := buildSwitchboard(t)
	blocks := readmeBlocks(t)
	var scenarios [][]string
	for _, b := range blocks {
		first := strings.TrimSpace(b[0])
		switch {
		case notRun(b) != "":
			t.Logf("not run: %s (%s)", first, notRun(b))
			continue
		case strings.HasPrefix(first, "go build -o switchboard") || strings.HasPrefix(first, "go run ") || len(scenarios) == 0:
			scenarios = append(scenarios, nil)
		}
		scenarios[len(scenarios)-1] = append(scenarios[len(scenarios)-1], b...)
	}
	if len(scenarios) < 4 {
		t.Fatalf("%d scenarios in README.md: the parser lost some", len(scenarios))
	}
	for _, e := range readmeExpect {
		found := false
		for _, sc := range scenarios {
			found = found || strings.Contains(strings.Join(sc, "\n"), e.command)
		}
		if !found {
			t.Errorf("README.md no longer runs %s: update readmeExpect", e.command)
		}
	}
	for i, sc := range scenarios {
		t.Run(fmt.Sprint("scenario", i+1), func(t *testing.T) {
			runREADMEScenario(t, bin, sc)
		})
	}
}

// notRun says why a block is not run here, or "".
func notRun(block []string) string {
	first := strings.TrimSpace(block[0])
	switch {
	case strings.HasPrefix(first, "go test"):
		return "it is the command that runs this test"
	case strings.Contains(first, "go build -o bin/ ./cmd/..."):
		return "the load tool's runs take minutes; each scenario is run by cmd/switchboard-load's tests"
	case strings.HasPrefix(first, "go install github.com/"):
		return "it fetches a released version over the network; TestResolveBuild covers the version it reports"
	case isInstallBlock(block):
		return "it downloads a release over the network; TestVersionStamped runs it against a release scripts/release builds here"
	case strings.HasPrefix(first, "sudo switchboard deploy"):
		return "it needs root on a machine of its own with systemd and a public name; deploy_test.go runs it against a temporary root"
	}
	return ""
}

// isInstallBlock: block downloads and installs a release.
func isInstallBlock(block []string) bool {
	return slices.ContainsFunc(block, func(l string) bool { return strings.Contains(l, "/releases/download/") })
}

// readmeInstallBlock returns README.md's lines that download and install
// a release, one command a line.
func readmeInstallBlock(t *testing.T) string {
	t.Helper()
	lines, err := readmeInstallLines()
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// readmeInstallLines is readmeInstallBlock for callers without a test.
func readmeInstallLines() (string, error) {
	blocks, err := readmeCodeBlocks()
	if err != nil {
		return "", err
	}
	for _, b := range blocks {
		if isInstallBlock(b) {
			return strings.Join(b, "\n"), nil
		}
	}
	return "", errors.New("README.md has no lines that download a release")
}

// readmeBlocks returns README.md's code blocks (lines indented by four
// spaces after a blank line), each as its logical lines (a trailing
// backslash joins the next line).
func readmeBlocks(t *testing.T) [][]string {
	t.Helper()
	blocks, err := readmeCodeBlocks()
	must(t, err)
	return blocks
}

// readmeCodeBlocks is readmeBlocks for callers without a test.
func readmeCodeBlocks() ([][]string, error) {
	f, err := os.Open("../../README.md")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var blocks [][]string
	var cur []string
	prevBlank, in := true, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "    ") && (in || prevBlank):
			in = true
			l := strings.TrimPrefix(line, "    ")
			if n := len(cur); n > 0 && strings.HasSuffix(cur[n-1], "\\") {
				cur[n-1] = strings.TrimSuffix(cur[n-1], "\\") + " " + strings.TrimSpace(l)
			} else {
				cur = append(cur, l)
			}
		case in && strings.TrimSpace(line) == "":
		default:
			if in && len(cur) > 0 {
				blocks = append(blocks, cur)
			}
			cur, in = nil, false
		}
		prevBlank = strings.TrimSpace(line) == ""
	}
	if len(cur) > 0 {
		blocks = append(blocks, cur)
	}
	return blocks, sc.Err()
}

// readmePlaceholders are what stands for a value in the README, and the
// shell that gives it (last/nth read what the commands printed).
var readmePlaceholders = []struct{ from, to string }{
	{"go build -o switchboard ./cmd/switchboard", `cp "$SB_BIN" ./switchboard`},
	{"go run ./cmd/switchboard", `"$SB_BIN"`},
	{"http://127.0.0.1:8080", "$SB_URL"},
	{"https://agents.example.com/a/bob", "$SB_URL/a/helper --allow-private"},
	{" [--wait] [--push]", ""}, // optional flags
	{"other-handle", "helper"},
	{"sbp_...", `$(last 'sbp_[A-Za-z0-9_-]*')`},
	{"sba_...", `$(last 'sba_[A-Za-z0-9_-]*')`},
	{"sbo_...", `$(last 'sbo_[A-Za-z0-9_-]*')`},
	{"OTHER_TASK_ID", `$(nth 2 'task [0-9a-f-]\{36\}' | cut -d' ' -f2)`},
	{"TASK_ID", `$(nth 1 'task [0-9a-f-]\{36\}' | cut -d' ' -f2)`},
	{"OUTBOX_ID", `$(last 'outbox [0-9a-f-]\{36\}' | cut -d' ' -f2)`},
	{"CONTEXT_ID", `$(last 'context [0-9a-f-]\{36\}' | cut -d' ' -f2)`},
}

// readmeExpect is what a scenario must print when it runs a command: the
// answers the README promises, not only exit statuses (curl -s exits 0 on
// an error answer).
var readmeExpect = []struct{ command, printed string }{
	{"switchboard init echo", "next step:"},
	{"switchboard agent create echo", `"text":"HELLO"`},
	{"switchboard agent create helper", `"state":"TASK_STATE_SUBMITTED"`},
	{`"method":"message/send"`, `"kind":"task"`},
	{"switchboard reply OTHER_TASK_ID", "is now input-required"},
	{`"method":"GetTask"`, `"state":"TASK_STATE_COMPLETED"`},
	{"switchboard history CONTEXT_ID", "Can you check this?"},
	{"agent create acme-bot", "created agent acme-bot"},
}

// readmePrelude is what each scenario's script starts with: where it
// keeps what was printed, and how it reads values back.
const readmePrelude = `set -eo pipefail
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
LOG="$PWD/printed.log"; : > "$LOG"
last() { grep -o "$1" "$LOG" | tail -1; }
nth() { grep -o "$2" "$LOG" | sed -n "$1p"; }
ready() { for i in $(seq 200); do curl -sf "$SB_URL/readyz" >/dev/null && return 0; sleep 0.1; done; echo "the server did not start"; return 1; }
connected() { for i in $(seq 200); do ./switchboard --json agent list | grep -q '"connected": true' && return 0; sleep 0.1; done; echo "no agent connected"; return 1; }
`

// runREADMEScenario runs the commands of one scenario in a fresh place.
func runREADMEScenario(t *testing.T, bin string, lines []string) {
	work := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	addr := l.Addr().String()
	must(t, l.Close())
	var script strings.Builder
	script.WriteString(readmePrelude)
	background := regexp.MustCompile(`(^|\s)(\./switchboard|"\$SB_BIN") (serve|connect)\b|curl -sN`)
	assignment := regexp.MustCompile(`^(export )?[A-Z_]+=`)
	for _, line := range lines {
		cmd := line
		for _, p := range readmePlaceholders {
			cmd = replaceOutsideQuotes(cmd, p.from, p.to)
		}
		if strings.Contains(cmd, "< bob.token") {
			script.WriteString("last 'sbp_[A-Za-z0-9_-]*' > bob.token\n")
		}
		code, _, _ := strings.Cut(cmd, " # ")
		code = strings.TrimSpace(code)
		switch {
		case assignment.MatchString(code):
			script.WriteString(code + "\n")
		case background.MatchString(code):
			code = strings.TrimSuffix(code, "&")
			fmt.Fprintf(&script, "( %s ) >> background.log 2>&1 &\n", code)
			switch {
			case strings.Contains(code, " serve"):
				script.WriteString("ready\n")
			case strings.Contains(code, " connect"):
				script.WriteString("connected\n")
			}
		default:
			fmt.Fprintf(&script, "( %s ) 2>&1 | tee -a \"$LOG\"\n", code)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Dir = work
	cmd.Env = append(os.Environ(),
		"SB_BIN="+bin,
		"SB_URL=http://"+addr,
		"SWITCHBOARD_ADDR="+addr,
		"SWITCHBOARD_URL=http://"+addr,
		"SWITCHBOARD_DATA="+filepath.Join(work, "data"),
		"SWITCHBOARD_CONFIG_DIR="+filepath.Join(work, "config"),
		"SWITCHBOARD_ALLOW_PRIVATE_NETWORKS=1",
		"SWITCHBOARD_OWNER_TOKEN=",
		"SWITCHBOARD_AGENT_TOKEN=",
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		bg, _ := os.ReadFile(filepath.Join(work, "background.log"))
		t.Fatalf("the README's commands failed: %v\nscript:\n%s\noutput:\n%s\nbackground:\n%s", err, script.String(), out, bg)
	}
	all := strings.Join(lines, "\n")
	for _, e := range readmeExpect {
		if strings.Contains(all, e.command) && !strings.Contains(string(out), e.printed) {
			t.Errorf("after %s the README's commands did not print %s:\n%s", e.command, e.printed, out)
		}
	}
}

// replaceOutsideQuotes replaces from with to in a shell command line; an
// occurrence inside single quotes (a JSON body) closes and reopens them
// around to, so that the shell still expands it.
func replaceOutsideQuotes(line, from, to string) string {
	var b strings.Builder
	for {
		i := strings.Index(line, from)
		if i < 0 {
			b.WriteString(line)
			return b.String()
		}
		b.WriteString(line[:i])
		if strings.Count(b.String(), "'")%2 == 1 {
			b.WriteString("'\"" + to + "\"'")
		} else {
			b.WriteString(to)
		}
		line = line[i+len(from):]
	}
}
