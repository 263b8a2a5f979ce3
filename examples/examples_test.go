// Package examples holds agents written for Switchboard (each in a folder
// of its own, described in README.md) and the test that runs each against
// a real server.
package examples

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/testwait"
)

// server is a switchboard serve process and the binary that runs it.
type server struct {
	bin, data, url string
}

// startServer starts a server of the switchboard binary bin on a free
// loopback port (webhooks may reach loopback: the Python agent is there).
func startServer(t *testing.T, bin string) *server {
	t.Helper()
	s := &server{bin: bin, data: t.TempDir()}
	cmd := exec.Command(s.bin, "--data", s.data, "serve", "--addr", "127.0.0.1:0", "--allow-private-networks", "--log-format", "text")
	stderr, err := cmd.StderrPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	urls := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`msg="switchboard is serving" url=(\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	select {
	case s.url = <-urls:
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not start")
	}
	return s
}

// build builds the commands in dirs with one go build, which builds them
// at the same time, and returns each binary's path by its directory's
// name.
func build(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	out := t.TempDir()
	cmd := exec.Command("go", append([]string{"build", "-o", out + string(filepath.Separator)}, dirs...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", strings.Join(dirs, " "), err, b)
	}
	bins := make(map[string]string)
	for _, dir := range dirs {
		bins[filepath.Base(dir)] = filepath.Join(out, filepath.Base(dir))
	}
	return bins
}

// cli runs the switchboard CLI against s and decodes its JSON answer.
func (s *server) cli(t *testing.T, out any, args ...string) {
	t.Helper()
	cmd := exec.Command(s.bin, append([]string{"--server", s.url, "--data", s.data, "--json"}, args...)...)
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("switchboard %s: %v", strings.Join(args, " "), err)
	}
	if out != nil {
		must(t, json.Unmarshal(b, out))
	}
}

// agent creates an agent with extra flags and returns its id and the
// secret shown once its example needs: a webhook agent's webhook secret,
// any other agent's agent token.
func (s *server) agent(t *testing.T, handle string, flags ...string) (id, secret string) {
	t.Helper()
	var g struct {
		ID            string `json:"id"`
		AgentToken    string `json:"agent_token"`
		WebhookSecret string `json:"webhook_secret"`
	}
	s.cli(t, &g, append([]string{"agent", "create", handle}, flags...)...)
	if g.WebhookSecret != "" {
		return g.ID, g.WebhookSecret
	}
	return g.ID, g.AgentToken
}

// run starts a command until the test ends.
func run(t *testing.T, env []string, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	must(t, cmd.Start())
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s said:\n%s", name, out.String())
		}
	})
}

// waitConnected waits until the agent holds a connection.
func (s *server) waitConnected(t *testing.T, handle string) {
	t.Helper()
	testwait.For(t, handle+" to connect", func() bool {
		var g struct {
			Connected *bool `json:"connected"`
		}
		s.cli(t, &g, "agent", "show", handle)
		return g.Connected != nil && *g.Connected
	})
}

// ask sends text to the agent as a peer (a blocking SendMessage) and
// returns the JSON-RPC answer.
func (s *server) ask(t *testing.T, handle, text string) string {
	t.Helper()
	var tok struct {
		Token string `json:"token"`
	}
	s.cli(t, &tok, "token", "issue", "--agent", handle, "tester")
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": map[string]any{
		"message": map[string]any{"messageId": "m-" + handle, "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}}})
	req, _ := http.NewRequest("POST", s.url+"/a/"+handle, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok.Token)
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// freePort returns a loopback address nobody listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	addr := l.Addr().String()
	must(t, l.Close())
	return addr
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestExamples runs each example against a real server and checks the
// answer a peer gets.
func TestExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the examples")
	}
	bins := build(t, "../cmd/switchboard", "./go-connector", "./a2a-server")
	s := startServer(t, bins["switchboard"])

	t.Run("go-connector", func(t *testing.T) {
		_, token := s.agent(t, "words")
		run(t, []string{"SWITCHBOARD_AGENT_TOKEN=" + token}, bins["go-connector"], "-server", s.url)
		s.waitConnected(t, "words")
		if got := s.ask(t, "words", "one two three four"); !strings.Contains(got, "4 words") || !strings.Contains(got, "TASK_STATE_COMPLETED") {
			t.Fatalf("answer: %s", got)
		}
	})

	t.Run("exec-agent", func(t *testing.T) {
		_, token := s.agent(t, "counter")
		script, err := filepath.Abs("exec-agent/agent.sh")
		must(t, err)
		run(t, []string{"SWITCHBOARD_AGENT_TOKEN=" + token}, s.bin, "--server", s.url, "connect", "--exec", script)
		s.waitConnected(t, "counter")
		if got := s.ask(t, "counter", "hello\nworld"); !strings.Contains(got, "2 line(s), 11 byte(s)") || !strings.Contains(got, "from tester") {
			t.Fatalf("answer: %s", got)
		}
	})

	t.Run("a2a-server", func(t *testing.T) {
		addr := freePort(t)
		run(t, nil, bins["a2a-server"], "-addr", addr)
		testwait.For(t, "the A2A server to serve its card", func() bool {
			resp, err := http.Get("http://" + addr + "/.well-known/agent-card.json")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
		_, token := s.agent(t, "reverser")
		run(t, []string{"SWITCHBOARD_AGENT_TOKEN=" + token}, s.bin, "--server", s.url, "connect", "--forward", "http://"+addr+"/")
		s.waitConnected(t, "reverser")
		if got := s.ask(t, "reverser", "stressed"); !strings.Contains(got, "desserts") {
			t.Fatalf("answer: %s", got)
		}
	})

	t.Run("webhook-python", func(t *testing.T) {
		if _, err := exec.LookPath("python3"); err != nil {
			t.Skip("python3 is not installed")
		}
		addr := freePort(t)
		_, port, _ := net.SplitHostPort(addr)
		_, secret := s.agent(t, "pyhook", "--mode", "webhook", "--endpoint", "http://"+addr)
		run(t, []string{"SWITCHBOARD_WEBHOOK_SECRET=" + secret}, "python3", "webhook-python/agent.py", "--port", port)
		testwait.For(t, "the Python agent to listen", func() bool {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				return false
			}
			c.Close()
			return true
		})
		if got := s.ask(t, "pyhook", "hello"); !strings.Contains(got, "got: hello") {
			t.Fatalf("answer: %s", got)
		}
	})
}
