package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/server"
	"google.golang.org/grpc"
)

// connectAgent creates a connector agent with the CLI (connector is the
// default mode) and a peer token for bob, and returns the agent's id, its
// agent token and the peer token.
func connectAgent(t *testing.T, m *server.Server, handle string) (id, agentToken, peerToken string) {
	t.Helper()
	var g struct {
		ID         string `json:"id"`
		Mode       string `json:"mode"`
		AgentToken string `json:"agent_token"`
	}
	if err := json.Unmarshal([]byte(cli(t, m, "--json", "agent", "create", handle)), &g); err != nil || g.AgentToken == "" {
		t.Fatalf("agent create: %v %+v", err, g)
	}
	if g.Mode != "connector" {
		t.Fatalf("mode: got %s, want connector", g.Mode)
	}
	var tok struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(cli(t, m, "--json", "token", "issue", "--agent", handle, "bob")), &tok); err != nil || tok.Token == "" {
		t.Fatalf("token issue: %v", err)
	}
	return g.ID, g.AgentToken, tok.Token
}

// startConnect runs `switchboard connect` with args until the test ends,
// and waits until the agent is connected.
func startConnect(t *testing.T, m *server.Server, agentID string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		var out bytes.Buffer
		done <- run(ctx, append([]string{"--server", m.URL(), "connect", "--log-level", "error"}, args...), &out)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("connect: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("connect did not stop")
		}
	})
	testwait.For(t, "the connector to connect", func() bool {
		select {
		case err := <-done:
			t.Fatalf("connect ended: %v", err)
		default:
		}
		return m.Hub.Connected(agentID)
	})
}

// peerTask is a task as bob reads it.
type peerTask struct {
	ID     string `json:"id"`
	Status struct {
		State   string       `json:"state"`
		Message *a2a.Message `json:"message"`
	} `json:"status"`
	Artifacts []*a2a.Artifact `json:"artifacts"`
}

// answer returns the text of the task's artifacts.
func (t *peerTask) answer() string {
	var texts []string
	for _, a := range t.Artifacts {
		for _, p := range a.Parts {
			texts = append(texts, p.Text())
		}
	}
	return strings.Join(texts, "\n")
}

// reason returns the text of the task's status message.
func (t *peerTask) reason() string {
	if t.Status.Message == nil || len(t.Status.Message.Parts) == 0 {
		return ""
	}
	return t.Status.Message.Parts[0].Text()
}

// peerCall calls the agent's address as bob (A2A 1.0) and decodes the
// task in the answer.
func peerCall(t *testing.T, m *server.Server, handle, peerToken, method string, params any) *peerTask {
	t.Helper()
	return peerCallURL(t, m.URL()+"/a/"+handle, peerToken, method, params)
}

// peerCallURL calls the agent address as bob (A2A 1.0) and decodes the
// task in the answer.
func peerCallURL(t *testing.T, address, peerToken, method string, params any) *peerTask {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest("POST", address, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+peerToken)
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var a struct {
		Result json.RawMessage `json:"result"`
		Error  *struct{ Message string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil || a.Error != nil {
		t.Fatalf("%s: %v %+v", method, err, a.Error)
	}
	var task peerTask
	if method == "SendMessage" {
		var r struct {
			Task peerTask `json:"task"`
		}
		err = json.Unmarshal(a.Result, &r)
		task = r.Task
	} else {
		err = json.Unmarshal(a.Result, &task)
	}
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return &task
}

// peerSend sends text as bob; wait blocks until the agent's turn ends.
func peerSend(t *testing.T, m *server.Server, handle, peerToken, messageID, text, taskID string, wait bool) *peerTask {
	t.Helper()
	msg := map[string]any{"messageId": messageID, "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
	if taskID != "" {
		msg["taskId"] = taskID
	}
	return peerCall(t, m, handle, peerToken, "SendMessage", map[string]any{"message": msg, "configuration": map[string]any{"returnImmediately": !wait}})
}

// waitTask polls the task until cond holds.
func waitTask(t *testing.T, m *server.Server, handle, peerToken, id string, cond func(*peerTask) bool) *peerTask {
	t.Helper()
	var task *peerTask
	testwait.ForErr(t, "task "+id, func() error {
		if task = peerCall(t, m, handle, peerToken, "GetTask", map[string]any{"id": id}); !cond(task) {
			return fmt.Errorf("task %s is %s", id, task.Status.State)
		}
		return nil
	})
	return task
}

func TestConnectExec(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	id, agentToken, peerToken := connectAgent(t, m, "shouter")
	t.Setenv("SWITCHBOARD_AGENT_TOKEN", agentToken) // the token from the environment, as in the unit
	startConnect(t, m, id, "--exec",
		`printf '%s|%s|%s|[%s]|' "$SWITCHBOARD_FROM" "$SWITCHBOARD_NEW_TASK" "$SWITCHBOARD_MESSAGE_ID" "$SWITCHBOARD_AGENT_TOKEN"; tr a-z A-Z; echo "$SWITCHBOARD_TASK_ID" >&2`)

	task := peerSend(t, m, "shouter", peerToken, "m1", "hello there", "", true)
	if got, want := task.Status.State, "TASK_STATE_COMPLETED"; got != want {
		t.Fatalf("state: got %s, want %s (%s)", got, want, task.reason())
	}
	// The command's environment names the task, never the agent's token.
	if got, want := task.answer(), "bob|true|m1|[]|HELLO THERE"; got != want {
		t.Fatalf("answer: got %q, want %q", got, want)
	}
}

// TestConnectExecTextOnly sends a message with text, data and file parts
// to connect --exec: the command reads the text parts only, one per line.
func TestConnectExecTextOnly(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	id, agentToken, peerToken := connectAgent(t, m, "texter")
	startConnect(t, m, id, "--token", agentToken, "--exec", "cat")

	msg := map[string]any{"messageId": "m1", "role": "ROLE_USER", "parts": []any{
		map[string]any{"text": "first"},
		map[string]any{"data": map[string]any{"k": 1}},
		map[string]any{"url": "https://example.com/f.txt", "filename": "f.txt", "mediaType": "text/plain"},
		map[string]any{"text": "second"},
	}}
	task := peerCall(t, m, "texter", peerToken, "SendMessage", map[string]any{"message": msg})
	if got, want := task.answer(), "first\nsecond"; got != want || task.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("answer: got %q in %s, want %q (%s)", got, task.Status.State, want, task.reason())
	}
}

func TestConnectExecFailures(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	tests := map[string]struct {
		command, timeout string
		want             []string
	}{
		"NonZeroExit": {`echo partial; echo "it broke" >&2; exit 3`, "5m", []string{"status 3", "it broke"}},
		"Timeout":     {`sleep 30 & sleep 30`, "300ms", []string{"did not finish within 300ms"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			handle := strings.ToLower(name)
			id, agentToken, peerToken := connectAgent(t, m, handle)
			startConnect(t, m, id, "--token", agentToken, "--exec", tt.command, "--timeout", tt.timeout)
			start := time.Now()
			task := peerSend(t, m, handle, peerToken, "m1", "go", "", true)
			if got, want := task.Status.State, "TASK_STATE_FAILED"; got != want {
				t.Fatalf("state: got %s, want %s", got, want)
			}
			for _, want := range tt.want {
				if !strings.Contains(task.reason(), want) {
					t.Errorf("reason %q lacks %q", task.reason(), want)
				}
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("the failure took %s", took)
			}
		})
	}
}

func TestConnectNeedsOneMode(t *testing.T) {
	for name, args := range map[string][]string{
		"None": {"connect", "--token", "sba_x"},
		"Both": {"connect", "--token", "sba_x", "--exec", "cat", "--forward", "http://127.0.0.1:1"},
	} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			if err := run(context.Background(), args, &out); err == nil || !strings.Contains(err.Error(), "--exec") {
				t.Fatalf("got %v, want an error naming --exec", err)
			}
		})
	}
}

func TestServerURLs(t *testing.T) {
	tests := map[string]struct {
		server string
		args   []string
		want   string
	}{
		"One":           {"http://a", []string{"--server", "http://a", "connect"}, "http://a"},
		"CommaList":     {"http://a, http://b", []string{"--server", "http://a, http://b", "connect"}, "http://a http://b"},
		"Repeated":      {"http://b", []string{"--server", "http://a", "--server=http://b", "connect"}, "http://a http://b"},
		"FromEnv":       {"http://a,http://b", []string{"connect"}, "http://a http://b"},
		"AfterDashDash": {"http://a", []string{"--server", "http://a", "connect", "--", "--server", "x"}, "http://a"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := strings.Join(serverURLs(tt.server, tt.args), " "); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestConnectPrintUnit(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("HOME", t.TempDir())
	var out bytes.Buffer
	err := run(context.Background(), []string{"--server", "https://sb.example,https://sb2.example", "connect",
		"--token", "sba_secret-token", "--exec", `reply.sh "$HOME" 100%`, "--name", "helper", "--print-unit"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	unit := out.String()
	exe, _ := executable()
	for _, want := range []string{
		"ExecStart=" + exe + ` --server https://sb.example,https://sb2.example connect --exec "reply.sh \"$$HOME\" 100%%" --timeout 5m0s --concurrency 4` + "\n",
		"EnvironmentFile=" + filepath.Join(os.Getenv("HOME"), ".config", "switchboard", "connect-helper.env") + "\n",
		"Restart=always\n", "RestartSec=2\n", "WantedBy=default.target\n",
		fmt.Sprintf("RestartPreventExitStatus=%d\n", exitTerminal),
	} {
		if !strings.Contains(unit, want) {
			t.Errorf("the unit lacks %q:\n%s", want, unit)
		}
	}
	if strings.Contains(unit, "sba_secret-token") {
		t.Fatalf("the unit holds the token:\n%s", unit)
	}
	if !filepath.IsAbs(exe) {
		t.Fatalf("ExecStart path %q is not absolute", exe)
	}
}

func TestConnectInstall(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	var out bytes.Buffer
	err := run(context.Background(), []string{"--server", "https://sb.example", "connect", "--token", "sba_secret-token",
		"--forward", "http://127.0.0.1:9001/", "--forward-token", `up "token"`, "--name", "helper", "--install"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	unitPath := filepath.Join(home, ".config", "systemd", "user", "switchboard-connect-helper.service")
	envPath := filepath.Join(home, ".config", "switchboard", "connect-helper.env")
	requireModes(t, map[string]os.FileMode{unitPath: 0o644, envPath: 0o600})
	env, _ := os.ReadFile(envPath)
	for _, want := range []string{"SWITCHBOARD_AGENT_TOKEN=sba_secret-token\n", `SWITCHBOARD_FORWARD_TOKEN="up \"token\""` + "\n"} {
		if !strings.Contains(string(env), want) {
			t.Errorf("the env file lacks %q:\n%s", want, env)
		}
	}
	unit, _ := os.ReadFile(unitPath)
	if strings.Contains(string(unit), "secret-token") || !strings.Contains(string(unit), "--forward http://127.0.0.1:9001/") {
		t.Errorf("unit:\n%s", unit)
	}
	if want := "systemctl --user daemon-reload && systemctl --user enable --now switchboard-connect-helper.service"; !strings.Contains(out.String(), want) {
		t.Errorf("the output lacks %q:\n%s", want, out.String())
	}
	if dir, _ := os.Stat(filepath.Dir(envPath)); dir.Mode().Perm() != 0o700 {
		t.Errorf("the env file's directory has mode %o, want 700", dir.Mode().Perm())
	}
}

// upstreamAgent is an A2A server built with a2a-go, the kind of agent
// connect --forward puts behind a Switchboard address.
type upstreamAgent struct {
	srv      *httptest.Server
	canceled chan a2a.TaskID
	release  chan struct{} // ends executions that wait
	started  chan string   // the text of each execution, as it starts
	gate     chan struct{} // "slow" executions wait for it before their first event
	mu       sync.Mutex
	followUp bool             // guarded by mu: a message continued a task it knows
	cardGate chan struct{}    // guarded by mu: card requests wait for it to close
	requests []string         // guarded by mu: "METHOD path Authorization" of each request
	headers  []http.Header    // guarded by mu: the headers of each request
	metadata []map[string]any // guarded by mu: the metadata of each message executed
	tasks    []a2a.TaskID     // guarded by mu: the task of each message executed
	reflect  bool             // immutable: answers and card reflect the request's headers
}

// upstreamOptions changes how an upstream agent serves.
type upstreamOptions struct {
	advertise  string // the base URL its card names (default: its own)
	token      string // the bearer token it requires (default: none)
	redirectTo string // it redirects JSON-RPC calls there (307)
	tls        bool   // it serves https, with httptest's certificate
	reflect    bool   // its card and answers reflect its request's headers (reflectHeaders)
	// binding, if set, is the only binding it offers (version 1.0):
	// HTTP+JSON at /invoke, or gRPC on its listener (h2 over TLS, h2c
	// on plain HTTP), its card naming host:port.
	binding a2a.TransportProtocol
}

// reflectHeaders is what an upstream agent that reflects writes of the
// headers of a request: the values of Authorization and
// CF-Access-Client-Secret as they came, the token in base64 (standard,
// and URL-safe without padding) and inside "Basic base64(user:token)".
func reflectHeaders(get func(string) string) string {
	var out []string
	for _, name := range []string{"Authorization", "CF-Access-Client-Secret"} {
		v := get(name)
		token, _ := strings.CutPrefix(v, "Bearer ")
		out = append(out, name+": "+v, base64.StdEncoding.EncodeToString([]byte(token)),
			base64.RawURLEncoding.EncodeToString([]byte(token)), "Basic "+base64.StdEncoding.EncodeToString([]byte("user:"+token)))
	}
	return strings.Join(out, " ")
}

// received returns the requests the upstream agent received.
func (u *upstreamAgent) received() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.requests)
}

// holdCard makes card requests wait until gate closes.
func (u *upstreamAgent) holdCard(gate chan struct{}) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.cardGate = gate
}

// waitStarted waits until an execution of text started.
func (u *upstreamAgent) waitStarted(t *testing.T, text string) {
	t.Helper()
	for {
		select {
		case got := <-u.started:
			if got == text {
				return
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the upstream agent did not start on %q", text)
		}
	}
}

// waitCanceled waits until the upstream agent is asked to cancel a task,
// and fails the test with failure after 10 s.
func (u *upstreamAgent) waitCanceled(t *testing.T, failure string) {
	t.Helper()
	select {
	case <-u.canceled:
	case <-time.After(10 * time.Second):
		t.Fatal(failure)
	}
}

// newUpstreamAgent serves an A2A agent speaking version ("1.0", "0.3", or
// "0.3-pure" for a 0.3 card without the 1.0 fields) over JSON-RPC at
// /invoke, with its card at the well-known path.
func newUpstreamAgent(t *testing.T, version string, streaming bool, opts ...upstreamOptions) *upstreamAgent {
	t.Helper()
	var opt upstreamOptions
	if len(opts) > 0 {
		opt = opts[0]
	}
	u := &upstreamAgent{canceled: make(chan a2a.TaskID, 4), release: make(chan struct{}),
		started: make(chan string, 16), gate: make(chan struct{}), reflect: opt.reflect}
	mux := http.NewServeMux()
	grpcServer := grpc.NewServer()
	u.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.requests = append(u.requests, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		u.headers = append(u.headers, r.Header.Clone())
		u.mu.Unlock()
		if opt.token != "" && r.Header.Get("Authorization") != "Bearer "+opt.token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if opt.redirectTo != "" && r.URL.Path == "/invoke" {
			http.Redirect(w, r, opt.redirectTo, http.StatusTemporaryRedirect)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/.well-known/") {
			u.mu.Lock()
			gate := u.cardGate
			u.mu.Unlock()
			if gate != nil {
				<-gate
			}
		}
		if opt.binding == a2a.TransportProtocolGRPC && r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
			grpcServer.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	switch {
	case opt.tls:
		u.srv.EnableHTTP2 = opt.binding == a2a.TransportProtocolGRPC
		u.srv.StartTLS()
	case opt.binding == a2a.TransportProtocolGRPC:
		u.srv.Config.Protocols = new(http.Protocols)
		u.srv.Config.Protocols.SetHTTP1(true)
		u.srv.Config.Protocols.SetUnencryptedHTTP2(true)
		u.srv.Start()
	default:
		u.srv.Start()
	}
	t.Cleanup(func() {
		close(u.release)
		u.srv.Close()
		grpcServer.Stop()
	})
	handler := a2asrv.NewHandler(u)
	base := u.srv.URL
	if opt.advertise != "" {
		base = opt.advertise
	}
	iface := &a2a.AgentInterface{URL: base + "/invoke", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.ProtocolVersion(strings.TrimSuffix(version, "-pure"))}
	card := &a2a.AgentCard{Name: "Upstream " + version, Description: "answers", Version: "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{iface}, Capabilities: a2a.AgentCapabilities{Streaming: streaming},
		DefaultInputModes: []string{"text"}, DefaultOutputModes: []string{"text"},
		Skills: []a2a.AgentSkill{{ID: "echo", Name: "Echo", Description: "echoes", Tags: []string{"test"}}}}
	switch {
	case opt.binding == a2a.TransportProtocolHTTPJSON:
		iface.ProtocolBinding = opt.binding
		mux.Handle("/invoke/", http.StripPrefix("/invoke", a2asrv.NewRESTHandler(handler)))
		mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	case opt.binding == a2a.TransportProtocolGRPC:
		iface.ProtocolBinding, iface.URL = opt.binding, strings.TrimPrefix(strings.TrimPrefix(base, "https://"), "http://")
		a2agrpc.NewHandler(handler).RegisterWith(grpcServer)
		mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	case opt.reflect:
		if version == "0.3" {
			mux.Handle("/invoke", a2av0.NewJSONRPCHandler(handler))
		} else {
			mux.Handle("/invoke", a2asrv.NewJSONRPCHandler(handler))
		}
		mux.HandleFunc(a2asrv.WellKnownAgentCardPath, func(w http.ResponseWriter, r *http.Request) {
			c := *card
			said := reflectHeaders(r.Header.Get)
			c.Description = "called with " + said
			c.Skills = []a2a.AgentSkill{{ID: "echo", Name: "Echo", Description: said, Tags: []string{"test"}, Examples: []string{said}}}
			if version == "0.3" {
				a2asrv.NewAgentCardHandler(a2av0.NewStaticAgentCardProducer(&c)).ServeHTTP(w, r)
			} else {
				a2asrv.NewStaticAgentCardHandler(&c).ServeHTTP(w, r)
			}
		})
	case version == "0.3":
		mux.Handle("/invoke", a2av0.NewJSONRPCHandler(handler))
		mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewAgentCardHandler(a2av0.NewStaticAgentCardProducer(card)))
	case version == "0.3-pure":
		mux.Handle("/invoke", a2av0.NewJSONRPCHandler(handler))
		mux.HandleFunc("/.well-known/agent.json", func(w http.ResponseWriter, r *http.Request) {
			_ = json.NewEncoder(w).Encode(map[string]any{
				"protocolVersion": "0.3.0", "name": card.Name, "description": card.Description, "version": "1.0.0",
				"url": iface.URL, "preferredTransport": "JSONRPC", "capabilities": map[string]any{"streaming": streaming},
				"defaultInputModes": []string{"text"}, "defaultOutputModes": []string{"text"}, "skills": []any{},
			})
		})
	default:
		mux.Handle("/invoke", a2asrv.NewJSONRPCHandler(handler))
		mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	}
	return u
}

// Execute answers "ask" with a question, "wait" by working until canceled,
// "slow" as "wait" but only once the gate opens (its first event is late),
// a follow-up with the choice, anything else with "upstream: " + text.
func (u *upstreamAgent) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		text := ""
		for _, p := range ec.Message.Parts {
			text += p.Text()
		}
		u.mu.Lock()
		u.metadata = append(u.metadata, ec.Message.Metadata)
		u.tasks = append(u.tasks, ec.TaskID)
		u.mu.Unlock()
		u.started <- text
		if text == "slow" {
			select {
			case <-u.gate:
			case <-u.release:
			}
			text = "wait"
		}
		if ec.StoredTask == nil {
			if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
				return
			}
		} else {
			u.mu.Lock()
			u.followUp = true
			u.mu.Unlock()
		}
		if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, nil), nil) {
			return
		}
		switch {
		case text == "ask":
			q := a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart("which one?"))
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateInputRequired, q), nil)
		case text == "wait":
			select {
			case <-ctx.Done():
			case <-u.release:
			}
		default:
			answer := "upstream: " + text
			if ec.StoredTask != nil {
				answer = "upstream: you chose " + text
			}
			var done *a2a.Message
			if u.reflect {
				said := reflectHeaders(func(name string) string {
					v, _ := ec.ServiceParams.Get(name)
					return strings.Join(v, ",")
				})
				answer += " " + said
				done = a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart("done for "+said))
				done.Metadata = map[string]any{"echo": said}
			}
			if yield(a2a.NewArtifactEvent(ec, a2a.NewTextPart(answer)), nil) {
				yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, done), nil)
			}
		}
	}
}

// Cancel records the cancel and cancels the task.
func (u *upstreamAgent) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		u.canceled <- ec.TaskID
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

func TestConnectForward(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	tests := map[string]struct {
		version   string
		streaming bool
		path      string // appended to the upstream's URL for --forward
	}{
		"V1Streaming":  {"1.0", true, ""},
		"V1Blocking":   {"1.0", false, "/invoke"},
		"V03Blocking":  {"0.3", false, ""},
		"V03Streaming": {"0.3", true, "/invoke"},
		"V03PureCard":  {"0.3-pure", false, ""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			up := newUpstreamAgent(t, tt.version, tt.streaming)
			handle := strings.ToLower(name)
			id, agentToken, peerToken := connectAgent(t, m, handle)
			startConnect(t, m, id, "--token", agentToken, "--forward", up.srv.URL+tt.path)

			task := peerSend(t, m, handle, peerToken, "m1", "hello", "", true)
			if got, want := task.answer(), "upstream: hello"; got != want || task.Status.State != "TASK_STATE_COMPLETED" {
				t.Fatalf("answer: got %q in %s, want %q completed (%s)", got, task.Status.State, want, task.reason())
			}

			// A question, then the peer's follow-up, which reaches the same
			// task at the upstream agent.
			task = peerSend(t, m, handle, peerToken, "m2", "ask", "", true)
			if got, want := task.Status.State, "TASK_STATE_INPUT_REQUIRED"; got != want {
				t.Fatalf("state: got %s, want %s (%s)", got, want, task.reason())
			}
			if got, want := task.reason(), "which one?"; got != want {
				t.Fatalf("question: got %q, want %q", got, want)
			}
			task = peerSend(t, m, handle, peerToken, "m3", "blue", task.ID, true)
			if got, want := task.answer(), "upstream: you chose blue"; got != want {
				t.Fatalf("follow-up answer: got %q, want %q (%s %s)", got, want, task.Status.State, task.reason())
			}
			up.mu.Lock()
			defer up.mu.Unlock()
			if !up.followUp {
				t.Fatal("the follow-up did not reach the upstream task")
			}
		})
	}
}

func TestConnectForwardCancel(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	for name, streaming := range map[string]bool{"Streaming": true, "Blocking": false} {
		t.Run(name, func(t *testing.T) {
			up := newUpstreamAgent(t, "1.0", streaming)
			handle := "waiter" + strings.ToLower(name)
			id, agentToken, peerToken := connectAgent(t, m, handle)
			startConnect(t, m, id, "--token", agentToken, "--forward", up.srv.URL)

			task := peerSend(t, m, handle, peerToken, "m1", "wait", "", false)
			up.waitStarted(t, "wait") // the upstream task exists; the connector may or may not know its id yet
			peerCall(t, m, handle, peerToken, "CancelTask", map[string]any{"id": task.ID})
			up.waitCanceled(t, "the cancel did not reach the upstream agent")
		})
	}
}

// waitCancelDelivered waits until the connector acknowledged the cancel of
// the task.
func waitCancelDelivered(t *testing.T, m *server.Server, taskID string) {
	t.Helper()
	id := a2a.TaskID(taskID)
	testwait.For(t, "the connector to receive the cancel", func() bool {
		ds, err := m.DB.FindDeliveries(context.Background(), switchboard.DeliveryFilter{TaskID: &id})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if d.Kind == switchboard.DeliverCancel && d.State == switchboard.DeliveryAcked {
				return true
			}
		}
		return false
	})
}

// TestConnectForwardEarlyCancel cancels a task after the upstream agent
// received it but before it named its task (its first event is held
// back): the connector remembers the cancel and cancels the upstream task
// as soon as it learns its id.
func TestConnectForwardEarlyCancel(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	up := newUpstreamAgent(t, "1.0", true)
	id, agentToken, peerToken := connectAgent(t, m, "early")
	startConnect(t, m, id, "--token", agentToken, "--forward", up.srv.URL)

	task := peerSend(t, m, "early", peerToken, "m1", "slow", "", false)
	up.waitStarted(t, "slow")
	peerCall(t, m, "early", peerToken, "CancelTask", map[string]any{"id": task.ID})
	waitCancelDelivered(t, m, task.ID)
	close(up.gate) // the upstream agent names its task now
	up.waitCanceled(t, "the early cancel did not reach the upstream agent")
}

// TestConnectForwardCancelWhileReadingCard cancels a task while the
// connector reads the upstream's card: the message is never sent there.
func TestConnectForwardCancelWhileReadingCard(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	up := newUpstreamAgent(t, "1.0", true)
	gate := make(chan struct{})
	up.holdCard(gate)
	id, agentToken, peerToken := connectAgent(t, m, "carded")
	startConnect(t, m, id, "--token", agentToken, "--forward", up.srv.URL, "--concurrency", "1")

	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(gate) }) }) // a failure does not leave the reads held
	task := peerSend(t, m, "carded", peerToken, "m1", "first", "", false)
	// Two reads of the card wait: the one connect makes to publish it, and
	// the task's.
	testwait.For(t, "the connector to read the card for the task", func() bool {
		n := 0
		for _, r := range up.received() {
			if strings.Contains(r, " /.well-known/") {
				n++
			}
		}
		return n >= 2
	})
	peerCall(t, m, "carded", peerToken, "CancelTask", map[string]any{"id": task.ID})
	waitCancelDelivered(t, m, task.ID)
	once.Do(func() { close(gate) })

	// One task at a time: the next one runs after the canceled one ended.
	next := peerSend(t, m, "carded", peerToken, "m2", "hello", "", true)
	if got, want := next.answer(), "upstream: hello"; got != want {
		t.Fatalf("answer: got %q, want %q (%s)", got, want, next.reason())
	}
	if got := <-up.started; got != "hello" {
		t.Fatalf("the upstream agent received %q, want only the next task", got)
	}
}

// TestConnectForwardIgnoresCardHost forwards to an agent whose card names
// another host: the tasks, and the --forward token, go to the --forward
// host all the same, and the other host receives nothing.
func TestConnectForwardIgnoresCardHost(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	for _, version := range []string{"1.0", "0.3", "0.3-pure"} {
		t.Run(version, func(t *testing.T) {
			elsewhere := newUpstreamAgent(t, "1.0", false)
			up := newUpstreamAgent(t, version, false, upstreamOptions{advertise: elsewhere.srv.URL, token: "up-token"})
			handle := "carded" + strings.NewReplacer(".", "", "-", "").Replace(version)
			id, agentToken, peerToken := connectAgent(t, m, handle)
			startConnect(t, m, id, "--token", agentToken, "--forward", up.srv.URL, "--forward-token", "up-token")

			task := peerSend(t, m, handle, peerToken, "m1", "hello", "", true)
			if got, want := task.answer(), "upstream: hello"; got != want || task.Status.State != "TASK_STATE_COMPLETED" {
				t.Fatalf("answer: got %q in %s, want %q completed (%s)", got, task.Status.State, want, task.reason())
			}
			if got := elsewhere.received(); len(got) != 0 {
				t.Fatalf("the host the card names received %q", got)
			}
			for _, r := range up.received() {
				if !strings.HasSuffix(r, " Bearer up-token") {
					t.Errorf("a request to the --forward host without its token: %q", r)
				}
			}
		})
	}
}

// TestConnectForwardRedirectElsewhere forwards to an agent that redirects
// its JSON-RPC calls to another host: the connector does not follow, so
// neither the task nor the --forward token reaches that host.
func TestConnectForwardRedirectElsewhere(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	elsewhere := newUpstreamAgent(t, "1.0", false)
	up := newUpstreamAgent(t, "1.0", false, upstreamOptions{token: "up-token", redirectTo: elsewhere.srv.URL + "/invoke"})
	id, agentToken, peerToken := connectAgent(t, m, "redirected")
	startConnect(t, m, id, "--token", agentToken, "--forward", up.srv.URL, "--forward-token", "up-token")

	task := peerSend(t, m, "redirected", peerToken, "m1", "hello", "", true)
	if got, want := task.Status.State, "TASK_STATE_FAILED"; got != want {
		t.Fatalf("state: got %s, want %s (%s)", got, want, task.answer())
	}
	if got := elsewhere.received(); len(got) != 0 {
		t.Fatalf("the host redirected to received %q", got)
	}
}

func TestBearerTransportStaysOnItsHost(t *testing.T) {
	var seen []string
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen = append(seen, r.URL.String()+" "+r.Header.Get("Authorization"))
		return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
	})
	origin, _ := url.Parse("http://127.0.0.1:9001/a2a")
	rt := &bearerTransport{token: "tok", origin: origin, base: base}
	for _, u := range []string{"http://127.0.0.1:9001/invoke", "http://127.0.0.1:9002/invoke", "https://127.0.0.1:9001/invoke", "http://evil.example/invoke"} {
		req, _ := http.NewRequest("POST", u, nil)
		if _, err := rt.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"http://127.0.0.1:9001/invoke Bearer tok", "http://127.0.0.1:9002/invoke ", "https://127.0.0.1:9001/invoke ", "http://evil.example/invoke "}
	if !slices.Equal(seen, want) {
		t.Fatalf("got %q, want %q", seen, want)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// peerCallV03 calls the agent's address as bob in A2A 0.3 JSON-RPC and
// returns the result.
func peerCallV03(t *testing.T, m *server.Server, handle, peerToken, method string, params any) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "r1", "method": method, "params": params})
	req, _ := http.NewRequest("POST", m.URL()+"/a/"+handle, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+peerToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "0.3")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var a struct {
		Result map[string]any `json:"result"`
		Error  *struct{ Message string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil || a.Error != nil {
		t.Fatalf("%s: %v %+v", method, err, a.Error)
	}
	return a.Result
}

// v03Message is the params of a 0.3 message/send: kind on the message and
// its parts, lowercase role.
func v03Message(messageID, text, taskID string, blocking bool) map[string]any {
	msg := map[string]any{"kind": "message", "messageId": messageID, "role": "user",
		"parts": []any{map[string]any{"kind": "text", "text": text}}}
	if taskID != "" {
		msg["taskId"] = taskID
	}
	return map[string]any{"message": msg, "configuration": map[string]any{"blocking": blocking}}
}

// v03Texts returns the texts of the parts of a 0.3 artifact list or
// message.
func v03Texts(v any) string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			if x["kind"] == "text" {
				out = append(out, fmt.Sprint(x["text"]))
				return
			}
			walk(x["parts"])
		}
	}
	walk(v)
	return strings.Join(out, "\n")
}

// TestConnectForwardV03Peer has a peer speaking A2A 0.3 reach an upstream
// agent that speaks only 1.0, through --forward: Switchboard translates
// at the address, the connector speaks 1.0 to the upstream.
func TestConnectForwardV03Peer(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	for name, streaming := range map[string]bool{"Streaming": true, "Blocking": false} {
		t.Run(name, func(t *testing.T) {
			up := newUpstreamAgent(t, "1.0", streaming)
			handle := "old" + strings.ToLower(name)
			id, agentToken, peerToken := connectAgent(t, m, handle)
			startConnect(t, m, id, "--token", agentToken, "--forward", up.srv.URL)

			task := peerCallV03(t, m, handle, peerToken, "message/send", v03Message("m1", "hello", "", true))
			if task["kind"] != "task" || path(task, "status", "state") != "completed" {
				t.Fatalf("message/send: %v", task)
			}
			if got, want := v03Texts(task["artifacts"]), "upstream: hello"; got != want {
				t.Fatalf("answer: got %q, want %q", got, want)
			}

			// A question, and the 0.3 follow-up on the same task.
			task = peerCallV03(t, m, handle, peerToken, "message/send", v03Message("m2", "ask", "", true))
			if got, want := path(task, "status", "state"), "input-required"; got != want {
				t.Fatalf("state: got %v, want %s (%v)", got, want, task)
			}
			if got, want := v03Texts(path(task, "status", "message")), "which one?"; got != want {
				t.Fatalf("question: got %q, want %q", got, want)
			}
			taskID := task["id"].(string)
			task = peerCallV03(t, m, handle, peerToken, "message/send", v03Message("m3", "blue", taskID, true))
			if got, want := v03Texts(task["artifacts"]), "upstream: you chose blue"; got != want || path(task, "status", "state") != "completed" {
				t.Fatalf("follow-up: got %q in %v (%q), want %q completed", got, path(task, "status", "state"), v03Texts(path(task, "status", "message")), want)
			}

			// tasks/cancel over 0.3 reaches the upstream agent.
			task = peerCallV03(t, m, handle, peerToken, "message/send", v03Message("m4", "wait", "", false))
			up.waitStarted(t, "wait")
			if c := peerCallV03(t, m, handle, peerToken, "tasks/cancel", map[string]any{"id": task["id"]}); path(c, "status", "state") != "canceled" {
				t.Fatalf("tasks/cancel: %v", c)
			}
			up.waitCanceled(t, "the 0.3 cancel did not reach the upstream agent")
			if got := peerCallV03(t, m, handle, peerToken, "tasks/get", map[string]any{"id": taskID}); path(got, "status", "state") != "completed" {
				t.Fatalf("tasks/get: %v", got)
			}
		})
	}
}

// TestConnectForwardTimeout lets a forwarded task outlast --timeout: the
// task fails, and the upstream task is canceled.
func TestConnectForwardTimeout(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	for name, streaming := range map[string]bool{"Streaming": true, "Blocking": false} {
		t.Run(name, func(t *testing.T) {
			up := newUpstreamAgent(t, "1.0", streaming)
			handle := "slowpoke" + strings.ToLower(name)
			id, agentToken, peerToken := connectAgent(t, m, handle)
			startConnect(t, m, id, "--token", agentToken, "--forward", up.srv.URL, "--timeout", "500ms")

			task := peerSend(t, m, handle, peerToken, "m1", "wait", "", true)
			if got, want := task.Status.State, "TASK_STATE_FAILED"; got != want || !strings.Contains(task.reason(), "did not finish within 500ms") {
				t.Fatalf("state: got %s (%s), want %s", got, task.reason(), want)
			}
			up.waitCanceled(t, "the upstream task was not canceled")
		})
	}
}

func TestExitStatus(t *testing.T) {
	tests := map[string]struct {
		err  error
		want int
	}{
		"Unauthorized": {fmt.Errorf("run: %w", connector.ErrUnauthorized), exitTerminal},
		"AgentGone":    {connector.ErrAgentGone, exitTerminal},
		"NotConnector": {connector.ErrNotConnector, exitTerminal},
		"Other":        {errors.New("no agent token"), 1},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := exitStatus(tt.err); got != tt.want {
				t.Fatalf("got %d, want %d", got, tt.want)
			}
		})
	}
}

// TestConnectTerminalExitStatus runs the binary with a token the server
// does not know: it stops at once with the status that the systemd unit
// names in RestartPreventExitStatus, so that systemd does not restart it.
func TestConnectTerminalExitStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	m := MustRunMain(t, t.TempDir(), "")
	bin := buildSwitchboard(t)
	cmd := exec.Command(bin, "--server", m.URL(), "connect", "--token", "sba_revoked", "--exec", "cat")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("connect: %v\n%s", err, out)
	}
	if got, want := ee.ExitCode(), exitTerminal; got != want {
		t.Fatalf("exit status: got %d, want %d\n%s", got, want, out)
	}
	if !strings.Contains(string(out), "not valid") {
		t.Errorf("the output does not say why:\n%s", out)
	}
}

func TestConnectInstallSystem(t *testing.T) {
	root := t.TempDir()
	old := systemRoot
	systemRoot = root
	t.Cleanup(func() { systemRoot = old })
	t.Setenv("SUDO_USER", "alice")
	var out bytes.Buffer
	err := run(context.Background(), []string{"--server", "https://sb.example", "connect", "--token", "sba_secret-token",
		"--exec", "cat", "--name", "helper", "--install", "--system"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	unitPath := filepath.Join(root, "etc", "systemd", "system", "switchboard-connect-helper.service")
	envPath := filepath.Join(root, "etc", "switchboard", "connect-helper.env")
	requireModes(t, map[string]os.FileMode{unitPath: 0o644, envPath: 0o600})
	if dir, _ := os.Stat(filepath.Dir(envPath)); dir.Mode().Perm() != 0o700 {
		t.Errorf("the env file's directory has mode %o, want 700", dir.Mode().Perm())
	}
	if env, _ := os.ReadFile(envPath); !strings.Contains(string(env), "SWITCHBOARD_AGENT_TOKEN=sba_secret-token\n") {
		t.Errorf("env file:\n%s", env)
	}
	unit, _ := os.ReadFile(unitPath)
	for _, want := range []string{"EnvironmentFile=" + envPath + "\n", "User=alice\n", "WantedBy=multi-user.target\n",
		"Restart=always\n", fmt.Sprintf("RestartPreventExitStatus=%d\n", exitTerminal)} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("the unit lacks %q:\n%s", want, unit)
		}
	}
	if strings.Contains(string(unit), "secret-token") {
		t.Errorf("the unit holds the token:\n%s", unit)
	}
	if want := "systemctl daemon-reload && systemctl enable --now switchboard-connect-helper.service"; !strings.Contains(out.String(), want) || strings.Contains(out.String(), "--user") {
		t.Errorf("the output lacks %q (or names --user):\n%s", want, out.String())
	}
}

// TestConnectExecConcurrency runs two tasks with --concurrency 1 and 2.
// Each command logs its start, waits (up to 1 s) for two starts in the
// log, and logs its end: one at a time, the log alternates; two at a
// time, both start before either ends.
func TestConnectExecConcurrency(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	for concurrency, want := range map[string]string{
		"1": "start end start end",
		"2": "start start end end",
	} {
		t.Run(concurrency, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "log")
			command := fmt.Sprintf(`echo start >> %[1]s
for i in $(seq 20); do [ "$(grep -c start %[1]s)" -ge 2 ] && break; sleep 0.05; done
echo end >> %[1]s`, log)
			handle := "parallel" + concurrency
			id, agentToken, peerToken := connectAgent(t, m, handle)
			startConnect(t, m, id, "--token", agentToken, "--exec", command, "--concurrency", concurrency)

			a := peerSend(t, m, handle, peerToken, "m1", "a", "", false)
			b := peerSend(t, m, handle, peerToken, "m2", "b", "", false)
			// Watch the log rather than poll the tasks, which the
			// server's rate limit would refuse.
			var got string
			testwait.ForErr(t, "both commands to end", func() error {
				data, _ := os.ReadFile(log)
				if got = strings.Join(strings.Fields(string(data)), " "); strings.Count(got, "end") < 2 {
					return fmt.Errorf("the log holds %q", got)
				}
				return nil
			})
			if got != want {
				t.Fatalf("--concurrency %s: got %q, want %q", concurrency, got, want)
			}
			for _, task := range []*peerTask{a, b} {
				waitTask(t, m, handle, peerToken, task.ID, func(t *peerTask) bool { return t.Status.State == "TASK_STATE_COMPLETED" })
			}
		})
	}
}

// requireModes checks that each file exists with its permission bits.
func requireModes(t *testing.T, modes map[string]os.FileMode) {
	t.Helper()
	for path, mode := range modes {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != mode {
			t.Errorf("%s: mode %o, want %o", path, got, mode)
		}
	}
}
