package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/ownerapi"
)

// TestStatusRules: each rule of the next step applies to its case, and
// the first that applies wins.
func TestStatusRules(t *testing.T) {
	yes, no := true, false
	ready := func() *agentStatus {
		return &agentStatus{Agent: &ownerapi.Agent{Handle: "a", Mode: "connector", Connected: &yes, AcceptsTasks: true, Approved: true},
			Tokens: []ownerapi.Token{{Label: "bob", Active: true}}}
	}
	cases := map[string]func(s *agentStatus){
		"":                        func(s *agentStatus) {},
		"not approved":            func(s *agentStatus) { s.Agent.Approved = false; s.Agent.Connected = &no },
		"paused":                  func(s *agentStatus) { s.Agent.AcceptsTasks = false; s.Tokens = nil },
		"connector not connected": func(s *agentStatus) { s.Agent.Connected = &no; s.Tokens = nil },
		"public address failing": func(s *agentStatus) {
			s.Agent.Connected = &no
			s.Public = []ownerapi.Reachability{{URL: "https://bot.example.com", State: ownerapi.ReachOK}, {URL: "https://sb.test/a/a", State: ownerapi.ReachFailing, Problem: "no A/AAAA record"}}
		},
		"agent token revoked": func(s *agentStatus) { s.Agent.Connected, s.AgentTokenRefused = &no, &yes },
		"inbox without wake":  func(s *agentStatus) { s.Agent.Mode, s.Agent.Connected = "inbox", nil },
		"last wake failed": func(s *agentStatus) {
			s.Wake = &ownerapi.WakeConfig{Wakes: []ownerapi.Wake{{State: "failed", LastStatus: 500}, {State: "sent"}}}
		},
		"wake never fired": func(s *agentStatus) { s.Wake = &ownerapi.WakeConfig{}; s.Tokens = nil },
		"no peer token":    func(s *agentStatus) { s.Tokens = nil },
		"work waits": func(s *agentStatus) {
			s.Agent.Mode, s.Agent.Connected, s.Waiting = "inbox", nil, 2
			s.Wake = &ownerapi.WakeConfig{Wakes: []ownerapi.Wake{{State: "sent"}}}
		},
	}
	for want, change := range cases {
		s := ready()
		change(s)
		s.nextStep()
		if s.Rule != want {
			t.Errorf("case %q: rule %q (%s)", want, s.Rule, s.Next)
		}
		if want != "" && !strings.Contains(s.Next, "switchboard ") {
			t.Errorf("case %q: the next step names no command: %s", want, s.Next)
		}
	}
	if len(cases) != len(statusRules)+1 {
		t.Fatalf("%d cases for %d rules: every rule needs one", len(cases)-1, len(statusRules))
	}
}

// TestStatus: status of an agent on a real server, for a person and as
// JSON, with the next step.
func TestStatus(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	cli(t, m, "agent", "create", "worker")
	out := cli(t, m, "status", "--agent", "worker")
	for _, want := range []string{"worker (connector)", "no connector connected", "peer tokens  none", "next step: no connector is connected"} {
		if !strings.Contains(out, want) {
			t.Fatalf("status did not say %q:\n%s", want, out)
		}
	}
	var s agentStatus
	must(t, json.Unmarshal([]byte(cli(t, m, "--json", "status", "--agent", "worker")), &s))
	if s.Agent.Handle != "worker" || s.Rule != "connector not connected" || s.Next == "" {
		t.Fatalf("status --json: %+v", s)
	}
	if _, err := cliErr(m, "status"); err == nil || !strings.Contains(err.Error(), "switchboard init") {
		t.Fatalf("status with no agent configured: %v", err)
	}
}
