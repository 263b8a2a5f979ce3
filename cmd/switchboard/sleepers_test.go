package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestOwnerSendsOnTheNetworkAndWakesSleepers: every agent, an inbox one
// too, gets an agent token at creation and can rotate it; the owner sends
// as its agent by discovery without that token; --wake-sleepers lets
// discovery choose an inbox agent with a wake when none is live; the
// directory shows who can be woken.
func TestOwnerSendsOnTheNetworkAndWakesSleepers(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	var g struct {
		AgentToken string `json:"agent_token"`
	}
	out := cli(t, m, "--json", "agent", "create", "desk", "--mode", "inbox")
	if err := json.Unmarshal([]byte(out), &g); err != nil || !strings.HasPrefix(g.AgentToken, "sba_") {
		t.Fatalf("an inbox agent's creation: %v %s", err, out)
	}
	if out := cli(t, m, "agent", "rotate-token", "desk"); !strings.Contains(out, "sba_") {
		t.Fatalf("rotate-token for an inbox agent: %s", out)
	}
	cli(t, m, "agent", "join", "desk", "lab")
	cli(t, m, "agent", "create", "sleepy", "--mode", "inbox", "--skills", `[{"id":"translate","name":"translate","tags":[]}]`)
	cli(t, m, "agent", "join", "sleepy", "lab")
	cli(t, m, "wake", "set", "--agent", "sleepy", "--url", "https://wake.example/sleepy")

	// The owner sends as desk, by skill, without desk's agent token.
	_, err := cliErr(m, "send", "--agent", "desk", "--skill", "translate", "--text", "bonjour")
	if err == nil || !strings.Contains(err.Error(), "wake-sleepers") {
		t.Fatalf("no live translator: %v", err)
	}
	out = cli(t, m, "send", "--agent", "desk", "--skill", "translate", "--wake-sleepers", "--text", "bonjour")
	if !strings.Contains(out, "sent to sleepy: task") {
		t.Fatalf("send --wake-sleepers: %s", out)
	}
	if out := cli(t, m, "directory", "--community", "lab"); !strings.Contains(out, "WAKEABLE") ||
		!regexpMatch(`sleepy\s+false\s+true`, out) || !regexpMatch(`desk\s+false\s+false`, out) {
		t.Fatalf("the directory: %s", out)
	}
}

func regexpMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }
