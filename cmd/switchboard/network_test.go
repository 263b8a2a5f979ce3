package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/server"
)

// atOnce bounds how long a no_agent_found answer may take in these tests:
// far below every wait a task could be held for (the blocking timeout, the
// reconnect grace of the tests that wait it out), and far above a loaded
// machine's -race run. Its speed is BenchmarkNoAgentFound's to measure.
const atOnce = time.Second

// networkAgent creates a connector agent with the CLI, puts it in the
// communities (offering skill), and returns its agent token.
func networkAgent(t *testing.T, m *server.Server, handle, skill string, communities ...string) string {
	t.Helper()
	args := []string{"--json", "agent", "create", handle}
	if skill != "" {
		args = append(args, "--skills", `[{"id":"`+skill+`","name":"`+skill+`","tags":[]}]`)
	}
	var g struct {
		AgentToken string `json:"agent_token"`
	}
	if err := json.Unmarshal([]byte(cli(t, m, args...)), &g); err != nil || g.AgentToken == "" {
		t.Fatalf("agent create: %v", err)
	}
	for _, c := range communities {
		if out := cli(t, m, "agent", "join", handle, c); !strings.Contains(out, c) {
			t.Fatalf("join: %s", out)
		}
	}
	return g.AgentToken
}

// runConnector runs a connector client of the agent until stop or the end
// of the test, and waits until it is connected.
func runConnector(t *testing.T, m *server.Server, handle, token string, h connector.HandlerFunc) (cl *connector.Client, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cl = &connector.Client{URLs: []string{m.URL()}, Token: token, Handler: h, Logger: slog.New(slog.DiscardHandler)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cl.Run(ctx)
	}()
	var once bool
	stop = func() {
		if !once {
			once = true
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	testwait.For(t, handle+" to connect", func() bool {
		out := cli(t, m, "--json", "agent", "show", handle)
		return strings.Contains(out, `"connected": true`)
	})
	return cl, stop
}

// postTask sends POST /tasks with an agent token.
func postTask(t *testing.T, m *server.Server, token string, body map[string]any) (int, map[string]any, time.Duration) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", m.URL()+"/tasks", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	return resp.StatusCode, out, elapsed
}

// TestNetworkEndToEnd: agents that share a community send each other
// work with their agent tokens over HTTP, over the connector socket and
// from the CLI; the receiver sees the verified sender; no_agent_found
// answers at once; an agent whose socket dropped gets its task when it
// reconnects within the grace.
func TestNetworkEndToEnd(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "", func(c *server.Config) { c.ReconnectGrace = 2 * time.Second; c.Heartbeat = 500 * time.Millisecond })
	senderToken := networkAgent(t, m, "sender", "", "lab")
	workerToken := networkAgent(t, m, "worker", "code", "lab")
	froms := make(chan [2]string, 16)
	handler := func(_ context.Context, w *connector.Work) {
		froms <- [2]string{w.From, w.PeerKind}
		_ = w.Reply("done: " + w.Text())
	}
	_, stopWorker := runConnector(t, m, "worker", workerToken, handler)
	sender, _ := runConnector(t, m, "sender", senderToken, func(_ context.Context, w *connector.Work) { _ = w.Reply("?") })

	// HTTP, blocking: the legacy answer.
	st, res, _ := postTask(t, m, senderToken, map[string]any{"community": "lab", "skill": "code", "task_description": "build", "blocking": true})
	if st != http.StatusOK || res["status"] != "completed" || res["result"] != "done: build" || res["agent"] != "worker" {
		t.Fatalf("blocking POST /tasks: %d %v", st, res)
	}
	if got := <-froms; got != [2]string{"sender", "agent"} {
		t.Fatalf("the receiver saw from %q (%s)", got[0], got[1])
	}

	// The socket: SendTask, waiting for the answer.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("test"))
	task, agent, err := sender.SendTask(ctx, connector.TaskRequest{Community: "lab", Skill: "code", Request: &a2a.SendMessageRequest{Message: msg}, Wait: true})
	if err != nil || agent != "worker" || task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("SendTask: %v %s %+v", err, agent, task)
	}
	<-froms

	// The CLI, by discovery and by name.
	out, errOut, err := cliIO(m, "", "send", "--community", "lab", "--skill", "code", "--text", "from the cli", "--wait", "--token-env", "SB_TEST_SENDER")
	_ = out
	if err == nil || !strings.Contains(err.Error(), "SB_TEST_SENDER") {
		t.Fatalf("an empty --token-env: %v %s", err, errOut)
	}
	t.Setenv(agentTokenEnv, senderToken)
	out = cli(t, m, "send", "--community", "lab", "--skill", "code", "--text", "from the cli", "--wait")
	if !strings.Contains(out, "worker: task") || !strings.Contains(out, "completed") || !strings.Contains(out, "done: from the cli") {
		t.Fatalf("send --community --wait: %s", out)
	}
	<-froms
	out = cli(t, m, "send", "worker", "--text", "by name")
	if !strings.Contains(out, "sent to worker: task") {
		t.Fatalf("send by name: %s", out)
	}
	<-froms
	if out := cli(t, m, "directory", "--live"); !strings.Contains(out, "worker") || strings.Contains(out, "sender") {
		t.Fatalf("the sender's directory: %s", out)
	}
	t.Setenv(agentTokenEnv, "")
	if out := cli(t, m, "directory"); !strings.Contains(out, "worker") || !strings.Contains(out, "sender") {
		t.Fatalf("the operator's directory: %s", out)
	}

	// Nobody with the skill: no_agent_found at once, on every face.
	st, res, elapsed := postTask(t, m, senderToken, map[string]any{"community": "lab", "skill": "poetry", "payload": map[string]any{"message": "x"}})
	if st != http.StatusNotFound || res["error"] != "no_agent_found" || !strings.Contains(res["reason"].(string), "no skill") {
		t.Fatalf("no skill: %d %v", st, res)
	}
	if elapsed > atOnce {
		t.Errorf("no_agent_found took %s", elapsed)
	}
	t.Logf("no_agent_found over HTTP in %s", elapsed)
	start := time.Now()
	_, _, err = sender.SendTask(ctx, connector.TaskRequest{Skill: "poetry", Request: &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("x"))}})
	var noAgent *connector.NoAgentError
	if !errors.As(err, &noAgent) || !errors.Is(err, connector.ErrNoAgentFound) || !strings.Contains(noAgent.Detail, "no skill") {
		t.Fatalf("SendTask to nobody: %v", err)
	}
	t.Logf("no_agent_found over the socket in %s", time.Since(start))
	if _, err := cliErr(m, "--owner-token", "", "send", "--skill", "poetry", "--text", "x", "--token", senderToken); err == nil || !strings.Contains(err.Error(), "no_agent_found") {
		t.Fatalf("send to nobody: %v", err)
	}

	// The grace: the worker drops; a task sent now waits for it and is
	// delivered when it comes back.
	stopWorker()
	st, res, _ = postTask(t, m, senderToken, map[string]any{"community": "lab", "skill": "code", "payload": map[string]any{"message": "while away"}})
	if st != http.StatusAccepted || res["agent"] != "worker" {
		t.Fatalf("in the grace: %d %v", st, res)
	}
	id := res["task_id"].(string)
	runConnector(t, m, "worker", workerToken, handler)
	testwait.For(t, "the task sent in the grace to be answered", func() bool {
		var v struct {
			State string `json:"state"`
		}
		req, _ := http.NewRequest("GET", m.URL()+"/tasks/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+senderToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		_ = json.NewDecoder(resp.Body).Decode(&v)
		return v.State == "completed"
	})
}

// TestNetworkGraceEnds: past the reconnect grace, an agent that dropped is
// no candidate: no_agent_found, at once.
func TestNetworkGraceEnds(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "", func(c *server.Config) {
		c.ReconnectGrace = 300 * time.Millisecond
		c.Heartbeat = 200 * time.Millisecond
	})
	senderToken := networkAgent(t, m, "sender", "", "lab")
	workerToken := networkAgent(t, m, "worker", "", "lab")
	_, stop := runConnector(t, m, "worker", workerToken, func(_ context.Context, w *connector.Work) { _ = w.Reply("ok") })
	stop()
	testwait.For(t, "no_agent_found once the grace is over", func() bool {
		st, res, elapsed := postTask(t, m, senderToken, map[string]any{"community": "lab", "payload": map[string]any{"message": "x"}})
		if st == http.StatusNotFound {
			if !strings.Contains(res["reason"].(string), "none live") || elapsed > atOnce {
				t.Fatalf("after the grace: %v in %s", res, elapsed)
			}
			return true
		}
		return false
	})
}

// TestRequireApprovalFlag: with --require-approval an owner's agent waits
// for the operator before it takes part in the network.
func TestRequireApprovalFlag(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "", func(c *server.Config) { c.RequireApproval = true })
	var acct struct {
		Token string `json:"token"`
	}
	out := cli(t, m, "--json", "account", "create", "alice")
	if err := json.Unmarshal([]byte(out), &acct); err != nil || acct.Token == "" {
		t.Fatalf("account create: %s", out)
	}
	if out := cli(t, m, "--owner-token", acct.Token, "--json", "agent", "create", "newcomer"); !strings.Contains(out, `"approved": false`) {
		t.Fatalf("an owner's new agent: %s", out)
	}
	if _, err := cliErr(m, "--owner-token", acct.Token, "agent", "approve", "newcomer"); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("an owner approves: %v", err)
	}
	if out := cli(t, m, "agent", "approve", "newcomer"); !regexp.MustCompile(`approved\s+true`).MatchString(out) {
		t.Fatalf("approve: %s", out)
	}
}

// TestNetworkToWebhookAgent: a webhook agent chosen by discovery gets the
// task in the original network's shape: payload.message as text and
// from_agent_id the sending agent's id; its answer completes the task.
func TestNetworkToWebhookAgent(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "", func(c *server.Config) { c.AllowPrivateNetworks = true })
	type legacy struct {
		FromAgentID     string `json:"from_agent_id"`
		From            string `json:"from"`
		TaskDescription string `json:"task_description"`
		Payload         struct {
			Message string `json:"message"`
		} `json:"payload"`
	}
	got := make(chan legacy, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body legacy
		if r.URL.Path != "/hook/a2a/task" || json.NewDecoder(r.Body).Decode(&body) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		got <- body
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"completed","result":"got: `+body.Payload.Message+`"}`)
	}))
	defer hook.Close()
	senderToken := networkAgent(t, m, "sender", "", "lab")
	cli(t, m, "agent", "create", "hooked", "--mode", "webhook", "--endpoint", hook.URL+"/hook",
		"--skills", `[{"id":"translate","name":"Translate","tags":["fr"]}]`)
	cli(t, m, "agent", "join", "hooked", "lab")
	var sender struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(cli(t, m, "--json", "agent", "show", "sender")), &sender); err != nil || sender.ID == "" {
		t.Fatalf("agent show: %v", err)
	}

	st, res, _ := postTask(t, m, senderToken, map[string]any{"community": "lab", "skill": "fr",
		"task_description": "translate", "payload": map[string]any{"message": "bonjour"}})
	if st != http.StatusAccepted || res["agent"] != "hooked" {
		t.Fatalf("POST /tasks: %d %v", st, res)
	}
	body := <-got
	if body.FromAgentID != sender.ID || body.From != "sender" || body.Payload.Message != "bonjour" || body.TaskDescription != "translate" {
		t.Fatalf("the webhook got %+v; the sender is %s", body, sender.ID)
	}
	id := res["task_id"].(string)
	testwait.For(t, "the webhook's answer to complete the task", func() bool {
		req, _ := http.NewRequest("GET", m.URL()+"/tasks/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+senderToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return strings.Contains(string(data), `"completed"`) && strings.Contains(string(data), "got: bonjour")
	})
}
