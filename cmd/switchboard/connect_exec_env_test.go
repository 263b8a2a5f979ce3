package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard/connector"
)

// TestTaskEnvLeavesOutUnusableValues: whatever the ids and the sender's
// label hold, the command's environment starts a process; a value with a
// NUL, another control character or invalid UTF-8 is left out with its
// variable, not mangled, and an inherited variable of that name does not
// stand in for it.
func TestTaskEnvLeavesOutUnusableValues(t *testing.T) {
	t.Setenv("SWITCHBOARD_MESSAGE_ID", "stale-inherited")
	t.Setenv("SWITCHBOARD_FROM", "stale-inherited")
	t.Setenv("SWITCHBOARD_CONTEXT_ID", "stale-inherited")
	t.Setenv("SWITCHBOARD_AGENT_TOKEN", "sba_secret")
	fields := map[string]func(w *connector.Work, v string){
		"SWITCHBOARD_TASK_ID":    func(w *connector.Work, v string) { w.TaskID = a2a.TaskID("t-1" + v) },
		"SWITCHBOARD_CONTEXT_ID": func(w *connector.Work, v string) { w.ContextID = "ctx-1" + v },
		"SWITCHBOARD_MESSAGE_ID": func(w *connector.Work, v string) { w.MessageID = "m-1" + v },
		"SWITCHBOARD_FROM":       func(w *connector.Work, v string) { w.From = "bob" + v },
		"SWITCHBOARD_PEER_ID":    func(w *connector.Work, v string) { w.PeerID = "peer-1" + v },
	}
	bad := map[string]string{
		"NUL": "\x00", "Newline": "\n", "CarriageReturn": "\r", "Escape": "\x1b[2J", "DEL": "\x7f",
		"C1": "\u0085", "InvalidUTF8": "\xff", "CutUTF8": "\xc3",
	}
	for name, set := range fields {
		for bname, v := range bad {
			t.Run(name+"/"+bname, func(t *testing.T) {
				w := &connector.Work{TaskID: "t-1", ContextID: "ctx-1", MessageID: "m-1", From: "bob", NewTask: true}
				set(w, v)
				env, omitted := taskEnv(w)
				cmd := exec.Command("sh", "-c", "exit 0")
				cmd.Env = env
				if err := cmd.Run(); err != nil {
					t.Fatalf("the command did not start: %v", err)
				}
				if !slices.Equal(omitted, []string{name}) {
					t.Fatalf("omitted %v, want [%s]", omitted, name)
				}
				vars := envMap(env)
				if got, ok := vars[name]; ok {
					t.Fatalf("%s=%q is in the environment", name, got)
				}
				for _, other := range taskVars {
					if _, ok := vars[other]; other != name && !ok {
						t.Errorf("%s is missing", other)
					}
				}
				if _, ok := vars["SWITCHBOARD_AGENT_TOKEN"]; ok {
					t.Error("the agent's token reached the command")
				}
			})
		}
	}
}

// TestTaskEnvKeepsUsableValues: ordinary values, non-ASCII text included,
// reach the command as they are and replace inherited ones.
func TestTaskEnvKeepsUsableValues(t *testing.T) {
	t.Setenv("SWITCHBOARD_MESSAGE_ID", "stale-inherited")
	w := &connector.Work{TaskID: "0196-task", ContextID: "ctx: one two", MessageID: "msg-héllo-✓", From: "böb", PeerID: "0196-peer", NewTask: false}
	env, omitted := taskEnv(w)
	if len(omitted) != 0 {
		t.Fatalf("omitted %v", omitted)
	}
	out, err := func() ([]byte, error) {
		cmd := exec.Command("sh", "-c", `printf '%s|%s|%s|%s|%s|%s' "$SWITCHBOARD_TASK_ID" "$SWITCHBOARD_CONTEXT_ID" "$SWITCHBOARD_MESSAGE_ID" "$SWITCHBOARD_FROM" "$SWITCHBOARD_PEER_ID" "$SWITCHBOARD_NEW_TASK"`)
		cmd.Env = env
		return cmd.Output()
	}()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), "0196-task|ctx: one two|msg-héllo-✓|böb|0196-peer|false"; got != want {
		t.Fatalf("the command saw %q, want %q", got, want)
	}
}

// envMap returns the variables of env by name; a name given twice keeps
// its last value, as exec.Cmd does.
func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		m[name] = value
	}
	return m
}
